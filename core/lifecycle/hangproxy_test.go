package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/internal/testsupport"
)

// hungCallTimeout is the CS timeout of the hang tests. A healthy call to
// the simulator has to finish within it on a loaded 2-core machine, so it
// is generous; each hung call costs a test this much real time.
const hungCallTimeout = 2 * time.Second

// throughProxy points the engine at CS through a hang proxy, with the
// issue's client settings: no SDK retries and a per-call timeout.
func (e *env) throughProxy(t testing.TB, timeout time.Duration) *testsupport.HangProxy {
	t.Helper()
	p := testsupport.NewHangProxy(t, e.simURL)
	c, err := ocm.New(context.Background(), ocm.Config{URL: p.URL, RetryLimit: 0, Timeout: timeout, Recorder: e.calls}, nil)
	if err != nil {
		t.Fatalf("ocm client: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	e.cs = c
	e.engine = e.newEngine(t)
	return p
}

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
