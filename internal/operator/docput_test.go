package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/memory"
)

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
	docs, err := checkPut(raw, false)
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
	docs, err := checkPut(raw, false)
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

// batchLog is the real store with each batch's steps and bytes recorded;
// before the batch numbered raceAt (from 1) a concurrent writer replaces
// document raceID, so that batch's etag check fails.
type batchLog struct {
	store.Store
	batches       [][2]int // steps, body bytes
	raceAt        int
	racePK, race  string
	raceErr       error
	raceAttempted bool
}

func (b *batchLog) Batch(ctx context.Context, pk string, ops []store.BatchOp) ([]store.Item, error) {
	size := 0
	for _, op := range ops {
		size += len(op.Body)
	}
	b.batches = append(b.batches, [2]int{len(ops), size})
	if len(b.batches) == b.raceAt {
		b.raceAttempted = true
		cur, err := b.Get(ctx, b.racePK, b.race)
		if err == nil {
			_, err = b.Replace(ctx, b.racePK, b.race, []byte(`{"id":"`+b.race+`","partitionKey":"`+b.racePK+`","by":"someone else"}`), cur.ETag)
		}
		if err != nil {
			b.raceErr = err
		}
	}
	return b.Store.Batch(ctx, pk, ops)
}

// bigDocs is n documents of partition p, each of about size bytes.
func bigDocs(t *testing.T, n, size int) []putDoc {
	t.Helper()
	var raw []json.RawMessage
	for i := range n {
		raw = append(raw, json.RawMessage(fmt.Sprintf(`{"id":"d%d","partitionKey":"p","pad":%q}`, i, strings.Repeat("x", size))))
	}
	docs, err := checkPut(raw, false)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// Documents past Cosmos DB's 2 MB a batch go in as many batches as their
// bytes need, each within the limit (the real store refuses one that is
// not), though far fewer than 100 steps.
func TestDocPutSplitsBySize(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	defer mem.Close()
	const size = 700 << 10 // three of them exceed a batch's 2 MB
	docs := bigDocs(t, 5, size)
	s := &batchLog{Store: mem}
	var out bytes.Buffer
	if err := docPut(ctx, s, docs, &out); err != nil {
		t.Fatal(err)
	}
	steps := make([]int, len(s.batches))
	for i, b := range s.batches {
		steps[i] = b[0]
		if b[1] > store.MaxBatchBytes {
			t.Errorf("batch %d carries %d bytes, over %d", i+1, b[1], store.MaxBatchBytes)
		}
	}
	if fmt.Sprint(steps) != "[2 2 1]" {
		t.Errorf("batches of %v steps, want [2 2 1] (two 700 KiB documents a batch)", steps)
	}
	if n := strings.Count(out.String(), "created  "); n != 5 {
		t.Errorf("%d created, want 5:\n%s", n, out.String())
	}
	for i := range 5 {
		if _, err := mem.Get(ctx, "p", fmt.Sprintf("d%d", i)); err != nil {
			t.Errorf("d%d: %v", i, err)
		}
	}
}

// A partition split by size cannot roll back as one: when its second
// batch fails, that batch wrote nothing (its create included), no later
// batch ran, and the error names exactly what the first batch wrote.
func TestDocPutSplitBySizeStopsAtTheFailedBatch(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	defer mem.Close()
	if _, err := mem.Create(ctx, "p", []byte(`{"id":"d3","partitionKey":"p"}`)); err != nil {
		t.Fatal(err)
	}
	docs := bigDocs(t, 5, 700<<10)
	s := &batchLog{Store: mem, raceAt: 2, racePK: "p", race: "d3"}
	var out bytes.Buffer
	err := docPut(ctx, s, docs, &out)
	if !s.raceAttempted || s.raceErr != nil {
		t.Fatalf("the concurrent write before batch 2: attempted %v, %v", s.raceAttempted, s.raceErr)
	}
	for _, want := range []string{"writing partition p (replace d3): ", "etag precondition failed",
		"that batch was rolled back, written before it stopped: created d0, created d1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("docPut: %v\nwant it to contain %q", err, want)
		}
	}
	if err != nil && !strings.HasSuffix(err.Error(), "written before it stopped: created d0, created d1") {
		t.Errorf("the error names more than d0 and d1 as written: %v", err)
	}
	if out.String() != "created  d0\ncreated  d1\n" {
		t.Errorf("docPut printed %q", out.String())
	}
	if len(s.batches) != 2 {
		t.Errorf("%d batches ran, want 2: none after the failed one", len(s.batches))
	}
	for id, want := range map[string]bool{"d0": true, "d1": true, "d2": false, "d4": false} {
		if _, err := mem.Get(ctx, "p", id); (err == nil) != want {
			t.Errorf("%s: %v; want written %v", id, err, want)
		}
	}
	if it, err := mem.Get(ctx, "p", "d3"); err != nil || !strings.Contains(string(it.Body), "someone else") {
		t.Errorf("d3 is not the concurrent writer's: %v %.80s", err, it.Body)
	}
}
