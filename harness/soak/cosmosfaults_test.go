package soak

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
)

func TestCosmosKind(t *testing.T) {
	doc, coll := docsRequest{container: "Resources", id: "x"}, docsRequest{container: "Resources"}
	for _, tc := range []struct {
		method string
		docs   docsRequest
		header map[string]string
		want   string
	}{
		{http.MethodGet, doc, nil, cosmosRead},
		{http.MethodPut, doc, nil, cosmosReplace},
		{http.MethodPost, coll, map[string]string{"x-ms-cosmos-is-batch-request": "True"}, cosmosBatch},
		{http.MethodPost, coll, map[string]string{"x-ms-documentdb-isquery": "true"}, cosmosQuery},
		{http.MethodPost, coll, map[string]string{"Content-Type": "application/query+json"}, cosmosQuery},
		{http.MethodPost, coll, nil, ""}, // a create
		{http.MethodDelete, doc, nil, ""},
		{http.MethodGet, coll, nil, ""}, // the change feed
	} {
		r := httptest.NewRequest(tc.method, "/", nil)
		for k, v := range tc.header {
			r.Header.Set(k, v)
		}
		batch := r.Header.Get("x-ms-cosmos-is-batch-request") != ""
		if got := cosmosKind(r, tc.docs, batch); got != tc.want {
			t.Errorf("%s %+v %v: %q, want %q", tc.method, tc.docs, tc.header, got, tc.want)
		}
	}
}

func TestCosmosFaultsDrawAndRefuse(t *testing.T) {
	f := newCosmosFaults(1)
	f.throttle, f.unavailable, f.timeout, f.slow = 0.25, 0.25, 0.25, 0.25
	for range 400 {
		fault, wait := f.draw(cosmosBatch)
		w := httptest.NewRecorder()
		refused := refuse(w, fault, wait)
		switch fault {
		case faultThrottle:
			ms, err := strconv.Atoi(w.Header().Get("x-ms-retry-after-ms"))
			if !refused || w.Code != http.StatusTooManyRequests || err != nil || ms < 20 || ms >= 200 {
				t.Fatalf("throttled: %d, x-ms-retry-after-ms %q", w.Code, w.Header().Get("x-ms-retry-after-ms"))
			}
		case faultUnavailable, faultTimeout:
			if !refused || strconv.Itoa(w.Code) != fault {
				t.Fatalf("%s answered %d", fault, w.Code)
			}
		case faultSlow:
			if refused || wait < 0 || wait >= f.slowFor {
				t.Fatalf("slow: refused %v, wait %s", refused, wait)
			}
		default:
			t.Fatalf("fault %q with every rate summing to 1", fault)
		}
	}
	got := f.snapshot()[cosmosBatch]
	for _, fault := range cosmosFaultNames {
		if got[fault] < 50 {
			t.Errorf("%s drawn %d times in 400 at 25%%", fault, got[fault])
		}
	}
	if fault, _ := f.draw(""); fault != "" {
		t.Errorf("a request of no kind drew %q", fault)
	}
	var none *cosmosFaults
	if fault, _ := none.draw(cosmosRead); fault != "" {
		t.Errorf("no faults drew %q", fault)
	}
}

func TestCosmosFaultsMeetEveryKindEarly(t *testing.T) {
	f := newCosmosFaults(1)
	f.throttle, f.unavailable, f.timeout, f.slow = 1e-12, 1e-12, 1e-12, 1e-12
	var got []string
	for range 100 {
		if fault, _ := f.draw(cosmosQuery); fault != "" {
			got = append(got, fault)
		}
	}
	if strings.Join(got, " ") != "429 503 408 slow" {
		t.Errorf("faults in 100 queries at negligible rates: %v, want each once, in turn", got)
	}
	f.throttle = 0 // a fault switched off is never pinned
	f.seen = map[string]int{}
	for range 40 {
		if fault, _ := f.draw(cosmosRead); fault == faultThrottle {
			t.Fatal("a read was throttled at rate 0")
		}
	}
}

// TestCosmosProxyFaults goes through the real store client: throttling is
// retried as the service asks, a refused write writes nothing, and the
// clean door is never disturbed.
func TestCosmosProxyFaults(t *testing.T) {
	cfg := cosmostest.Config(t)
	ledger := newWriteLedger()
	faults := newCosmosFaults(7)
	faults.throttle, faults.unavailable, faults.timeout, faults.slow = 0.3, 0, 0, 0
	p, err := startCosmosProxy(cfg.Endpoint, ledger, false, faults, slog.New(slog.DiscardHandler))
	must(t, err)
	t.Cleanup(func() { _ = p.Close() })
	open := func(url string) *cosmos.Store {
		c := cfg
		c.Endpoint, c.InsecureLoopbackTLS = url, false
		s, err := cosmos.New(c)
		must(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	clean, faulty := open(p.url), open(p.faultyURL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	must(t, clean.EnsureContainers(ctx))
	t.Cleanup(func() { _ = clean.DropDatabase(context.Background()) })

	it, err := clean.Create(ctx, proxyPK, testDoc("a", 1))
	must(t, err)
	for v := 2; v <= 11; v++ {
		if it, err = faulty.Replace(ctx, proxyPK, "a", testDoc("a", v), it.ETag); err != nil {
			t.Fatalf("replace to version %d through 30%% throttling: %v", v, err)
		}
	}
	if n := faults.snapshot()[cosmosReplace][faultThrottle]; n == 0 {
		t.Error("no replace was throttled at 30%")
	}

	faults.mu.Lock()
	faults.throttle, faults.unavailable = 0, 1
	faults.mu.Unlock()
	before := len(ledger.snapshot()[docKey{proxyPK, "a"}])
	if _, err := faulty.Replace(ctx, proxyPK, "a", testDoc("a", 12), it.ETag); err == nil {
		t.Fatal("a replace answered 503 succeeded")
	}
	if _, err := faulty.Batch(ctx, proxyPK, []store.BatchOp{{Kind: store.OpReplace, ID: "a", Body: testDoc("a", 12), IfMatch: it.ETag}}); err == nil {
		t.Fatal("a batch answered 503 succeeded")
	}
	got, err := clean.Get(ctx, proxyPK, "a")
	must(t, err)
	if v, err := readVersion(got.Body); err != nil || v.version != 11 || got.ETag != it.ETag {
		t.Errorf("after refused writes the document is version %d etag %s (%v), want 11 %s", v.version, got.ETag, err, it.ETag)
	}
	if after := len(ledger.snapshot()[docKey{proxyPK, "a"}]); after != before {
		t.Errorf("refused writes were recorded: %d writes, want %d", after, before)
	}
	if _, err := clean.Replace(ctx, proxyPK, "a", testDoc("a", 12), it.ETag); err != nil {
		t.Errorf("the clean door was disturbed: %v", err)
	}
}
