package handlers

import (
	"errors"
	"fmt"
)

// InputError marks a payload the caller must fix. The server answers it with
// 400 and the message, so a malformed delivery is told apart from a failure
// of ours (500) in the host's logs.
type InputError struct {
	msg string
}

func (e *InputError) Error() string { return e.msg }

// BadInput returns an *InputError; the message should name the field and the
// offending value.
func BadInput(format string, args ...any) error {
	return &InputError{msg: fmt.Sprintf(format, args...)}
}

// Preview shortens a bad value for a BadInput message, so a large payload
// the host sent does not flood the log that reports it.
func Preview(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

// IsBadInput reports whether err (or anything it wraps) is an *InputError.
func IsBadInput(err error) bool {
	var in *InputError
	return errors.As(err, &in)
}
