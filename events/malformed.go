package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MalformedError is a payload its sender must fix. The handler answers it
// with 400 and the message, so a malformed delivery is told apart from a
// failure of ours (500) in the host's logs.
type MalformedError struct {
	msg string
}

func (e *MalformedError) Error() string { return e.msg }

// Malformed returns a *MalformedError; the message should name the field
// and the offending value.
func Malformed(format string, args ...any) error {
	return &MalformedError{msg: fmt.Sprintf(format, args...)}
}

// IsMalformed reports whether err (or anything it wraps) is a
// *MalformedError.
func IsMalformed(err error) bool {
	var m *MalformedError
	return errors.As(err, &m)
}

// Preview shortens a bad value for a message, so a large payload does not
// flood the log that reports it.
func Preview(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

// Kind names the kind of a JSON value from its first byte: "object",
// "array", "string", "number", "boolean", "null", or "" when empty. It does
// not validate; use it on values already parsed by encoding/json.
func Kind(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// Describe names a value's kind with its article, for messages: "an
// object", "a string", "null", "nothing".
func Describe(raw json.RawMessage) string {
	switch k := Kind(raw); k {
	case "object", "array":
		return "an " + k
	case "null":
		return "null"
	case "":
		return "nothing"
	default:
		return "a " + k
	}
}
