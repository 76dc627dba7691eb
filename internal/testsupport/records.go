package testsupport

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// Records collects the slog JSON lines a server writes, so a test can check
// the one summary line an invocation logs. It is an io.Writer safe for the
// server's goroutines.
type Records struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *Records) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

// Wait returns the first record named msg. A server writes its line as the
// response goes out, so the test polls with a generous deadline rather than
// racing it.
func (r *Records) Wait(t testing.TB, msg string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if m := r.find(msg); m != nil {
			return m
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t.Fatalf("no %q record in:\n%s", msg, r.buf.String())
	return nil
}

func (r *Records) find(msg string) map[string]any {
	r.mu.Lock()
	lines := strings.Split(strings.TrimSpace(r.buf.String()), "\n")
	r.mu.Unlock()
	for _, line := range lines {
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
