package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/memory"
)

// doc put is all or nothing: a batch with one document no store takes
// writes none of them, and the refusal names that document as a write.
func TestDocPutWritesNothingWhenOneDocumentIsBad(t *testing.T) {
	w := newWorkspace(t)
	pk := cliSub
	batch := `[{"id":"ok1","partitionKey":"` + pk + `"},{"id":"a/b","partitionKey":"` + pk + `"}]`
	r := w.hcpops(t, batch, "doc", "put", "-create", "-")
	msg := oneLine(t, r, "doc")
	if !strings.Contains(msg, `"a/b"`) || strings.Contains(msg, "reading") || !strings.Contains(msg, "nothing was written") {
		t.Errorf("doc put of a batch with a bad id: %q; want the id named, no \"reading\", and nothing written", msg)
	}
	if r.stdout != "" {
		t.Errorf("doc put printed writes before refusing: %q", r.stdout)
	}
	if g := w.hcpops(t, "", "doc", "get", "ok1", "-subscription", pk); g.code == 0 {
		t.Errorf("ok1 was written by a refused batch:\n%s", g.stdout)
	}
	// The same id twice is refused before anything is written too.
	dup := `{"id":"d1","partitionKey":"` + pk + `","n":1}` + "\n" + `{"id":"d1","partitionKey":"` + pk + `","n":2}`
	if msg := oneLine(t, w.hcpops(t, dup, "doc", "put", "-create", "-"), "doc"); !strings.Contains(msg, `"d1"`) || !strings.Contains(msg, "twice") {
		t.Errorf("doc put of one id twice: %q", msg)
	}
	// A good batch writes every document, creates and replaces alike.
	good := `[{"id":"ok1","partitionKey":"` + pk + `"},{"id":"ok2","partitionKey":"` + pk + `"}]`
	if r := w.hcpops(t, good, "doc", "put", "-create", "-"); r.code != 0 || r.stdout != "created  ok1\ncreated  ok2\n" {
		t.Fatalf("doc put of a good batch: %d %q %q", r.code, r.stdout, r.stderr)
	}
	again := `[{"id":"ok2","partitionKey":"` + pk + `","v":2},{"id":"ok3","partitionKey":"` + pk + `"}]`
	if r := w.hcpops(t, again, "doc", "put", "-"); r.code != 0 || r.stdout != "replaced ok2\ncreated  ok3\n" {
		t.Fatalf("doc put replacing one and creating one: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if g := w.hcpops(t, "", "doc", "get", "ok2", "-subscription", pk); !strings.Contains(g.stdout, `"v": 2`) {
		t.Errorf("ok2 was not replaced: %s%s", g.stdout, g.stderr)
	}
}

// racingStore replaces a document of partition pk just before the batch
// that writes it, as a concurrent writer would: the store's own etag check
// then fails that batch.
type racingStore struct {
	store.Store
	pk, id string
}

func (r racingStore) Batch(ctx context.Context, pk string, ops []store.BatchOp) ([]store.Item, error) {
	if pk == r.pk {
		cur, err := r.Get(ctx, pk, r.id)
		if err != nil {
			return nil, err
		}
		if _, err := r.Replace(ctx, pk, r.id, []byte(`{"id":"`+r.id+`","partitionKey":"`+pk+`","by":"someone else"}`), cur.ETag); err != nil {
			return nil, err
		}
	}
	return r.Store.Batch(ctx, pk, ops)
}

// Partitions cannot roll back together: when a later partition's batch
// fails, the error says exactly what the earlier ones wrote, and what
// failed wrote nothing.
func TestDocPutSaysWhatItWroteBeforeItStopped(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	defer mem.Close()
	if _, err := mem.Create(ctx, "pb", []byte(`{"id":"b1","partitionKey":"pb"}`)); err != nil {
		t.Fatal(err)
	}
	raw := []json.RawMessage{
		json.RawMessage(`{"id":"a1","partitionKey":"pa"}`),
		json.RawMessage(`{"id":"b1","partitionKey":"pb","v":2}`),
		json.RawMessage(`{"id":"a2","partitionKey":"pa"}`),
		json.RawMessage(`{"id":"b2","partitionKey":"pb"}`),
	}
	docs, err := checkPut(raw)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = docPut(ctx, racingStore{Store: mem, pk: "pb", id: "b1"}, docs, &out)
	for _, want := range []string{"writing partition pb (replace b1): ", "etag precondition failed (it changed since it was read",
		"that batch was rolled back, written before it stopped: created a1, created a2"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("docPut: %v\nwant it to contain %s", err, want)
		}
	}
	if out.String() != "created  a1\ncreated  a2\n" {
		t.Errorf("docPut printed %q", out.String())
	}
	if _, err := mem.Get(ctx, "pb", "b2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("b2, in the failed batch, was written: %v", err)
	}
	if it, err := mem.Get(ctx, "pb", "b1"); err != nil || !strings.Contains(string(it.Body), "someone else") {
		t.Errorf("b1 is not the concurrent writer's: %v %s", err, it.Body)
	}
}

// More documents than one batch takes go in several, all written.
func TestDocPutSplitsAtTheBatchLimit(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	defer mem.Close()
	var raw []json.RawMessage
	for i := range store.MaxBatchOps + 5 {
		raw = append(raw, json.RawMessage(fmt.Sprintf(`{"id":"d%d","partitionKey":"p"}`, i)))
	}
	docs, err := checkPut(raw)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := docPut(ctx, mem, docs, &out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "created  "); n != store.MaxBatchOps+5 {
		t.Errorf("%d created, want %d", n, store.MaxBatchOps+5)
	}
	if _, err := mem.Get(ctx, "p", fmt.Sprintf("d%d", store.MaxBatchOps+4)); err != nil {
		t.Errorf("the last document: %v", err)
	}
}
