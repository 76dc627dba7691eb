package app_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/apptest"
	"github.com/hcpops/hcpops/harness/hang"
	"github.com/hcpops/hcpops/harness/store/embedded/embeddedtest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// linesWith are the log lines with msg whose document_id is id ("" for any).
func linesWith(t *testing.T, logs *testsupport.Buffer, msg, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range logLines(t, []byte(logs.String())) {
		if l["msg"] == msg && (id == "" || l["document_id"] == id) {
			out = append(out, l)
		}
	}
	return out
}

// TestOneSickObjectCostsOnlyItsOperation is the soak's finding through the
// real handler: a batch of four cluster creates whose CS calls for one of
// them never answer. The batch used to answer 500, so the host redelivered
// all four for minutes; now it answers 200, the healthy three are
// dispatched once, the sick one is logged once and handed to the tick,
// which makes no CS call for it before its backoff and then dispatches it
// without waiting out the dispatch grace (an hour here).
func TestOneSickObjectCostsOnlyItsOperation(t *testing.T) {
	logs := &testsupport.Buffer{}
	var cs *hang.Proxy
	// The app's time is a manual clock from now (the store's _ts stay on
	// the wall clock); the hung calls' 300ms timeouts are real.
	clk := testsupport.NewClock(time.Now())
	r := apptest.New(t, apptest.Options{Settings: func(simURL string) map[string]string {
		cs = hang.NewProxy(t, simURL)
		return map[string]string{
			"CLUSTERS_SERVICE_URL":     cs.URL,
			"CLUSTERS_SERVICE_TIMEOUT": "300ms",
			"HCPOPS_POLL_BACKOFF_MAX":  "6s", // and so the first backoff
			"HCPOPS_DISPATCH_GRACE":    "1h",
			"HCPOPS_PENDING_ID_GRACE":  "1s",
		}
	}, Logger: slog.New(slog.NewJSONHandler(logs, nil)), Parts: app.Parts{Clock: clk}})
	cs.Hang("'c-hung'", `"c-hung"`) // its adoption search and its POST
	hung := r.SubmitCluster("c-hung")
	batch := []map[string]any{hung}
	for i := range 3 {
		batch = append(batch, r.SubmitCluster(fmt.Sprintf("c-ok-%d", i)))
	}
	hungID := hung["id"].(string)
	posts := func() int { return r.Sim.Ledger().Count("POST", "/api/aro_hcp/v1alpha1/clusters") }
	hasCSID := func(name string) bool {
		return r.ClusterResource(name).ClusterServiceID() != ""
	}

	resp, out := r.Post("/dispatchOperations", hostBatch(t, 0, 5, batch...))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("batch: %d %s, want 200", resp.StatusCode, out)
	}
	if n := posts(); n != 3 {
		t.Fatalf("%d cluster POSTs, want one per healthy cluster", n)
	}
	for i := range 3 {
		if !hasCSID(fmt.Sprintf("c-ok-%d", i)) {
			t.Errorf("c-ok-%d was not dispatched", i)
		}
	}
	handed := linesWith(t, logs, "dispatch failed; the operation is left to the tick", "")
	if len(handed) != 1 || handed[0]["document_id"] != hungID || handed[0]["operation_id"] == nil ||
		handed[0]["cs_call"] != "ListClusters" || handed[0]["next_attempt"] == nil || handed[0]["elapsed"] == nil {
		t.Fatalf("hand-off lines %v, want one naming %s, its operation, the CS call and the next attempt", handed, hungID)
	}
	for _, msg := range []string{"dispatch failed; the batch is retried", "changefeed.batch_given_up"} {
		if l := linesWith(t, logs, msg, ""); len(l) != 0 {
			t.Errorf("%q logged for a batch that succeeded: %v", msg, l)
		}
	}

	// A tick once its pending cluster ID is old enough to retry (1s) but
	// before its backoff (6s) is due keeps away from it: no CS call.
	tick := readFile(t, "../events/testdata/tick.json")
	held := cs.Held()
	clk.Advance(1500 * time.Millisecond)
	resp, out = r.Post("/pollOperations", tick)
	if resp.StatusCode != http.StatusOK || cs.Held() != held || posts() != 3 || hasCSID("c-hung") {
		t.Fatalf("tick before the backoff: %d %s, %d more held requests; want it backed off without CS", resp.StatusCode, out, cs.Held()-held)
	}

	// Once its backoff is due, a tick dispatches it, an hour before the grace ends.
	cs.Heal()
	clk.Advance(6 * time.Second)
	if resp, out := r.Post("/pollOperations", tick); resp.StatusCode != http.StatusOK || !hasCSID("c-hung") {
		t.Fatalf("tick once the backoff is due: %d %s, dispatched %v; want the handed-off operation dispatched", resp.StatusCode, out, hasCSID("c-hung"))
	}
	if n := posts(); n != 4 {
		t.Fatalf("%d cluster POSTs, want 4: each cluster created once", n)
	}
	if l := linesWith(t, logs, "dispatch failed; the operation is left to the tick", hungID); len(l) != 1 {
		t.Errorf("the sick operation was logged %d times, want once", len(l))
	}
}

// TestClustersServiceDownFailsTheBatch: when CS cannot be reached at all
// (a closed port), the batch answers 500 so the host retries it, even
// though CS answered a moment before; the last attempt names what it
// gives up.
func TestClustersServiceDownFailsTheBatch(t *testing.T) {
	logs := &testsupport.Buffer{}
	var cs *hang.Proxy
	r := apptest.New(t, apptest.Options{Settings: func(simURL string) map[string]string {
		cs = hang.NewProxy(t, simURL)
		return map[string]string{"CLUSTERS_SERVICE_URL": cs.URL, "CLUSTERS_SERVICE_TIMEOUT": "2s"}
	}, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if resp, out := r.Post("/dispatchOperations", hostBatch(t, 0, 2, r.SubmitCluster("before"))); resp.StatusCode != http.StatusOK {
		t.Fatalf("batch while CS is up: %d %s", resp.StatusCode, out)
	}
	cs.Close() // connections are refused from now on
	// (A redelivered operation would be deferred to the tick, its pending
	// cluster ID being young, so each attempt carries a new one.)
	var late map[string]any
	for _, retry := range []int{0, 2} {
		late = r.SubmitCluster(fmt.Sprintf("while-down-%d", retry))
		if resp, out := r.Post("/dispatchOperations", hostBatch(t, retry, 2, late)); resp.StatusCode != http.StatusInternalServerError {
			t.Fatalf("attempt %d while CS is down: %d %s, want 500", retry, resp.StatusCode, out)
		}
	}
	g := linesWith(t, logs, "changefeed.batch_given_up", "")
	if len(g) != 1 {
		t.Fatalf("given-up lines %v, want one, on the last attempt", g)
	}
	if ids, _ := g[0]["document_ids"].([]any); len(ids) != 1 || ids[0] != late["id"] {
		t.Fatalf("given-up lines %v, want one naming %v", g, late["id"])
	}
	if l := linesWith(t, logs, "dispatch failed; the operation is left to the tick", ""); len(l) != 0 {
		t.Errorf("an unreachable CS was blamed on one object: %v", l)
	}
}

// throttledStore is the embedded store answering every replace of one
// document as a throttled Cosmos DB would, once armed.
type throttledStore struct {
	store.Store
	armed atomic.Bool
	id    string
}

var errThrottled = errors.New("cosmos: 429 Too Many Requests: request rate is large")

func (s *throttledStore) Replace(ctx context.Context, pk, id string, doc []byte, ifMatch string) (store.Item, error) {
	if s.armed.Load() && id == s.id {
		return store.Item{}, fmt.Errorf("replacing %s: %w", id, errThrottled)
	}
	return s.Store.Replace(ctx, pk, id, doc, ifMatch)
}

// TestStoreFailureFailsTheBatch: a store write that fails for one
// operation fails the batch even though CS and the other operations are
// fine: a store in trouble is a dependency as a whole, and the host's
// retry is what gets the operation through.
func TestStoreFailureFailsTheBatch(t *testing.T) {
	st := embeddedtest.Open(t)
	ts := &throttledStore{Store: st, id: document.CosmosID(clusterRID("c-throttled"))}
	r := apptest.New(t, apptest.Options{Logger: slog.New(slog.DiscardHandler), Parts: app.Parts{Store: ts}})
	ok1, bad, ok2 := r.SubmitCluster("c-ok-1"), r.SubmitCluster("c-throttled"), r.SubmitCluster("c-ok-2")
	ts.armed.Store(true)
	resp, out := r.Post("/dispatchOperations", hostBatch(t, 0, 5, ok1, bad, ok2))
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("batch with a throttled store write: %d %s, want 500", resp.StatusCode, out)
	}
	if n := r.Sim.Ledger().Count("POST", "/api/aro_hcp/v1alpha1/clusters"); n != 2 || r.ClusterResource("c-ok-1").ClusterServiceID() == "" {
		t.Fatalf("%d cluster POSTs, want the 2 healthy ones dispatched beside the failure", n)
	}
	// The host's retry, with the store recovered, finishes the job.
	ts.armed.Store(false)
	if resp, out := r.Post("/dispatchOperations", hostBatch(t, 1, 5, ok1, bad, ok2)); resp.StatusCode != http.StatusOK {
		t.Fatalf("retry after the store recovered: %d %s", resp.StatusCode, out)
	}
	if r.ClusterResource("c-throttled").ClusterServiceID() == "" {
		t.Fatal("the retry did not dispatch the throttled operation")
	}
}

func clusterRID(name string) string {
	return "/subscriptions/" + sub + "/resourceGroups/myRG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name
}
