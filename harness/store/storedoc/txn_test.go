package storedoc

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// mapTxn is a Txn on a map, writing straight through: enough to see which
// primitives the rules call and with what. The stores' own Txns are proven
// by the contract suite.
type mapTxn struct {
	now     time.Time
	seq     int
	docs    map[string]mapVersion
	dropped []string
}

type mapVersion struct {
	etag    string
	body    []byte
	expires int64
	deleted bool
}

func (v mapVersion) Expired(now int64) bool   { return v.expires != 0 && now >= v.expires }
func (v mapVersion) Visible(now int64) bool   { return !v.Expired(now) && !v.deleted }
func (v mapVersion) HasETag(etag string) bool { return v.etag == etag }
func (v mapVersion) ETag() string             { return v.etag }
func (v mapVersion) Body() []byte             { return v.body }

func (t *mapTxn) Now() time.Time                     { return t.now }
func (t *mapTxn) Key(partitionKey, id string) string { return partitionKey + "|" + id }

func (t *mapTxn) Lookup(k string) (mapVersion, bool, error) {
	v, ok := t.docs[k]
	return v, ok, nil
}

func (t *mapTxn) Insert(k string, obj document.Object, meta Meta) (store.Item, error) {
	return t.put(k, obj, meta), nil
}

func (t *mapTxn) Update(k string, _ mapVersion, obj document.Object, meta Meta) (store.Item, error) {
	return t.put(k, obj, meta), nil
}

func (t *mapTxn) Drop(k string, _ mapVersion) error {
	t.dropped = append(t.dropped, k)
	delete(t.docs, k)
	return nil
}

func (t *mapTxn) put(k string, obj document.Object, meta Meta) store.Item {
	t.seq++
	v := mapVersion{etag: fmt.Sprint(`"e`, t.seq, `"`), body: obj.AppendJSON(nil), deleted: meta.Deleted}
	if meta.TTL > 0 {
		v.expires = t.now.Unix() + meta.TTL
	}
	t.docs[k] = v
	return store.Item{Body: v.body, ETag: v.etag}
}

func newMapTxn(docs map[string]mapVersion) *mapTxn {
	return &mapTxn{now: time.Unix(1000, 0), docs: docs}
}

func TestCreateOverExpiredLeftoverDropsItFirst(t *testing.T) {
	tx := newMapTxn(map[string]mapVersion{
		"p|gone":    {etag: `"old"`, expires: 1000}, // expired at now
		"p|deleted": {etag: `"old"`, expires: 1030, deleted: true},
	})
	if _, _, err := Create(tx, "p", []byte(`{"id":"gone","partitionKey":"p"}`)); err != nil {
		t.Fatalf("Create over an expired leftover: %v", err)
	}
	if len(tx.dropped) != 1 || tx.dropped[0] != "p|gone" || tx.docs["p|gone"].etag == `"old"` {
		t.Errorf("dropped %q, stored %+v; want p|gone dropped and written anew", tx.dropped, tx.docs["p|gone"])
	}
	_, id, err := Create(tx, "p", []byte(`{"id":"deleted","partitionKey":"p"}`))
	if !errors.Is(err, store.ErrConflict) || id != "deleted" {
		t.Errorf("Create over a soft-deleted document: id %q, err %v; want deleted, ErrConflict", id, err)
	}
}

func TestRunBatchNamesTheFailingStep(t *testing.T) {
	live := map[string]mapVersion{"p|a": {etag: `"ea"`, body: []byte(`{"id":"a","partitionKey":"p"}`)}}
	tests := []struct {
		name    string
		step    store.BatchOp
		wantID  string
		wantErr error
	}{
		{"create of a body in another partition", store.BatchOp{Kind: store.OpCreate, Body: []byte(`{"id":"x","partitionKey":"q"}`)}, "x", store.ErrInvalid},
		{"create of a body cut short after its id", store.BatchOp{Kind: store.OpCreate, Body: []byte(`{"id":"x","partitionKey":`)}, "x", store.ErrInvalid},
		{"create of a live id", store.BatchOp{Kind: store.OpCreate, Body: []byte(`{"id":"a","partitionKey":"p"}`)}, "a", store.ErrConflict},
		{"replace without If-Match", store.BatchOp{Kind: store.OpReplace, ID: "a", Body: []byte(`{"id":"a","partitionKey":"p"}`)}, "a", store.ErrInvalid},
		{"replace of another id", store.BatchOp{Kind: store.OpReplace, ID: "a", Body: []byte(`{"id":"b","partitionKey":"p"}`), IfMatch: `"ea"`}, "a", store.ErrInvalid},
		{"replace with a stale etag", store.BatchOp{Kind: store.OpReplace, ID: "a", Body: []byte(`{"id":"a","partitionKey":"p"}`), IfMatch: `"e0"`}, "a", store.ErrPreconditionFailed},
		{"delete of a missing id", store.BatchOp{Kind: store.OpDelete, ID: "m", IfMatch: `"ea"`}, "m", store.ErrNotFound},
		{"delete without If-Match", store.BatchOp{Kind: store.OpDelete, ID: "a"}, "a", store.ErrInvalid},
		{"unknown kind", store.BatchOp{Kind: "Patch", ID: "a"}, "a", store.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tx := newMapTxn(map[string]mapVersion{"p|a": live["p|a"]})
			ops := []store.BatchOp{
				{Kind: store.OpCreate, Body: []byte(`{"id":"n","partitionKey":"p"}`)},
				tc.step,
				{Kind: store.OpCreate, Body: []byte(`{"id":"after","partitionKey":"p"}`)},
			}
			items := make([]store.Item, len(ops))
			err := RunBatch(tx, "p", ops, items)
			var be *store.BatchError
			if !errors.As(err, &be) || be.Index != 1 || be.Op != tc.step.Kind || be.ID != tc.wantID || !errors.Is(err, tc.wantErr) {
				t.Fatalf("RunBatch err = %v, want a BatchError for step 1 (%s %s) wrapping %v", err, tc.step.Kind, tc.wantID, tc.wantErr)
			}
			if _, ran := tx.docs["p|after"]; ran {
				t.Error("the step after the failing one ran")
			}
		})
	}
}

func TestRunBatchClearsItemsOfAnEarlierRun(t *testing.T) {
	tx := newMapTxn(map[string]mapVersion{"p|a": {etag: `"ea"`}})
	items := []store.Item{{ETag: "stale"}, {ETag: "stale"}}
	ops := []store.BatchOp{
		{Kind: store.OpCreate, Body: []byte(`{"id":"n","partitionKey":"p"}`)},
		{Kind: store.OpDelete, ID: "a", IfMatch: `"ea"`},
	}
	if err := RunBatch(tx, "p", ops, items); err != nil {
		t.Fatalf("RunBatch: %v", err)
	}
	if items[0].ETag != tx.docs["p|n"].etag || items[1].ETag != "" {
		t.Errorf("items = %+v, want the create's item and an empty one for the delete", items)
	}
	if _, ok := tx.docs["p|a"]; ok {
		t.Error("the deleted document is still there")
	}
}

func TestSoftDeleteWritesOverTheLiveVersion(t *testing.T) {
	tx := newMapTxn(map[string]mapVersion{"p|a": {etag: `"ea"`, body: []byte(`{"id":"a","partitionKey":"p"}`)}})
	if err := SoftDelete(tx, "p", "a"); err != nil {
		t.Fatalf("SoftDelete: %v", err)
	}
	if v := tx.docs["p|a"]; !v.deleted || v.expires != 1030 {
		t.Errorf("after SoftDelete: %+v, want deleted with ttl 30", v)
	}
	if err := SoftDelete(tx, "p", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second SoftDelete err = %v, want ErrNotFound", err)
	}
}
