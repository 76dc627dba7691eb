package devhost

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/testsupport"
)

// Warnings reach the terminal through the log, under their operation,
// whatever the log level; an unchanged one is folded for a minute and
// then printed again with how often it recurred.
func TestEventsReachTheTerminal(t *testing.T) {
	var out, logs syncBuffer
	clk := testsupport.NewClock(time.Date(2026, 3, 14, 10, 0, 0, 0, time.Local))
	tr := newTracker(nil, &out, clk, "")
	ev := &events{}
	logger := slog.New(ev.handler(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError})))
	op := logger.With("operation_id", "op-1", "resource_id", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1", "request", "Create")
	op.Warn("dispatch failed; the operation is left to the tick", "error", "CS said 400", "next_attempt", "2026-03-14T10:00:10Z")
	ev.attach(tr.onEvent) // lines before the tracker are held, then shown
	for i := 0; i < 5; i++ {
		clk.Advance(10 * time.Second)
		op.Warn("dispatch failed; the operation is left to the tick", "error", "CS said 400")
	}
	clk.Advance(20 * time.Second)
	op.Warn("dispatch failed; the operation is left to the tick", "error", "CS said 400")
	op.Info("dispatch deferred", "reason", "parent cluster c1 is not in clusters service yet")
	logger.Warn("caller check is off") // about no operation: dev.log only
	logger.Error("skipping a malformed operation document", "document_id", "doc-9", "error", "bad status")
	logger.WithGroup("g").Warn("notification.attempt", "operation_id", "op-2")
	op.Warn("operation.stuck", "status", "Provisioning", "seconds_since_start", 1260.4, "threshold_seconds", 1200.0,
		"deadline", time.Now().Add(37*time.Minute+20*time.Second).UTC().Format(time.RFC3339))
	op.Warn("Request for method POST and URL 'http://127.0.0.1:1/api/clusters_mgmt/v1/clusters' failed with code 503, will try again", "source", "ocm-sdk")
	logger.Warn("Request for method GET and URL 'http://127.0.0.1:1/api/clusters_mgmt/v1/clusters?search=x' failed with code 503, will try again", "source", "ocm-sdk")
	for _, l := range strings.Split(out.String(), "\n") {
		if len(l) > ScreenWidth {
			t.Errorf("a line of %d columns, wider than %d:\n%s", len(l), ScreenWidth, l)
		}
	}
	lines := strings.Split(strings.TrimSpace(Unwrap(out.String())), "\n")
	want := []string{
		"op-1 Create cluster c1 retrying: dispatch failed; the operation is left to the tick: CS said 400 \\(next attempt \\d\\d:00:10\\)$",
		"op-1 .*retrying: dispatch failed; the operation is left to the tick: CS said 400 \\(5 more since 10:00:00\\)$",
		"op-1 .*waiting: dispatch deferred: parent cluster c1 is not in clusters service yet$",
		"\\(document\\) +doc-9 .*skipped: skipping a malformed operation document: bad status$",
		"op-1 .*STUCK: Provisioning for 21m, past its 20m threshold \\(HCPOPS_STUCK_AFTER\\); fails in 37m \\(\\d\\d:\\d\\d:\\d\\d\\)$",
		"op-1 .*retrying: Request for method POST .* failed with code 503, will try again$",
		"\\(cs client\\) - +retrying: Request for method GET .* failed with code 503, will try again$",
	}
	if len(lines) != len(want) {
		t.Fatalf("terminal:\n%s\nwant %d lines", out.String(), len(want))
	}
	for i, re := range want {
		if !regexpMatch(re, lines[i]) {
			t.Errorf("line %d = %q, want %s", i, lines[i], re)
		}
	}
	// The log itself keeps its level: only the Error reached it.
	if n := strings.Count(logs.String(), "\n"); n != 1 || !strings.Contains(logs.String(), "doc-9") {
		t.Errorf("log at level error has %d lines:\n%s", n, logs.String())
	}
	if !ev.handler(slog.DiscardHandler).Enabled(context.Background(), slog.LevelWarn) {
		t.Error("warnings must reach the terminal even when the log drops them")
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }
