package activeset

import (
	"fmt"
	"testing"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// A full read hands Operations the operations it parsed; what the view
// holds from them is what it holds from the documents alone.
func TestRebuildFromParsedOperationsHoldsTheSame(t *testing.T) {
	r := newRig(t)
	r.create(opDoc("a", "one", "Provisioning", ""))
	r.create(opDoc("b", "one", "Succeeded", `,"notificationUri":"https://arm/notify"`))
	r.create(opDoc("c", "two", "Accepted", ""))
	r.create(clusterDoc("one", "Provisioning"))
	r.create(clusterDoc("two", "Accepted"))
	fromDocs := r.build()
	want := r.operations()
	rb, err := r.view.Begin(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.store.ActiveOperations(r.ctx, store.ActiveOperationsQuery{WithPendingNotification: true}, func(items []store.Item) error {
		parsed := make([]Op, len(items))
		for i, it := range items {
			parsed[i].Doc, parsed[i].Err = document.ParseOperation(it.Body)
		}
		rb.Operations(items, parsed)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	fromParsed := rb.Commit()
	if fromParsed.Operations != fromDocs.Operations || fromParsed.Resources != fromDocs.Resources {
		t.Errorf("built from parsed operations: %+v; from the documents: %+v", fromParsed, fromDocs)
	}
	if got := r.operations(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("held from parsed operations %v, from the documents %v", got, want)
	}
	r.replace(opRef("a"), opDoc("a", "one", "Failed", ""))
	r.refresh()
	wantOps(t, r.operations(), "b", "Succeeded", "c", "Accepted")
}
