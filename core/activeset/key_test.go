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
			if want := a.other != b.other && b.other || a.other == b.other && bytes.Compare(a.u[:], b.u[:]) < 0; compareKeys(a, b) < 0 != want || keyLess(&a, &b) != want {
				t.Errorf("%v before %v: compareKeys %d, keyLess %t; want %t", a, b, compareKeys(a, b), keyLess(&a, &b), want)
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

// TestTablesFindWhatTheyHold: a sealed table of either kind finds every
// key it holds and no other, whatever order they came in.
func TestTablesFindWhatTheyHold(t *testing.T) {
	var ops table[opEntry]
	var res table[resEntry]
	ops.building()
	res.building()
	var held []key
	for i := range 300 {
		var k key
		k.u[0], k.u[7], k.u[15] = byte(i*37), byte(i), byte(i>>8)
		k.other = i%5 == 0
		held = append(held, k)
		ops.put(opEntry{k: k})
		res.put(resEntry{k: k, refs: int32(i)})
	}
	ops.seal()
	res.seal()
	for i, k := range held {
		if e, ok := res.get(k); !ok || e.refs != int32(i) {
			t.Fatalf("resource %d: %v, %t", i, e, ok)
		}
		if _, ok := ops.get(k); !ok {
			t.Fatalf("operation %d not found", i)
		}
		missing := k
		missing.u[3] ^= 0xff
		if _, ok := res.get(missing); ok {
			t.Fatalf("a key never held was found beside %d", i)
		}
	}
}
