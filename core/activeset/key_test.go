package activeset

import (
	"bytes"
	"testing"

	"github.com/hcpops/hcpops/core/store"
)

func TestKeysAreExact(t *testing.T) {
	o := others{}
	ids := []string{
		"6e7906b8-195a-5089-af7d-ff5988327ebe",
		"6E7906B8-195A-5089-AF7D-FF5988327EBE", // the same UUID upper-cased: another id
		"6e7906b8-195a-5089-af7d-ff5988327ebf",
		"op-one", "op-two", "",
		"\x01\x00\x00\x00\x00\x00\x00\x00", // a number's bytes as an id
	}
	seen := map[key]string{}
	for _, id := range ids {
		k := o.of(id)
		if prev, dup := seen[k]; dup {
			t.Fatalf("ids %q and %q share a key", prev, id)
		}
		seen[k] = id
		if again, ok := o.lookup(id); !ok || again != k {
			t.Errorf("lookup(%q) = %v, %v; want %v", id, again, ok, k)
		}
	}
	if _, ok := o.lookup("never-seen"); ok {
		t.Error("an id never numbered has a key")
	}
	for a := range seen {
		for b := range seen {
			if (compareKeys(a, b) == 0) != (a == b) || compareKeys(a, b) != -compareKeys(b, a) {
				t.Errorf("compareKeys(%v, %v) = %d", a, b, compareKeys(a, b))
			}
		}
	}
}

// Documents are held by their id exactly: ids that are no UUID, and a
// UUID in two casings, are as many documents, each changed on its own.
func TestViewHoldsDocumentsByExactID(t *testing.T) {
	r := newRig(t)
	withID := func(doc []byte, name, id string) []byte {
		return bytes.Replace(doc, []byte(opRef(name).ID), []byte(id), 1)
	}
	ids := map[string]string{
		"a": "6e7906b8-195a-5089-af7d-ff5988327ebe", "b": "6E7906B8-195A-5089-AF7D-FF5988327EBE",
		"c": "op-c", "d": "op-d",
	}
	for name, id := range ids {
		r.create(withID(opDoc(name, "one", "Accepted", ""), name, id))
	}
	r.create(clusterDoc("one", "Accepted"))
	r.build()
	wantOps(t, r.operations(), "a", "Accepted", "b", "Accepted", "c", "Accepted", "d", "Accepted")
	for name, status := range map[string]string{"b": "Provisioning", "c": "Succeeded"} {
		r.replace(store.DocRef{PartitionKey: sub, ID: ids[name]}, withID(opDoc(name, "one", status, ""), name, ids[name]))
	}
	r.create(withID(opDoc("e", "one", "Accepted", ""), "e", "op-e"))
	r.refresh()
	wantOps(t, r.operations(), "a", "Accepted", "b", "Provisioning", "d", "Accepted", "e", "Accepted")
	r.wantResource("one", "Accepted", "the cluster the operations share")
}
