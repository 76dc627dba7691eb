package activeset

import (
	"bytes"
	"runtime"
	"testing"
	"weak"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// TestRecordsCarryTheirProjectionsRoom: a projection's record says how
// much its strings take unpacked and decodes with that much spare room
// (where the projection's reader writes them), and its header reads back
// as written; a document's record, or a gone one's, carries none.
func TestRecordsCarryTheirProjectionsRoom(t *testing.T) {
	op, err := document.ParseOperation(opDoc("a", "one", "Provisioning", ""))
	if err != nil {
		t.Fatal(err)
	}
	proj := op.AppendProjection(nil)
	room := document.ProjectionRoom(proj)
	if room == 0 {
		t.Fatal("the test operation packs no UUIDs")
	}
	h := head{ts: 1700000000, ttl: 60, version: 3, etag: `"e"`}
	for _, tc := range []struct {
		name    string
		payload []byte
		flags   byte
		room    int
	}{
		{"projection", proj, 0, room},
		{"document as read", opDoc("a", "one", "Provisioning", ""), flagRaw, 0},
		{"gone", nil, flagGone, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c codec
			rec := c.encode(tc.payload, h, tc.flags)
			m, _, err := header(rec)
			if err != nil || m.ts != h.ts || m.expiry != h.expiry() || m.version != h.version || m.etag != etagSum(h.etag) || m.room != tc.room {
				t.Fatalf("header = %+v, %v; want room %d and the head's fields", m, err, tc.room)
			}
			if tc.flags&flagGone != 0 {
				return
			}
			got, _, err := c.decode(nil, rec)
			if err != nil || !bytes.Equal(got, tc.payload) {
				t.Fatalf("decode = %q, %v", got, err)
			}
			if cap(got)-len(got) < tc.room {
				t.Errorf("decoded with %d bytes to spare; the projection needs %d", cap(got)-len(got), tc.room)
			}
		})
	}
	if _, _, err := header([]byte{0, 1, 1, 1, 0, 0, 0, 0}); err == nil {
		t.Error("a projection's header without its room was read")
	}
}

// TestRecordsOwnNothingOfTheirScratch: records are built in reused room,
// and the first projection becomes the codec's dictionary; every record
// still decodes to its own projection after later ones were built in the
// same room.
func TestRecordsOwnNothingOfTheirScratch(t *testing.T) {
	var c codec
	h := head{ts: 1700000000, ttl: 60, version: 1, etag: `"e"`}
	var projs, recs [][]byte
	for i, status := range []string{"Provisioning", "Updating", "Deleting", "Accepted"} {
		op, err := document.ParseOperation(opDoc("a", string(rune('p'+i)), status, ""))
		if err != nil {
			t.Fatal(err)
		}
		projs = append(projs, op.AppendProjection(nil))
		recs = append(recs, c.project(op.AppendProjection, h, 0))
	}
	if c.dict == nil {
		t.Fatal("the codec made no dictionary of the first projection")
	}
	for i, rec := range recs {
		got, flags, err := c.decode(nil, rec)
		if err != nil || !bytes.Equal(got, projs[i]) {
			t.Errorf("record %d decodes to %q, %v; want its projection", i, got, err)
		}
		if flags&flagDict == 0 {
			t.Errorf("record %d was not compressed against the dictionary", i)
		}
	}
}

// TestReplacedSetIsCollected: a set replaced by a relist is garbage at
// the next collection. Its pools (head readers, codecs' scratch) are
// listed by the runtime until two collections after their last use; held
// in the set itself, that list kept the set and its slab alive too, and a
// process that builds many views (the simulation search) grew without
// bound (2.7 GB for 500 runs, 100 MB apart).
func TestReplacedSetIsCollected(t *testing.T) {
	s := newSet()
	body := opDoc("a", "one", "Provisioning", "")
	h, err := s.heads.read(body)
	if err != nil {
		t.Fatal(err)
	}
	s.putOperation(h, operationRecord(s, h, body, nil, 0), store.DocRef{PartitionKey: "p", ID: "a"}, false)
	if s.nOps != 1 {
		t.Fatalf("the set holds %d operations, want 1", s.nOps)
	}
	w := weak.Make(s)
	s = nil
	runtime.GC()
	if w.Value() != nil {
		t.Error("a set nothing refers to survived a collection")
	}
}
