package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/logging"
)

// TestOneLinePerInvocation: an invocation writes exactly one line, named
// by the Summary its function returned, carrying its attributes, the status, the
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
			return Result{Summary: Summary{Msg: "thing.done", Level: slog.LevelInfo, Attrs: []slog.Attr{slog.Int("things", 3)}}}, nil
		}, "thing.done", "INFO", ""},
		{"not summarized", func(ctx context.Context, inv Invocation) (Result, error) {
			return Result{}, nil
		}, MsgInvocation, "INFO", ""},
		{"failed after summarizing", func(ctx context.Context, inv Invocation) (Result, error) {
			return Result{Summary: Summary{Msg: "thing.done", Level: slog.LevelInfo, Attrs: []slog.Attr{slog.Int("things", 3)}}}, errors.New("store down")
		}, "thing.done", "ERROR", "store down"},
		{"bad input", func(ctx context.Context, inv Invocation) (Result, error) {
			return Result{}, events.Malformed("Data.x is a number")
		}, MsgInvocation, "WARN", "Data.x is a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logger, logs := newTestLogger()
			s := New(Config{}, logger)
			_ = s.Handle("f", tc.fn)
			ts := httptest.NewServer(s)
			do(t, ts, http.MethodPost, "/f", strings.NewReader(`{"Data":{}}`), http.Header{events.HeaderInvocationID: {"inv-1"}})
			ts.Close()
			lines := logs.lines(t)
			if len(lines) != 1 {
				t.Fatalf("%d lines, want 1: %v", len(lines), lines)
			}
			l := lines[0]
			if l["msg"] != tc.wantMsg || l["level"] != tc.wantLevel || l[logging.AttrInvocationID] != "inv-1" || l[logging.AttrFunction] != "f" {
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
