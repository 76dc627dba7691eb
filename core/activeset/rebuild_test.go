package activeset

import (
	"fmt"
	"maps"
	"testing"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// A full read hands Operations the operations it parsed; what a view
// holds from them is what another view, built independently from the
// documents alone, holds: the same operations with the same heads, the
// same resources, and the same after a change both read from the feed.
// (The two rigs have stores of their own holding the same documents, so
// neither build can see the other's.)
func TestRebuildFromParsedOperationsHoldsTheSame(t *testing.T) {
	fromDocs, fromParsed := newRig(t), newRig(t)
	for _, r := range []*rig{fromDocs, fromParsed} {
		r.create(opDoc("a", "one", "Provisioning", ""))
		r.create(opDoc("b", "one", "Succeeded", `,"notificationUri":"https://arm/notify"`))
		r.create(opDoc("c", "two", "Accepted", ""))
		r.create(opDoc("d", "two", "Failed", "")) // terminal, nothing to notify: not held
		r.create(clusterDoc("one", "Provisioning"))
		r.create(clusterDoc("two", "Accepted"))
	}
	docStats := fromDocs.build()

	r := fromParsed
	rb, err := r.view.Begin(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.store.ActiveOperations(r.ctx, store.ActiveOperationsQuery{WithPendingNotification: true, PageSize: 2}, func(items []store.Item) error {
		parsed := make([]Op, len(items))
		var refs []store.DocRef
		for i, it := range items {
			parsed[i].Doc, parsed[i].Err = document.ParseOperation(it.Body)
			if op := parsed[i].Doc; op != nil && !op.Properties.Status.IsTerminal() {
				if ref, ok := resourceOf(op.PartitionKey, op.Properties.ExternalID); ok {
					refs = append(refs, ref)
				}
			}
		}
		rb.Operations(items, parsed)
		got, err := r.store.ReadMany(r.ctx, refs)
		if err != nil {
			return err
		}
		rb.Resources(refs, got, nil)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	parsedStats := rb.Commit()

	// held is what a view hands out of each operation, beyond its status.
	held := func(r *rig) map[string]string {
		out := map[string]string{}
		if err := r.view.Operations(r.ctx, 2, func(ops []Op) error {
			for _, o := range ops {
				if o.Err != nil {
					return o.Err
				}
				p := o.Doc.Properties
				out[o.Doc.Name()] = fmt.Sprintf("%s %s %s notify=%q etag=%t", p.Status, p.Request, p.ExternalID, p.NotificationURI, o.Doc.ETag != "")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	same := func(when string) {
		t.Helper()
		want, got := held(fromDocs), held(fromParsed)
		if len(want) == 0 || !maps.Equal(got, want) {
			t.Errorf("%s: held from parsed operations %v, from the documents %v", when, got, want)
		}
		for _, c := range []string{"one", "two"} {
			if got, want := fromParsed.resource(c), fromDocs.resource(c); got != want {
				t.Errorf("%s: cluster %s held from parsed operations %s, from the documents %s", when, c, got, want)
			}
		}
	}
	if parsedStats.Operations != docStats.Operations || parsedStats.Resources != docStats.Resources {
		t.Errorf("built from parsed operations: %+v; from the documents: %+v", parsedStats, docStats)
	}
	wantOps(t, fromDocs.operations(), "a", "Provisioning", "b", "Succeeded", "c", "Accepted")
	same("built")

	for _, r := range []*rig{fromDocs, fromParsed} {
		r.replace(opRef("a"), opDoc("a", "one", "Failed", ""))
		r.refresh()
	}
	wantOps(t, fromParsed.operations(), "b", "Succeeded", "c", "Accepted")
	same("refreshed")
}
