package dispatchoperations

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/handlers"
	"github.com/hcpops/hcpops/harness/invoke"
	"github.com/hcpops/hcpops/harness/testsupport"
	"github.com/hcpops/hcpops/logging"
)

// recordingDispatcher records what reached the dispatcher and answers with
// canned counts or an error.
type recordingDispatcher struct {
	mu      sync.Mutex
	batches [][]json.RawMessage
	err     error
}

func (r *recordingDispatcher) DispatchDocuments(ctx context.Context, docs []json.RawMessage) (lifecycle.DispatchResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, docs)
	if r.err != nil {
		return lifecycle.DispatchResult{Documents: len(docs)}, r.err
	}
	return lifecycle.DispatchResult{Documents: len(docs), Operations: 2, Dispatched: 1, Skipped: 1}, nil
}

func (r *recordingDispatcher) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.batches)
}

func newServer(t *testing.T, d Dispatcher) *httptest.Server {
	t.Helper()
	ts, _ := newLoggedServer(t, d)
	return ts
}

func newLoggedServer(t *testing.T, d Dispatcher) (*httptest.Server, *testsupport.Records) {
	t.Helper()
	recs := &testsupport.Records{}
	logger := slog.New(slog.NewJSONHandler(recs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := handlers.New(handlers.Config{}, logger)
	if err := New(d, logger).Register(s); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts, recs
}

func postBody(t *testing.T, ts *httptest.Server, body []byte) invoke.Reply {
	t.Helper()
	return invoke.Post(t, ts, Name, body, http.Header{events.HeaderInvocationID: {"3e1f4c2a-9d0b-4c55-8a55-3b8f5a7d1e20"}})
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "events", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func compactAll(t *testing.T, docs []json.RawMessage) []string {
	t.Helper()
	out := make([]string, len(docs))
	for i, d := range docs {
		var b bytes.Buffer
		if err := json.Compact(&b, d); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		out[i] = b.String()
	}
	return out
}

// TestGoldenBatches posts every shape the host may send and checks the
// dispatcher received exactly the documents of testdata/documents.json.
func TestGoldenBatches(t *testing.T) {
	var want []json.RawMessage
	if err := json.Unmarshal(readFile(t, "documents.json"), &want); err != nil {
		t.Fatal(err)
	}
	wantDocs := compactAll(t, want)
	counts := map[string]any{"documents": 3, "operations": 2, "dispatched": 1, "skipped": 1, "deferred": 0, "status": 200}
	tests := []struct {
		file      string
		level     string
		retry     int
		wantRetry int
	}{
		{"batch-double-encoded.json", "INFO", 0, 0},
		{"batch-single-encoded.json", "INFO", 0, 0},
		{"batch-plain-array.json", "INFO", 0, 0},
		{"batch-retry.json", "WARN", 2, 5}, // a redelivery is worth a warning
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			rec := &recordingDispatcher{}
			ts, recs := newLoggedServer(t, rec)
			got := postBody(t, ts, readFile(t, tt.file))
			if got.Status != http.StatusOK {
				t.Fatalf("status = %d, error %q", got.Status, got.Error)
			}
			if len(got.Logs) != 0 {
				t.Errorf("Logs = %q; the record is the one line, Logs would repeat it", got.Logs)
			}
			r := recs.Wait(t, MsgBatch)
			testsupport.WantAttrs(t, r, counts)
			testsupport.WantAttrs(t, r, map[string]any{"level": tt.level, "retry_count": tt.retry, "max_retry_count": tt.wantRetry,
				logging.AttrInvocationID: "3e1f4c2a-9d0b-4c55-8a55-3b8f5a7d1e20", logging.AttrFunction: Name})
			if rec.calls() != 1 {
				t.Fatalf("dispatcher called %d times", rec.calls())
			}
			gotDocs := compactAll(t, rec.batches[0])
			if strings.Join(gotDocs, "\n") != strings.Join(wantDocs, "\n") {
				t.Errorf("documents differ from documents.json:\n got %s\nwant %s", gotDocs, wantDocs)
			}
			// host-rewritten dates pass through untouched
			if !strings.Contains(gotDocs[0], `"startTime":"2026-03-14T01:59:26.7148267+00:00"`) {
				t.Errorf("date string was altered: %s", gotDocs[0])
			}
		})
	}
}

// TestReferencePayload posts the protocol reference's constructed batch
// verbatim (its binding is also named "documents").
func TestReferencePayload(t *testing.T) {
	rec := &recordingDispatcher{}
	ts := newServer(t, rec)
	got := postBody(t, ts, readFile(t, "reference-cosmos-batch.json"))
	if got.Status != http.StatusOK {
		t.Fatalf("status = %d, error %q", got.Status, got.Error)
	}
	if rec.calls() != 1 || len(rec.batches[0]) != 2 {
		t.Fatalf("dispatcher saw %v", rec.batches)
	}
	var doc struct {
		ID   string  `json:"id"`
		Etag string  `json:"_etag"`
		Tot  float64 `json:"total"`
	}
	if err := json.Unmarshal(rec.batches[0][0], &doc); err != nil {
		t.Fatal(err)
	}
	if doc.ID != "order-1001" || doc.Etag != `"0000a1b2-0000-0d00-0000-65f2c1ad0000"` || doc.Tot != 42.5 {
		t.Errorf("first document = %+v", doc)
	}
}

// TestDispatcherErrorIs500AndRetried: a failing dispatcher makes the
// invocation fail (so the host's retry policy redelivers), and the
// redelivered batch reaches the dispatcher again unchanged.
func TestDispatcherErrorIs500AndRetried(t *testing.T) {
	rec := &recordingDispatcher{err: errors.New("cosmos: 503 service unavailable")}
	ts, recs := newLoggedServer(t, rec)
	body := readFile(t, "batch-double-encoded.json")
	got := postBody(t, ts, body)
	if got.Status != http.StatusInternalServerError {
		t.Fatalf("status = %d, want 500", got.Status)
	}
	if !strings.Contains(got.Error, "dispatching a batch of 3 documents: cosmos: 503") {
		t.Errorf("Error = %q", got.Error)
	}
	// The cause is in the record (stderr); the host drops a failed
	// invocation's Logs.
	r := recs.Wait(t, MsgBatch)
	testsupport.WantAttrs(t, r, map[string]any{"level": "ERROR", "status": 500, "documents": 3,
		"error": "dispatching a batch of 3 documents: cosmos: 503 service unavailable"})
	rec.mu.Lock()
	rec.err = nil
	rec.mu.Unlock()
	if again := postBody(t, ts, body); again.Status != http.StatusOK {
		t.Fatalf("redelivery status = %d", again.Status)
	}
	if rec.calls() != 2 || strings.Join(compactAll(t, rec.batches[0]), "") != strings.Join(compactAll(t, rec.batches[1]), "") {
		t.Error("the redelivered batch differs from the first delivery")
	}
}

func TestEmptyBatchSkipsDispatcher(t *testing.T) {
	for _, docs := range []string{`"\"[]\""`, `"[]"`, `[]`} {
		rec := &recordingDispatcher{}
		ts, recs := newLoggedServer(t, rec)
		got := postBody(t, ts, []byte(`{"Data":{"documents":`+docs+`}}`))
		if got.Status != http.StatusOK {
			t.Errorf("%s: %d %q", docs, got.Status, got.Error)
		}
		testsupport.WantAttrs(t, recs.Wait(t, MsgBatch), map[string]any{"documents": 0, "operations": 0, "cs_calls": 0})
		if rec.calls() != 0 {
			t.Errorf("%s: dispatcher called for an empty batch", docs)
		}
	}
}

// TestMalformedBatches: each is a 400 naming the problem, and the
// dispatcher is never called.
func TestMalformedBatches(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"missing documents", `{"Data":{"docs":"[]"}}`, `Data.documents is missing (Data has keys "docs")`},
		{"documents null", `{"Data":{"documents":null}}`, "Data.documents is null"},
		{"documents number", `{"Data":{"documents":42}}`, "Data.documents is a number"},
		{"documents object", `{"Data":{"documents":{"id":"x"}}}`, "Data.documents is an object"},
		{"documents boolean", `{"Data":{"documents":true}}`, "Data.documents is a boolean"},
		{"string not JSON", `{"Data":{"documents":"not json"}}`, `content is not JSON: "not json"`},
		{"inner string not JSON", `{"Data":{"documents":"\"[{\\\"id\\\":\""}}`, "content is not JSON"},
		{"double-encoded object", `{"Data":{"documents":"\"{\\\"id\\\":1}\""}}`, "Data.documents is an object"},
		{"triple-encoded", `{"Data":{"documents":"\"\\\"[]\\\"\""}}`, "more than 2 layers"},
		{"empty string", `{"Data":{"documents":""}}`, "content is not JSON"},
		{"element is a number", `{"Data":{"documents":[{"id":"a"},7]}}`, "Data.documents[1] is a number, not a JSON object"},
		{"element is a string", `{"Data":{"documents":"[\"doc\"]"}}`, "Data.documents[0] is a string"},
		{"element is null", `{"Data":{"documents":"\"[{},{},null]\""}}`, "Data.documents[2] is null"},
		{"element is an array", `{"Data":{"documents":[[{"id":"a"}]]}}`, "Data.documents[0] is an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingDispatcher{}
			ts := newServer(t, rec)
			got := postBody(t, ts, []byte(tt.body))
			if got.Status != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400 (error %q)", got.Status, got.Error)
			}
			if !strings.Contains(got.Error, tt.want) {
				t.Errorf("Error = %q, want it to contain %q", got.Error, tt.want)
			}
			if rec.calls() != 0 {
				t.Error("dispatcher was called")
			}
		})
	}
}

func TestGarbledRetryContextDoesNotCostTheBatch(t *testing.T) {
	rec := &recordingDispatcher{}
	ts := newServer(t, rec)
	got := postBody(t, ts, []byte(`{"Data":{"documents":"[{\"id\":\"a\"}]"},"Metadata":{"RetryContext":[1,2]}}`))
	if got.Status != http.StatusOK || rec.calls() != 1 {
		t.Fatalf("status = %d, calls = %d", got.Status, rec.calls())
	}
}

// BenchmarkInvokeBatch runs a host-sized batch (100 documents,
// double-encoded) through the whole handler: middleware, envelope decode,
// documents decode and result encoding, with a dispatcher that does nothing.
func BenchmarkInvokeBatch(b *testing.B) {
	var three []json.RawMessage
	src, err := os.ReadFile(filepath.Join("..", "..", "events", "testdata", "documents.json"))
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(src, &three); err != nil {
		b.Fatal(err)
	}
	batch := make([][]byte, 0, 100)
	for len(batch) < 100 {
		batch = append(batch, three[len(batch)%len(three)])
	}
	docs, err := events.EncodeDocuments(batch)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := json.Marshal(events.InvokeRequest{Data: map[string]json.RawMessage{"documents": docs}})
	s := handlers.New(handlers.Config{}, nil)
	if err := New(nopDispatcher{}, nil).Register(s); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		rr := httptest.NewRecorder()
		s.ServeHTTP(rr, httptest.NewRequest(http.MethodPost, "/"+Name, bytes.NewReader(body)))
		if rr.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rr.Code, rr.Body)
		}
	}
}

type nopDispatcher struct{}

func (nopDispatcher) DispatchDocuments(ctx context.Context, docs []json.RawMessage) (lifecycle.DispatchResult, error) {
	return lifecycle.DispatchResult{Documents: len(docs)}, nil
}

func TestLastAttempt(t *testing.T) {
	tests := []struct {
		rc   *events.RetryContext
		want bool
	}{
		{nil, true}, // no retry policy: the host checkpoints past any failure
		{&events.RetryContext{RetryCount: 0, MaxRetryCount: 5}, false},
		{&events.RetryContext{RetryCount: 4, MaxRetryCount: 5}, false},
		{&events.RetryContext{RetryCount: 5, MaxRetryCount: 5}, true},
		{&events.RetryContext{RetryCount: 0, MaxRetryCount: 0}, true},
		{&events.RetryContext{RetryCount: 1000, MaxRetryCount: -1}, false}, // forever
	}
	for _, tt := range tests {
		if got := lastAttempt(tt.rc); got != tt.want {
			t.Errorf("lastAttempt(%+v) = %v, want %v", tt.rc, got, tt.want)
		}
	}
}
