package devhost

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/store/memory"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// The log is quicker than the change feed: a warning about a node pool
// (dispatch deferred) can come before the feed shows the node pool. The
// terminal prints the operation's first line (- -> Accepted) first, then
// the warning; a line about an operation the feed never shows is printed
// anyway once it has waited holdFor.
func TestEventsFollowTheirOperationsFirstLine(t *testing.T) {
	ctx := context.Background()
	clk := testsupport.NewClock(time.Date(2026, 3, 14, 10, 0, 0, 0, time.Local))
	mem := memory.New(memory.WithClock(clk))
	var out syncBuffer
	tr := newTracker(mem, &out, clk, "")
	if err := tr.start(ctx); err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	ev.attach(tr.onEvent)
	logger := slog.New(ev.handler(slog.DiscardHandler))

	const sub = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	cluster := "/subscriptions/" + sub + "/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1"
	fe := frontend.New(mem, clk, uuid.NewString)
	if _, err := fe.PutCluster(ctx, cluster, frontend.ClusterSpec{Location: "eastus", VersionID: "4.20"}, frontend.Options{Location: "eastus"}); err != nil {
		t.Fatal(err)
	}
	np, err := fe.PutNodePool(ctx, cluster+"/nodePools/np1", frontend.NodePoolSpec{VersionID: "4.20.8", ChannelGroup: "stable", VMSize: "Standard_D8s_v3", Replicas: 2, AutoRepair: true}, frontend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	name := np.Operation.Name()
	// The dispatcher's line, before the tracker has read the feed.
	logger.Info("dispatch deferred", "operation_id", name, "request", "Create", "resource_id", cluster+"/nodePools/np1",
		"reason", "parent cluster c1 is not in clusters service yet")
	logger.Warn("dispatch failed; the operation is left to the tick", "operation_id", "never-written", "error", "gone")
	if got := out.String(); strings.Contains(got, "dispatch deferred") {
		t.Fatalf("the warning printed before its operation's first line:\n%s", got)
	}
	if err := tr.poll(ctx); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(Unwrap(out.String())), "\n")
	accepted, deferred := -1, -1
	for i, l := range lines {
		switch {
		case strings.Contains(l, name) && strings.Contains(l, "- -> Accepted"):
			accepted = i
		case strings.Contains(l, name) && strings.Contains(l, "waiting: dispatch deferred"):
			deferred = i
		}
	}
	if accepted < 0 || deferred < 0 || deferred < accepted {
		t.Errorf("node pool lines: Accepted at %d, deferred at %d; want Accepted first:\n%s", accepted, deferred, out.String())
	}
	if strings.Contains(out.String(), "never-written") {
		t.Errorf("a line about an operation not yet seen printed before holdFor:\n%s", out.String())
	}
	clk.Advance(holdFor)
	if err := tr.poll(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "never-written") {
		t.Errorf("a line about an operation the feed never shows was not printed after holdFor:\n%s", out.String())
	}
}

// A delivered ARM notification reaches the terminal, under its operation:
// a person sees ARM told, not only the failures.
func TestDeliveredNotificationReachesTheTerminal(t *testing.T) {
	var out syncBuffer
	clk := testsupport.NewClock(time.Date(2026, 3, 14, 10, 0, 0, 0, time.Local))
	tr := newTracker(nil, &out, clk, "")
	ev := &events{}
	ev.attach(tr.onEvent)
	logger := slog.New(ev.handler(slog.DiscardHandler))
	logger.Info("notification.attempt", "operation_id", "op-1", "request", "Create", "outcome", "delivered", "attempt", 1, "host", "127.0.0.1:4242")
	logger.Info("operation.transition", "operation_id", "op-1", "from", "Accepted", "to", "Provisioning") // the feed shows these
	got := strings.TrimSpace(Unwrap(out.String()))
	if !strings.Contains(got, "op-1") || !strings.Contains(got, "notification delivered: attempt 1 to 127.0.0.1:4242") || strings.Count(got, "\n") != 0 {
		t.Errorf("terminal:\n%s\nwant one line: the delivered notification", out.String())
	}
}
