package armread

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/csfake"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/store/counting"
	"github.com/hcpops/hcpops/harness/store/memory"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// The read service is tested on what the lifecycle writes: operations are
// requested through harness/frontend (ARO-HCP's frontend writes) and
// driven by the real engine against Clusters Service as csfake, on the
// memory store and one manual clock.

// The ARM identity the tests request under: testsupport's fixture.
const (
	testSub    = testsupport.Subscription
	testPK     = testSub
	testRG     = testsupport.ResourceGroup
	testTenant = testsupport.Tenant
	testClient = testsupport.Client
)

var (
	clusterRID      = testsupport.ClusterRID
	nodePoolRID     = testsupport.NodePoolRID
	externalAuthRID = testsupport.ExternalAuthRID
)

// request is what the caller of an ARM request sends (nothing the read
// service looks at: these tests notify no one).
type request struct{}

// env is a store, Clusters Service, the engine that writes the operations
// and the read service under test.
type env struct {
	clk    *testsupport.Clock
	store  *counting.Store // the read service must write nothing
	sim    *simulator.Simulator
	cs     *ocm.Client
	engine *lifecycle.Engine
	reads  *ReadService
	logs   *testsupport.Buffer
	feed   string
}

// noARM is the engine's notifier; no operation here carries a
// notification URI, so it is never asked.
type noARM struct{}

func (noARM) Notify(context.Context, string, arm.OperationStatus) error {
	return errors.New("no ARM endpoint in the read service's tests")
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{clk: testsupport.NewClock(testsupport.Epoch()), logs: &testsupport.Buffer{}}
	st := memory.New(memory.WithClock(e.clk))
	t.Cleanup(func() { _ = st.Close() })
	e.store = counting.New(st)
	m := time.Minute
	calls := clusterservice.NewRecorder(e.clk, nil)
	fake := csfake.New(t, csfake.Config{RetryLimit: 2, Timeout: 10 * time.Second, Recorder: calls},
		simulator.WithClock(e.clk), simulator.WithDurations(simulator.Durations{
			ClusterValidating: m, ClusterPending: m, ClusterInstalling: m, CredentialIssuing: m, CredentialExpiry: 24 * time.Hour,
		}))
	e.sim, e.cs = fake.Sim, fake.Client
	logger := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var err error
	if e.engine, err = lifecycle.New(lifecycle.Deps{Store: e.store, ClusterService: e.cs, Calls: calls, Notifier: noARM{},
		Clock: e.clk, Logger: logger}, lifecycle.Config{}); err != nil {
		t.Fatal(err)
	}
	if e.reads, err = NewReadService(ReadDeps{Store: e.store, ClusterService: e.cs, Logger: logger}, ReadConfig{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("LIFECYCLE_TEST_LOGS") != "" {
			t.Logf("log:\n%s", e.logs.String())
		}
	})
	return e
}

// submit makes one request through the frontend, straight to the memory
// store (those writes are not the engine's), and returns the operation's
// name.
func (e *env) submit(t testing.TB, call func(context.Context, *frontend.Frontend, frontend.Options) (frontend.Accepted, error)) string {
	t.Helper()
	fe := frontend.New(e.store.Store, e.clk, uuid.NewString)
	accepted, err := call(context.Background(), fe, frontend.Options{TenantID: testTenant, ClientID: testClient,
		ClientRequestID: uuid.NewString(), CorrelationRequestID: uuid.NewString()})
	if err != nil {
		t.Fatalf("frontend refused the request: %v", err)
	}
	return accepted.Operation.Name()
}

// create PUTs a new cluster at rid (the only kind these tests need).
func (e *env) create(t testing.TB, kind document.Kind, rid string, _ request) string {
	t.Helper()
	if kind != document.KindCluster {
		t.Fatalf("create: the read service's tests make clusters only, not a %s", kind)
	}
	return e.submit(t, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.PutCluster(ctx, rid, frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable",
			ManagedResourceGroup: rid[strings.LastIndex(rid, "/")+1:] + "-mrg"}, o)
	})
}

// remove is a DELETE of a cluster with no children: its operation's name.
func (e *env) remove(t testing.TB, rid string, _ request) []string {
	t.Helper()
	return []string{e.submit(t, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.Delete(ctx, rid, o)
	})}
}

// requestCredential is POST requestadmincredential.
func (e *env) requestCredential(t testing.TB, cluster string, _ request) string {
	t.Helper()
	return e.submit(t, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.RequestCredential(ctx, clusterRID(cluster), o)
	})
}

// drive runs the host loop (the change feed's batch, a tick, a minute)
// until every named operation is terminal.
func (e *env) drive(t testing.TB, names ...string) {
	t.Helper()
	ctx := context.Background()
	for range 40 {
		var docs []json.RawMessage
		for {
			page, err := e.store.ChangeFeed(ctx, e.feed, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Items {
				docs = append(docs, json.RawMessage(it.Body))
			}
			if e.feed = page.Continuation; len(page.Items) == 0 {
				break
			}
		}
		if len(docs) > 0 {
			_, _ = e.engine.DispatchDocuments(ctx, docs) // a failed batch is the tick's to finish
		}
		if _, err := e.engine.Tick(ctx); err != nil {
			t.Fatalf("Tick: %v", err)
		}
		done := true
		for _, n := range names {
			if op := e.op(t, n); op == nil || !op.Properties.Status.IsTerminal() {
				done = false
			}
		}
		if done {
			return
		}
		e.clk.Advance(time.Minute)
	}
	t.Fatalf("operations %v did not finish in 40 rounds", names)
}

// readyCluster creates cluster name and drives it to Succeeded.
func (e *env) readyCluster(t testing.TB, name string) {
	t.Helper()
	op := e.create(t, document.KindCluster, clusterRID(name), request{})
	e.drive(t, op)
	e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
}

// op reads operation name as stored; nil when it is gone.
func (e *env) op(t testing.TB, name string) *document.OperationDocument {
	t.Helper()
	item, err := e.store.Get(context.Background(), testPK, document.CosmosID(document.OperationResourceID(testSub, name)))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading operation %s: %v", name, err)
	}
	op, err := document.ParseOperation(item.Body)
	if err != nil {
		t.Fatalf("parsing operation %s: %v", name, err)
	}
	return op
}

// wantOp checks an operation's status and error code ("" for none).
func (e *env) wantOp(t testing.TB, name string, status arm.ProvisioningState, code string) {
	t.Helper()
	op := e.op(t, name)
	if op == nil {
		t.Fatalf("operation %s is gone", name)
	}
	got := ""
	if op.Properties.Error != nil {
		got = op.Properties.Error.Code
	}
	if op.Properties.Status != status || got != code {
		t.Fatalf("operation %s: %s %q, want %s %q", name, op.Properties.Status, got, status, code)
	}
}

type obj = map[string]any

func props(doc obj) obj { return doc["properties"].(obj) }

// newOp builds an operation document as the frontend does, for a test to
// bend before writing it.
func (e *env) newOp(t testing.TB, req document.Request, externalID, internalID string, _ request) (*document.OperationDocument, []byte) {
	t.Helper()
	op, err := document.NewOperation(document.NewOperationParams{
		Request: req, ExternalID: externalID, InternalID: internalID, Location: "eastus", Name: uuid.NewString(), Now: e.clk.Now(),
		TenantID: testTenant, ClientID: testClient, ClientRequestID: uuid.NewString(), CorrelationRequestID: uuid.NewString(),
	})
	if err != nil {
		t.Fatalf("NewOperation: %v", err)
	}
	body, err := op.MarshalCreate()
	if err != nil {
		t.Fatalf("MarshalCreate: %v", err)
	}
	return op, body
}

// batch writes one transaction straight to the store.
func (e *env) batch(t testing.TB, ops []store.BatchOp) {
	t.Helper()
	if _, err := e.store.Store.Batch(context.Background(), testPK, ops); err != nil {
		t.Fatalf("raw batch: %v", err)
	}
}

// editDoc rewrites a stored document by hand, as an operator or another
// version of the RP might have left it.
func (e *env) editDoc(t testing.TB, rid string, edit func(obj)) {
	t.Helper()
	ctx := context.Background()
	item, err := e.store.Get(ctx, testPK, document.CosmosID(rid))
	if err != nil {
		t.Fatalf("reading %s: %v", rid, err)
	}
	var doc obj
	if err := json.Unmarshal(item.Body, &doc); err != nil {
		t.Fatalf("decoding %s: %v", rid, err)
	}
	for _, k := range []string{"_rid", "_self", "_etag", "_attachments", "_ts"} {
		delete(doc, k)
	}
	edit(doc)
	body, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Store.Replace(ctx, testPK, document.CosmosID(rid), body, item.ETag); err != nil {
		t.Fatalf("editing %s: %v", rid, err)
	}
}
