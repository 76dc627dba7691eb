package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/csfake"
	"github.com/hcpops/hcpops/harness/hang"
)

// hungCallTimeout is the CS timeout of the hang tests. The tests that
// meet it run in a synctest bubble, so a hung call costs it in fake time
// only; a healthy call to the fake takes no time at all.
const hungCallTimeout = 2 * time.Second

// throughProxy points the engine at CS with the client settings
// (no SDK retries, a per-call timeout) and returns what hangs its
// requests about a key. A hung request waits for the call's context.
func (e *env) throughProxy(t testing.TB, timeout time.Duration) *hang.Set {
	t.Helper()
	e.cs = e.fake.NewClient(csfake.Config{RetryLimit: 0, Timeout: timeout, Recorder: e.calls})
	e.engine = e.newEngine(t)
	return e.fake.Hangs
}

// inBubble runs f in a synctest bubble: its goroutines' timers (the CS
// timeout, a tick's budget) run on a fake clock that jumps whenever every
// goroutine in it waits, so a test meets a timeout in no real time. The
// env must be made inside, by f.
func inBubble(t *testing.T, f func(t *testing.T)) { synctest.Test(t, f) }

// tickWithin runs one tick bounded by budget, as the poll function does;
// a tick stopped at its budget is not a failure.
func (e *env) tickWithin(t testing.TB, budget time.Duration) TickResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	res, err := e.engine.Tick(ctx)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Tick: %v", err)
	}
	return res
}

// streamOrder is the operations' names in the order a tick meets them.
func (e *env) streamOrder(t testing.TB) []string {
	t.Helper()
	var names []string
	q := store.ActiveOperationsQuery{PageSize: 100}
	err := e.store.ActiveOperations(context.Background(), q, func(items []store.Item) error {
		for _, it := range items {
			op, err := document.ParseOperation(it.Body)
			if err != nil {
				return err
			}
			names = append(names, op.Name())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("streaming active operations: %v", err)
	}
	return names
}

// dispatchedClusters creates n clusters, dispatches them through the
// change feed and lets CS make them ready. It returns the operation names
// in stream order and the CS ID of each one's cluster.
func (e *env) dispatchedClusters(t testing.TB, prefix string, n int) ([]string, map[string]string) {
	t.Helper()
	return e.dispatchedClustersAfter(t, prefix, n, 5*time.Minute)
}

// dispatchedClustersAfter is dispatchedClusters with the clock advanced by
// after once they are dispatched.
func (e *env) dispatchedClustersAfter(t testing.TB, prefix string, n int, after time.Duration) ([]string, map[string]string) {
	t.Helper()
	rids := map[string]string{}
	for i := range n {
		rid := clusterRID(fmt.Sprintf("%s-%d", prefix, i))
		rids[e.create(t, document.KindCluster, rid, request{})] = rid
	}
	if _, err := e.deliver(t); err != nil {
		t.Fatalf("dispatch: %v", err)
	}
	e.clk.Advance(after)
	csIDs := map[string]string{}
	var order []string
	for _, name := range e.streamOrder(t) {
		rid, ok := rids[name]
		if !ok {
			continue
		}
		href := e.resource(t, rid).ClusterServiceID()
		if href == "" {
			t.Fatalf("cluster %s was not dispatched", rid)
		}
		csIDs[name] = href[strings.LastIndex(href, "/")+1:]
		order = append(order, name)
	}
	return order, csIDs
}

// logLines are the engine's log lines with msg that name operation name.
func (e *env) logLines(msg, name string) []string {
	var out []string
	for _, l := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(l, "msg=\""+msg+"\"") && strings.Contains(l, "operation_id="+name) {
			out = append(out, l)
		}
	}
	return out
}
