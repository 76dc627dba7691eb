package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
		if err != nil && (!strings.Contains(err.Error(), EnvLogLevel) || !strings.Contains(err.Error(), tc.in)) {
			t.Errorf("error %q does not name the setting and value", err)
		}
	}
}

// TestStreamHandlerSplitsByLevel: Debug and Info on stdout, Warn and Error
// on stderr, through attributes and groups, honouring the level.
func TestStreamHandlerSplitsByLevel(t *testing.T) {
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
			var stdout, stderr logBuffer
			l := slog.New(StreamHandler(&stdout, &stderr, "json", tc.level)).With("k", "v").WithGroup("g")
			ctx := WithInvocationID(context.Background(), "inv")
			l.DebugContext(ctx, "d")
			l.InfoContext(ctx, "i")
			l.WarnContext(ctx, "w")
			l.ErrorContext(ctx, "e")
			for _, side := range []struct {
				name string
				buf  *logBuffer
				want []string
			}{{"stdout", &stdout, tc.wantStdout}, {"stderr", &stderr, tc.wantErrs}} {
				var got []string
				for _, line := range side.buf.lines(t) {
					got = append(got, line["msg"].(string))
					if line["k"] != "v" || line["g"].(map[string]any)[LogAttrInvocationID] != "inv" {
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

// TestOneLinePerInvocation: an invocation writes exactly one line, named
// by the function's Summarize, carrying its attributes, the status, the
// duration and (on failure) the error, at a level that says how it went.
func TestOneLinePerInvocation(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fn        InvocationFunc
		wantMsg   string
		wantLevel string
		wantErr   string
	}{
		{"summarized", func(ctx context.Context, inv Invocation) (Result, error) {
			Summarize(ctx, nil, slog.LevelInfo, "thing.done", slog.Int("things", 3))
			return Result{}, nil
		}, "thing.done", "INFO", ""},
		{"not summarized", func(ctx context.Context, inv Invocation) (Result, error) {
			return Result{}, nil
		}, MsgInvocation, "INFO", ""},
		{"failed after summarizing", func(ctx context.Context, inv Invocation) (Result, error) {
			Summarize(ctx, nil, slog.LevelInfo, "thing.done", slog.Int("things", 3))
			return Result{}, errors.New("store down")
		}, "thing.done", "ERROR", "store down"},
		{"bad input", func(ctx context.Context, inv Invocation) (Result, error) {
			return Result{}, BadInput("Data.x is a number")
		}, MsgInvocation, "WARN", "Data.x is a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logger, logs := newTestLogger()
			s := New(Config{}, logger)
			_ = s.Handle("f", tc.fn)
			ts := httptest.NewServer(s)
			do(t, ts, http.MethodPost, "/f", strings.NewReader(`{"Data":{}}`), http.Header{HeaderInvocationID: {"inv-1"}})
			ts.Close()
			lines := logs.lines(t)
			if len(lines) != 1 {
				t.Fatalf("%d lines, want 1: %v", len(lines), lines)
			}
			l := lines[0]
			if l["msg"] != tc.wantMsg || l["level"] != tc.wantLevel || l[LogAttrInvocationID] != "inv-1" || l[LogAttrFunction] != "f" {
				t.Errorf("line = %v; want msg %s level %s", l, tc.wantMsg, tc.wantLevel)
			}
			if _, ok := l["duration_ms"].(float64); !ok || l["status"] == nil {
				t.Errorf("line lacks status or duration_ms: %v", l)
			}
			if got, _ := l["error"].(string); !strings.Contains(got, tc.wantErr) || (tc.wantErr == "") != (got == "") {
				t.Errorf("error = %q, want %q", got, tc.wantErr)
			}
			if tc.wantMsg == "thing.done" && l["things"] != float64(3) {
				t.Errorf("summary attributes lost: %v", l)
			}
		})
	}
}

// TestSummarizeOutsideAServer writes the line at once.
func TestSummarizeOutsideAServer(t *testing.T) {
	logger, logs := newTestLogger()
	Summarize(context.Background(), logger, slog.LevelInfo, "thing.done", slog.Int("things", 1))
	if lines := logs.lines(t); len(lines) != 1 || lines[0]["msg"] != "thing.done" {
		t.Errorf("lines = %v", lines)
	}
}
