package testsupport

import (
	"encoding/json"
	"strings"
	"testing"
)

// Records collects the slog JSON lines a server writes, so a test can check
// the one summary line an invocation logs. It is an io.Writer safe for the
// server's goroutines.
type Records struct {
	Buffer
}

// Wait returns the first record named msg. A server writes its line as the
// response goes out, so the test waits for the write rather than racing it.
func (r *Records) Wait(t testing.TB, msg string) map[string]any {
	t.Helper()
	var found map[string]any
	r.Await(t, "a "+msg+" record", func(written string) bool {
		found = find(written, msg)
		return found != nil
	})
	return found
}

func find(written, msg string) map[string]any {
	for _, line := range strings.Split(strings.TrimSpace(written), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			return m
		}
	}
	return nil
}

// WantAttrs checks a record's attributes; ints are compared as the float64
// JSON decodes them to, so tables can say 3 rather than 3.0.
func WantAttrs(t testing.TB, rec map[string]any, attrs map[string]any) {
	t.Helper()
	for k, v := range attrs {
		if n, ok := v.(int); ok {
			v = float64(n)
		}
		if rec[k] != v {
			t.Errorf("record %s = %v, want %v (record %v)", k, rec[k], v, rec)
		}
	}
}
