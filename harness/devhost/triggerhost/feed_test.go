package triggerhost

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/harness/store/embedded"
)

const feedPK = "00000000-0000-0000-0000-000000000001"

func feedFunction(extra string) string {
	return `{"bindings":[{"type":"cosmosDBTrigger","direction":"in","name":"documents","connection":"CosmosDB",` +
		`"databaseName":"db","containerName":"Resources","leaseContainerName":"leases","feedPollDelay":10` + extra + `}]` +
		`}`
}

func feedFunctionWithRetry(extra, retry string) string {
	return strings.TrimSuffix(feedFunction(extra), "}") + `,"retry":` + retry + `}`
}

func openStore(t *testing.T, dir string) *embedded.Store {
	t.Helper()
	s, err := embedded.Open(filepath.Join(dir, "store.db"), embedded.WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// createDocs writes the documents in one transactional batch, so that a
// feed poll sees all of them or none: created one by one, a poll between
// two creates split them over two deliveries.
func createDocs(t *testing.T, s store.Store, ids ...string) {
	t.Helper()
	ops := make([]store.BatchOp, len(ids))
	for i, id := range ids {
		// The quote and angle brackets exercise escaping through both layers.
		doc := fmt.Sprintf(`{"id":%q,"partitionKey":%q,"note":"say \"hi\" <b>&</b>"}`, id, feedPK)
		ops[i] = store.BatchOp{Kind: store.OpCreate, Body: []byte(doc)}
	}
	if _, err := s.Batch(context.Background(), feedPK, ops); err != nil {
		t.Fatal(err)
	}
}

// batchIDs decodes Data.documents the way the wire demands: a JSON string,
// holding a JSON string, holding the array.
func batchIDs(t *testing.T, r recorded) []string {
	t.Helper()
	data, _ := r.envelope(t)
	raw := data["documents"]
	var lvl1, lvl2 string
	if err := json.Unmarshal(raw, &lvl1); err != nil {
		t.Fatalf("Data.documents is not a JSON string: %v: %s", err, raw)
	}
	if err := json.Unmarshal([]byte(lvl1), &lvl2); err != nil {
		t.Fatalf("Data.documents holds no second string layer: %v: %s", err, lvl1)
	}
	var docs []struct {
		ID   string `json:"id"`
		Note string `json:"note"`
		ETag string `json:"_etag"`
	}
	if err := json.Unmarshal([]byte(lvl2), &docs); err != nil {
		t.Fatalf("innermost layer is not an array of documents: %v: %s", err, lvl2)
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		if d.Note != `say "hi" <b>&</b>` || d.ETag == "" {
			t.Errorf("document %s arrived as note %q etag %q", d.ID, d.Note, d.ETag)
		}
		ids[i] = d.ID
	}
	// The project's own adapter must decode the same payload.
	decoded, err := events.DecodeDocuments("Data.documents", raw)
	if err != nil || len(decoded) != len(ids) {
		t.Errorf("DecodeDocuments: %d documents, %v; want %d", len(decoded), err, len(ids))
	}
	return ids
}

func TestFeedBatchesAreDoubleEncodedAndBounded(t *testing.T) {
	dir := t.TempDir()
	leases := watchLeases(dir)
	s := openStore(t, dir)
	defer s.Close()
	createDocs(t, s, "d1", "d2", "d3", "d4", "d5", "d6", "d7")
	th := newTestHandler()
	app := writeApp(t, hostJSON, map[string]string{"dispatch": feedFunction(`,"startFromBeginning":true,"maxItemsPerInvocation":3`)})
	startHost(t, Config{App: app, Worker: th.worker(), StateDir: dir, Leases: leases, Feed: s})

	want := [][]string{{"d1", "d2", "d3"}, {"d4", "d5", "d6"}, {"d7"}}
	for i, w := range want {
		r := th.next(t)
		if r.Path != "/dispatch" || r.Method != "POST" {
			t.Fatalf("batch %d went to %s %s", i, r.Method, r.Path)
		}
		if got := batchIDs(t, r); !slices.Equal(got, w) {
			t.Errorf("batch %d = %v, want %v", i, got, w)
		}
		_, meta := r.envelope(t)
		if len(meta) != 1 || meta["sys"] == nil {
			t.Errorf("batch %d metadata = %s, want only sys", i, mapKeys(meta))
		}
	}
	th.noneAfterCheckpoint(t, s, leases, "dispatch")
}

func TestFeedRetriesWithRetryContextThenCheckpoints(t *testing.T) {
	dir := t.TempDir()
	leases := watchLeases(dir)
	s := openStore(t, dir)
	defer s.Close()
	th := newTestHandler()
	th.setRespond(func(r recorded) (int, string) {
		if strings.Contains(string(r.Body), "poison") {
			return 500, `{"Outputs":{},"Logs":["boom"],"ReturnValue":null,"Error":"boom"}`
		}
		return 200, `{"Outputs":{},"Logs":[],"ReturnValue":null}`
	})
	retry := `{"strategy":"fixedDelay","maxRetryCount":2,"delayInterval":"00:00:00.01"}`
	app := writeApp(t, hostJSON, map[string]string{"dispatch": feedFunctionWithRetry(`,"maxItemsPerInvocation":1`, retry)})
	startHost(t, Config{App: app, Worker: th.worker(), StateDir: dir, Leases: leases, Feed: s})
	createDocs(t, s, "poison", "good")

	ids := map[string]bool{}
	for attempt := range 3 {
		r := th.next(t)
		if got := batchIDs(t, r); !slices.Equal(got, []string{"poison"}) {
			t.Fatalf("attempt %d delivered %v, want the failing batch again", attempt, got)
		}
		ids[r.Header.Get(events.HeaderInvocationID)] = true
		_, meta := r.envelope(t)
		var rc struct {
			RetryCount, MaxRetryCount int
			Exception                 *struct{ Message string }
		}
		must(t, json.Unmarshal(meta["RetryContext"], &rc))
		if rc.RetryCount != attempt || rc.MaxRetryCount != 2 {
			t.Errorf("attempt %d RetryContext = %s", attempt, meta["RetryContext"])
		}
		if (attempt == 0) != (rc.Exception == nil) {
			t.Errorf("attempt %d exception = %+v: want none on the first attempt and the failure after", attempt, rc.Exception)
		}
		if attempt > 0 && !strings.Contains(rc.Exception.Message, "500") {
			t.Errorf("attempt %d exception message %q does not carry the status", attempt, rc.Exception.Message)
		}
	}
	if len(ids) != 3 {
		t.Errorf("%d distinct invocation ids over 3 attempts", len(ids))
	}
	// Retries spent: the feed moves on to the next batch, once.
	if got := batchIDs(t, th.next(t)); !slices.Equal(got, []string{"good"}) {
		t.Errorf("after the failed batch came %v, want [good]", got)
	}
	th.noneAfterCheckpoint(t, s, leases, "dispatch")
}

func TestFeedWithoutRetryPolicySkipsFailedBatch(t *testing.T) {
	dir := t.TempDir()
	leases := watchLeases(dir)
	s := openStore(t, dir)
	defer s.Close()
	th := newTestHandler()
	th.setRespond(func(r recorded) (int, string) {
		if strings.Contains(string(r.Body), "poison") {
			return 500, `{}`
		}
		return 200, `{"Outputs":{},"Logs":[],"ReturnValue":null}`
	})
	app := writeApp(t, hostJSON, map[string]string{"dispatch": feedFunction(`,"maxItemsPerInvocation":1`)})
	startHost(t, Config{App: app, Worker: th.worker(), StateDir: dir, Leases: leases, Feed: s})
	createDocs(t, s, "poison", "good")
	r := th.next(t)
	if _, meta := r.envelope(t); meta["RetryContext"] != nil {
		t.Error("RetryContext sent without a retry policy")
	}
	if got := batchIDs(t, th.next(t)); !slices.Equal(got, []string{"good"}) {
		t.Errorf("second delivery = %v, want [good] (the failed batch is not redelivered)", got)
	}
}

func TestFeedResumesFromPersistedLease(t *testing.T) {
	dir := t.TempDir()
	leases := watchLeases(dir)
	s := openStore(t, dir)
	defer s.Close()
	createDocs(t, s, "before-first-start")
	app := writeApp(t, hostJSON, map[string]string{"dispatch": feedFunction(`,"leaseContainerPrefix":"dev-"`)})

	run := func(th *testHandler) (stop func()) {
		h, err := New(Config{App: app, Worker: th.worker(), StateDir: dir, Leases: leases, Feed: s})
		must(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- h.Run(ctx) }()
		<-h.Started()
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		}
	}

	th1 := newTestHandler()
	stop := run(th1)
	waitLease(t, leases, "dev-dispatch", func(Lease) bool { return true }) // listening from "now"
	createDocs(t, s, "a", "b")
	// A first start begins at "now": the older document is not delivered.
	if got := batchIDs(t, th1.next(t)); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("first host delivered %v, want [a b]", got)
	}
	// Stopping mid-invocation would rightly leave the batch unacknowledged;
	// wait for the checkpoint to cover a and b.
	positioned := waitLease(t, leases, "dev-dispatch", coversAll(s))
	stop()
	t.Logf("lease after the first host: %+v", positioned)
	createDocs(t, s, "c") // written while no host runs

	th2 := newTestHandler()
	stop = run(th2)
	defer stop()
	if got := batchIDs(t, th2.next(t)); !slices.Equal(got, []string{"c"}) {
		t.Errorf("restarted host delivered %v, want only [c]", got)
	}
	th2.noneAfterCheckpoint(t, s, leases, "dev-dispatch")
}

// coversAll accepts a lease with no change after it in s.
func coversAll(s store.Store) func(Lease) bool {
	return func(l Lease) bool {
		page, err := s.ChangeFeed(context.Background(), l.Continuation, 10)
		return err == nil && len(page.Items) == 0
	}
}

// noneAfterCheckpoint waits for the lease to cover every change in s,
// then fails on any delivery not yet read: the listener delivers a batch
// before it checkpoints past it, so a covering lease means every delivery
// has been made.
func (th *testHandler) noneAfterCheckpoint(t *testing.T, s store.Store, w *watchedLeases, name string) {
	t.Helper()
	waitLease(t, w, name, coversAll(s))
	th.noneQueued(t)
}

// watchedLeases are the host's lease files, telling a waiting test of
// every save.
type watchedLeases struct {
	fileLeases
	mu    sync.Mutex
	saved chan struct{} // closed by the next save
}

func watchLeases(dir string) *watchedLeases {
	return &watchedLeases{fileLeases: fileLeases{dir: stateDir(dir)}}
}

func (w *watchedLeases) Save(ctx context.Context, l Lease) (Lease, error) {
	saved, err := w.fileLeases.Save(ctx, l)
	w.mu.Lock()
	if w.saved != nil {
		close(w.saved)
		w.saved = nil
	}
	w.mu.Unlock()
	return saved, err
}

// waitLease waits until ok accepts the lease, reading it again after
// every save.
func waitLease(t *testing.T, w *watchedLeases, name string, ok func(Lease) bool) Lease {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		w.mu.Lock()
		if w.saved == nil {
			w.saved = make(chan struct{})
		}
		saved := w.saved
		w.mu.Unlock()
		ls, found, err := w.Load(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		if found && ok(ls) {
			return ls
		}
		select {
		case <-saved:
		case <-deadline:
			t.Fatalf("lease %s = %+v (found %v) after a minute", name, ls, found)
		}
	}
}

func mapKeys(m map[string]json.RawMessage) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
