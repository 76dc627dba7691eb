package apptest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/testsupport"
)

// RecordLog collects the JSON lines the production logger writes, both
// streams in one, in order.
type RecordLog struct {
	testsupport.Buffer
}

// Records is every line written, decoded, in order.
func (l *RecordLog) Records(t testing.TB) []map[string]any {
	t.Helper()
	return DecodeLines(t, l.String())
}

// DecodeLines decodes JSON log lines; a line that is not JSON fails t.
func DecodeLines(t testing.TB, written string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(written), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// Named waits (an invocation's line is written as its response goes out)
// until at least n records named msg were written, and returns them.
func (l *RecordLog) Named(t testing.TB, msg string, n int) []map[string]any {
	t.Helper()
	var got []map[string]any
	l.Await(t, fmt.Sprintf("%d %q records", n, msg), func(written string) bool {
		got = got[:0]
		for _, r := range DecodeLines(t, written) {
			if r["msg"] == msg {
				got = append(got, r)
			}
		}
		return len(got) >= n
	})
	return got
}

// MsgIn reports whether rec is one of the named records.
func MsgIn(rec map[string]any, names ...string) bool { return slices.Contains(names, Str(rec, "msg")) }

// Str is rec's string attribute k ("" when not a string).
func Str(rec map[string]any, k string) string { s, _ := rec[k].(string); return s }

// Num is rec's number attribute k (0 when not a number).
func Num(rec map[string]any, k string) float64 {
	n, _ := rec[k].(float64)
	return n
}

// At is when rec was written.
func At(rec map[string]any) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, Str(rec, "time"))
	return t
}

// Latest is when the last of recs was written.
func Latest(recs []map[string]any) time.Time {
	var l time.Time
	for _, r := range recs {
		if t := At(r); t.After(l) {
			l = t
		}
	}
	return l
}
