package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/apptest"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
	"github.com/hcpops/hcpops/harness/simulator"
)

// hostBatch renders docs as the Functions host posts a change-feed batch,
// with a RetryContext when retry >= 0.
func hostBatch(t *testing.T, retry, maxRetry int, docs ...map[string]any) []byte {
	t.Helper()
	var items []store.Item
	for _, d := range docs {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, store.Item{Body: b})
	}
	documents, err := triggerhost.EncodeDocuments(items)
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]any{"sys": map[string]any{"MethodName": "dispatchOperations"}}
	if retry >= 0 {
		meta["RetryContext"] = map[string]any{"RetryCount": retry, "MaxRetryCount": maxRetry, "Exception": nil}
	}
	body, err := json.Marshal(map[string]any{"Data": map[string]any{"documents": documents}, "Metadata": meta})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// TestUnaddressableDocumentsAreSkipped: a batch with operation documents
// whose id or partitionKey no store accepts used to fail every delivery
// with a 500, so the host retried it until it skipped the good ones too. Now the good ones are dispatched, the bad ones are
// logged with their ids and skipped, the answer is 200 and nothing is
// written for the bad ones.
func TestUnaddressableDocumentsAreSkipped(t *testing.T) {
	r := apptest.New(t, apptest.Options{})
	good1, good2 := r.SubmitCluster("good-1"), r.SubmitCluster("good-2")
	// The bad ones are copies of a live operation, so only their address is wrong.
	template := r.SubmitCluster("target")
	bad := func(edit func(map[string]any)) map[string]any {
		d := map[string]any{}
		for k, v := range template {
			d[k] = v
		}
		edit(d)
		return d
	}
	bads := []map[string]any{
		bad(func(d map[string]any) { d["id"] = "" }),
		bad(func(d map[string]any) { delete(d, "id") }),
		bad(func(d map[string]any) { d["id"] = "bad\x00id" }),
		bad(func(d map[string]any) { d["id"] = "bad/id" }),
		bad(func(d map[string]any) { d["id"] = `bad\id` }),
		bad(func(d map[string]any) { d["id"] = "bad?id" }),
		bad(func(d map[string]any) { d["id"] = "bad#id" }),
		bad(func(d map[string]any) { d["id"] = strings.Repeat("x", 256) }),
		bad(func(d map[string]any) { d["partitionKey"] = "" }),
		bad(func(d map[string]any) { delete(d, "partitionKey") }),
		bad(func(d map[string]any) { d["partitionKey"] = sub + "\x00" }),
	}
	cursor := feedCursor(t, r.App.Store)
	batch := append([]map[string]any{good1}, bads...)
	batch = append(batch, good2)

	// Twice: a redelivery (and the host's last attempt) is answered the same way.
	for attempt := 0; attempt < 2; attempt++ {
		resp, out := r.Post("/dispatchOperations", hostBatch(t, attempt*5, 5, batch...))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("attempt %d: %d %s, want 200", attempt, resp.StatusCode, out)
		}
		rec := r.Logs.Named(t, "dispatch.batch", attempt+1)[attempt]
		if attempt == 0 && (rec["dispatched"] != 2.0 || rec["skipped"] != 11.0) {
			t.Fatalf("batch record %v, want dispatched=2 skipped=11", rec)
		}
	}
	if n := r.Sim.Ledger().Count("POST", "/api/aro_hcp/v1alpha1/clusters"); n != 2 {
		t.Fatalf("%d cluster POSTs, want 2 (the good operations only)", n)
	}
	// Everything written since the cursor belongs to the good operations' clusters.
	allowed := map[string]bool{}
	for _, g := range []map[string]any{good1, good2} {
		ext := g["properties"].(map[string]any)["externalId"].(string)
		allowed[document.CosmosID(ext)] = true
	}
	page, err := r.App.Store.ChangeFeed(context.Background(), cursor, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range page.Items {
		var d struct{ ID string }
		_ = json.Unmarshal(it.Body, &d)
		if !allowed[d.ID] {
			t.Errorf("document %s was written; only the good operations' clusters should be", d.ID)
		}
	}
	if len(page.Items) == 0 {
		t.Fatal("nothing written: the good operations were not dispatched")
	}
	// Each bad document is named in an Error line (per delivery), and no
	// batch was given up.
	lines := r.Logs.Records(t)
	skipped := 0
	for _, l := range lines {
		if l["msg"] == "skipping an operation document that cannot be addressed" && l["level"] == "ERROR" {
			skipped++
			if _, ok := l["document_id"]; !ok {
				t.Errorf("skip line without document_id: %v", l)
			}
		}
		if l["msg"] == "changefeed.batch_given_up" {
			t.Errorf("a batch that answered 200 was logged as given up: %v", l)
		}
	}
	if skipped != 2*len(bads) {
		t.Errorf("%d skip lines, want %d (one per bad document per delivery)", skipped, 2*len(bads))
	}
}

// TestTransientFailureRetriesThenGivesUp: a throttled Clusters Service is
// transient, so the batch answers 500 for the host to retry; on the last
// attempt the ids being given up are logged at Error under a stable name.
// (A retry of the same operation is deferred to the tick, since its pending
// cluster ID may still be in flight, so each attempt here is a new one.)
func TestTransientFailureRetriesThenGivesUp(t *testing.T) {
	r := apptest.New(t, apptest.Options{})
	first, last := r.SubmitCluster("throttled-1"), r.SubmitCluster("throttled-2")
	garbage := map[string]any{}
	for k, v := range last {
		garbage[k] = v
	}
	garbage["partitionKey"] = ""
	if err := r.Sim.SetFaults(simulator.Faults{ThrottleRate: 1}); err != nil {
		t.Fatal(err)
	}
	givenUp := func() []map[string]any {
		var out []map[string]any
		for _, l := range r.Logs.Records(t) {
			if l["msg"] == "changefeed.batch_given_up" {
				out = append(out, l)
			}
		}
		return out
	}
	// A first attempt that fails: 500, and the host will retry, so nothing is given up.
	if resp, out := r.Post("/dispatchOperations", hostBatch(t, 0, 2, first, garbage)); resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("first attempt: %d %s, want 500 while CS throttles", resp.StatusCode, out)
	}
	if g := givenUp(); len(g) != 0 {
		t.Fatalf("given up on a batch the host will retry: %v", g)
	}
	// The last attempt: still 500, and the operation lost is named at Error
	// (the garbage beside it was skipped, not lost).
	if resp, out := r.Post("/dispatchOperations", hostBatch(t, 2, 2, last, garbage)); resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("last attempt: %d %s, want 500 while CS throttles", resp.StatusCode, out)
	}
	g := givenUp()
	if len(g) != 1 {
		t.Fatalf("%d given-up lines, want 1", len(g))
	}
	ids, _ := g[0]["document_ids"].([]any)
	if g[0]["level"] != "ERROR" || len(ids) != 1 || ids[0] != last["id"] || g[0]["retry_count"] != 2.0 {
		t.Fatalf("given-up line %v, want ERROR naming only %v at retry 2", g[0], last["id"])
	}
	// Once CS recovers, a fresh operation goes through with a 200.
	if err := r.Sim.SetFaults(simulator.Faults{}); err != nil {
		t.Fatal(err)
	}
	if resp, out := r.Post("/dispatchOperations", hostBatch(t, -1, 0, r.SubmitCluster("recovered"), garbage)); resp.StatusCode != http.StatusOK {
		t.Fatalf("after recovery: %d %s", resp.StatusCode, out)
	}
}
