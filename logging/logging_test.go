package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestParseLevel(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    slog.Level
		wantErr bool
	}{
		{"", slog.LevelInfo, false},
		{"info", slog.LevelInfo, false},
		{" DEBUG ", slog.LevelDebug, false},
		{"warn", slog.LevelWarn, false},
		{"Warning", slog.LevelWarn, false},
		{"error", slog.LevelError, false},
		{"verbose", 0, true},
	} {
		got, err := ParseLevel(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && (!strings.Contains(err.Error(), EnvLevel) || !strings.Contains(err.Error(), tc.in)) {
			t.Errorf("error %q does not name the setting and value", err)
		}
	}
}

func lines(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// TestStreamsSplitByLevel: Debug and Info on stdout, Warn and Error on
// stderr, through attributes and groups, honouring the level.
func TestStreamsSplitByLevel(t *testing.T) {
	for _, tc := range []struct {
		level                slog.Level
		wantStdout, wantErrs []string
	}{
		{slog.LevelDebug, []string{"d", "i"}, []string{"w", "e"}},
		{slog.LevelInfo, []string{"i"}, []string{"w", "e"}},
		{slog.LevelWarn, nil, []string{"w", "e"}},
		{slog.LevelError, nil, []string{"e"}},
	} {
		t.Run(tc.level.String(), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			l := slog.New(Streams(&stdout, &stderr, "json", tc.level)).With("k", "v").WithGroup("g")
			ctx := WithInvocationID(context.Background(), "inv")
			l.DebugContext(ctx, "d")
			l.InfoContext(ctx, "i")
			l.WarnContext(ctx, "w")
			l.ErrorContext(ctx, "e")
			for _, side := range []struct {
				name string
				buf  *bytes.Buffer
				want []string
			}{{"stdout", &stdout, tc.wantStdout}, {"stderr", &stderr, tc.wantErrs}} {
				var got []string
				for _, line := range lines(t, side.buf) {
					got = append(got, line["msg"].(string))
					if line["k"] != "v" || line["g"].(map[string]any)[AttrInvocationID] != "inv" {
						t.Errorf("%s line lost its attributes: %v", side.name, line)
					}
				}
				if strings.Join(got, ",") != strings.Join(side.want, ",") {
					t.Errorf("%s got %v, want %v", side.name, got, side.want)
				}
			}
		})
	}
}

// TestInvocationOnEveryLine: a line logged with an invocation's context
// names it once, however often the handler was wrapped; other lines name
// nothing.
func TestInvocationOnEveryLine(t *testing.T) {
	var buf bytes.Buffer
	l := Logger(Logger(slog.New(Handler(slog.NewJSONHandler(&buf, nil)))))
	ctx := WithFunction(WithInvocationID(context.Background(), "inv-1"), "pollOperations")
	l.InfoContext(ctx, "with")
	l.Info("without")
	l.InfoContext(WithInvocationID(ctx, "inv-2"), "again")
	got := lines(t, &buf)
	if len(got) != 3 {
		t.Fatalf("got %d lines: %s", len(got), buf.String())
	}
	if got[0][AttrInvocationID] != "inv-1" || got[0][AttrFunction] != "pollOperations" {
		t.Errorf("line with the context: %v", got[0])
	}
	if _, ok := got[1][AttrInvocationID]; ok {
		t.Errorf("line without a context names an invocation: %v", got[1])
	}
	if got[2][AttrInvocationID] != "inv-2" || got[2][AttrFunction] != "pollOperations" {
		t.Errorf("a later id replaces the earlier, the function stays: %v", got[2])
	}
	if n := strings.Count(buf.String(), AttrInvocationID); n != 2 {
		t.Errorf("%s written %d times in two lines: wrapping twice must not add it twice", AttrInvocationID, n)
	}
	if InvocationID(ctx) != "inv-1" || InvocationID(context.Background()) != "" {
		t.Error("InvocationID does not read what WithInvocationID stored")
	}
	Logger(nil).Info("discarded") // a nil logger is one that discards

	// hcpopsctl dev taps its log with a handler of its own around this one,
	// and the functions wrap what they are given again: the id once.
	buf.Reset()
	tapped := Logger(slog.New(passThrough{Handler(slog.NewJSONHandler(&buf, nil))}))
	tapped.InfoContext(ctx, "tapped")
	if n := strings.Count(buf.String(), AttrInvocationID); n != 1 || strings.Count(buf.String(), `"function"`) != 1 {
		t.Errorf("a wrap around another handler around this one: %s", buf.String())
	}
}

// passThrough is a handler that wraps another, as hcpopsctl dev's tap does.
type passThrough struct{ slog.Handler }

func (p passThrough) WithAttrs(a []slog.Attr) slog.Handler {
	return passThrough{p.Handler.WithAttrs(a)}
}

func TestMillis(t *testing.T) {
	if got := Millis(1500 * time.Microsecond); got != 1.5 {
		t.Errorf("Millis(1.5ms) = %v", got)
	}
	if got := Millis(1500 * time.Nanosecond); got != 0.001 {
		t.Errorf("Millis(1.5µs) = %v, want microsecond precision", got)
	}
}
