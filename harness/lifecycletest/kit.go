// Package lifecycletest is a lifecycle wired for tests, as
// controller-runtime's envtest is a control plane: the memory store,
// Clusters Service as csfake (the simulator behind the production ocm
// client, no socket), an ARM notification sink reached in memory, a
// frontend that writes as ARO-HCP's does, and the real engine, all on one
// manual clock from testsupport.Epoch. A package's tests build a Kit with
// New and keep only what is their own.
//
// The lifecycle's own tests cannot use it (their package would import
// itself); they keep the rig that reaches the engine's insides.
package lifecycletest

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/notification"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/armsink"
	"github.com/hcpops/hcpops/harness/csfake"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/invoke"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/store/memory"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// PartitionKey is the partition of every document a Kit's frontend
// writes: testsupport's subscription.
const PartitionKey = testsupport.Subscription

// Options shape a Kit; the zero value is a Kit as most tests want it.
type Options struct {
	// Config is the engine's; zero fields take the lifecycle's defaults.
	Config lifecycle.Config
	// Durations are how long CS's objects stay in each state; nil:
	// Durations().
	Durations *simulator.Durations
	// Store wraps the memory store the engine is given (a recording or
	// counting store); nil: the memory store itself.
	Store func(store.Store) store.Store
}

// Kit is one lifecycle under test. Its fields are the parts, for a test
// to drive or inspect; build it with New.
type Kit struct {
	Clock *testsupport.Clock
	// Memory is the store underneath; Store is what the engine uses.
	Memory *memory.Store
	Store  store.Store
	Fake   *csfake.CS
	Sim    *simulator.Simulator
	CS     *ocm.Client
	// Calls is what the CS client's transport records.
	Calls *clusterservice.Recorder
	// Sink answers every notification URI of SinkURL's host.
	Sink   *armsink.Sink
	Logs   *testsupport.Buffer
	Logger *slog.Logger
	Engine *lifecycle.Engine
	Config lifecycle.Config

	feedMu  sync.Mutex
	feedPos string
}

// Durations are a minute in every state CS passes through, and a day for
// a credential to expire.
func Durations() simulator.Durations { return simulator.EveryStateTakes(time.Minute) }

// New wires a Kit; everything it opens closes when t ends, and a failing
// t prints the engine's log.
func New(t testing.TB, o Options) *Kit {
	t.Helper()
	k := &Kit{Clock: testsupport.NewClock(testsupport.Epoch()), Logs: &testsupport.Buffer{}, Config: o.Config}
	k.Logger = slog.New(slog.NewTextHandler(k.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	k.Memory = memory.New(memory.WithClock(k.Clock))
	t.Cleanup(func() { _ = k.Memory.Close() })
	k.Store = k.Memory
	if o.Store != nil {
		k.Store = o.Store(k.Memory)
	}
	d := Durations()
	if o.Durations != nil {
		d = *o.Durations
	}
	k.Calls = clusterservice.NewRecorder(k.Clock, nil)
	k.Fake = csfake.New(t, csfake.Config{RetryLimit: 2, Timeout: 10 * time.Second, Recorder: k.Calls},
		simulator.WithClock(k.Clock), simulator.WithDurations(d))
	k.Sim, k.CS = k.Fake.Sim, k.Fake.Client
	sink, err := armsink.New(armsink.Config{})
	if err != nil {
		t.Fatalf("the notification sink: %v", err)
	}
	t.Cleanup(func() { _ = sink.Close() })
	k.Sink = sink
	k.Engine = k.NewEngine(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("engine log:\n%s", k.Logs.String())
		}
	})
	return k
}

// NewEngine is another engine on the Kit's store, CS and sink: a second
// instance of the Function App, or one restarted.
func (k *Kit) NewEngine(t testing.TB) *lifecycle.Engine {
	t.Helper()
	e, err := lifecycle.New(lifecycle.Deps{Store: k.Store, ClusterService: k.CS, Calls: k.Calls,
		Notifier: k.Notifier(), Clock: k.Clock, Logger: k.Logger}, k.Config)
	if err != nil {
		t.Fatalf("lifecycle.New: %v", err)
	}
	return e
}

// Notifier is the production notifier, reaching the Kit's sink in memory;
// any other host is down.
func (k *Kit) Notifier() *notification.Notifier {
	const timeout = 5 * time.Second
	return notification.New(notification.Config{AllowLoopback: true, Timeout: timeout}, &http.Client{
		Transport:     invoke.InMemory(k.Sink),
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	})
}

// Options are a caller's frontend options: testsupport's tenant and
// client, fresh request ids, and no notification URI.
func (k *Kit) Options() frontend.Options {
	return frontend.Options{TenantID: testsupport.Tenant, ClientID: testsupport.Client,
		ClientRequestID: uuid.NewString(), CorrelationRequestID: uuid.NewString()}
}

// Submit makes one request through the frontend, straight to the memory
// store (the frontend's writes are not the engine's), and returns the
// operation's name.
func (k *Kit) Submit(t testing.TB, call func(context.Context, *frontend.Frontend, frontend.Options) (frontend.Accepted, error)) string {
	t.Helper()
	fe := frontend.New(k.Memory, k.Clock, uuid.NewString)
	accepted, err := call(context.Background(), fe, k.Options())
	if err != nil {
		t.Fatalf("the frontend refused the request: %v", err)
	}
	return accepted.Operation.Name()
}

// Feed reads the change feed from where the last call stopped, as the
// Functions host's trigger does.
func (k *Kit) Feed(t testing.TB) []json.RawMessage {
	t.Helper()
	k.feedMu.Lock()
	defer k.feedMu.Unlock()
	var docs []json.RawMessage
	for {
		page, err := k.Store.ChangeFeed(context.Background(), k.feedPos, 100)
		if err != nil {
			t.Fatalf("reading the change feed: %v", err)
		}
		for _, it := range page.Items {
			docs = append(docs, json.RawMessage(it.Body))
		}
		k.feedPos = page.Continuation
		if len(page.Items) == 0 {
			return docs
		}
	}
}

// Deliver dispatches whatever the change feed has. A failed batch is
// returned, not fatal: the host would redeliver it.
func (k *Kit) Deliver(t testing.TB) (lifecycle.DispatchResult, error) {
	t.Helper()
	docs := k.Feed(t)
	if len(docs) == 0 {
		return lifecycle.DispatchResult{}, nil
	}
	return k.Engine.DispatchDocuments(context.Background(), docs)
}

// Tick runs one poll tick; a tick that cannot run fails t.
func (k *Kit) Tick(t testing.TB) lifecycle.TickResult {
	t.Helper()
	res, err := k.Engine.Tick(context.Background())
	if err != nil {
		t.Fatalf("Tick: %v", err)
	}
	return res
}

// Drive runs the host's loop (the change feed's batch, a tick, a minute)
// until every named operation is terminal with its notification done;
// 40 rounds at most.
func (k *Kit) Drive(t testing.TB, names ...string) {
	t.Helper()
	for round := range 40 {
		if _, err := k.Deliver(t); err != nil {
			t.Logf("round %d: dispatch: %v", round, err)
		}
		k.Tick(t)
		done := true
		for _, n := range names {
			op := k.Op(t, n)
			if op == nil || !op.Properties.Status.IsTerminal() || op.Properties.NotificationURI != "" {
				done = false
			}
		}
		if done {
			return
		}
		k.Clock.Advance(time.Minute)
	}
	for _, n := range names {
		if op := k.Op(t, n); op != nil {
			t.Errorf("operation %s %s: still %s", op.Properties.Request, op.Properties.ExternalID, op.Properties.Status)
		}
	}
	t.Fatalf("operations %v did not finish in 40 rounds", names)
}

// Op reads operation name as stored; nil when it is gone.
func (k *Kit) Op(t testing.TB, name string) *document.OperationDocument {
	t.Helper()
	body := k.body(t, document.CosmosID(document.OperationResourceID(testsupport.Subscription, name)))
	if body == nil {
		return nil
	}
	op, err := document.ParseOperation(body)
	if err != nil {
		t.Fatalf("parsing operation %s: %v", name, err)
	}
	return op
}

// Resource reads the resource with ARM ID rid as stored; nil when it is
// gone.
func (k *Kit) Resource(t testing.TB, rid string) *document.Resource {
	t.Helper()
	body := k.body(t, document.CosmosID(rid))
	if body == nil {
		return nil
	}
	res, err := document.ParseResource(body)
	if err != nil {
		t.Fatalf("parsing resource %s: %v", rid, err)
	}
	return res
}

// body is the stored body of document id; nil when it is gone.
func (k *Kit) body(t testing.TB, id string) []byte {
	t.Helper()
	item, err := k.Memory.Get(context.Background(), PartitionKey, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading %s: %v", id, err)
	}
	return item.Body
}

// WantOp fails t unless operation name has status and error code code
// ("" for none); it returns the operation.
func (k *Kit) WantOp(t testing.TB, name string, status arm.ProvisioningState, code string) *document.OperationDocument {
	t.Helper()
	op := k.Op(t, name)
	if op == nil {
		t.Fatalf("operation %s is gone", name)
	}
	got := ""
	if op.Properties.Error != nil {
		got = op.Properties.Error.Code
	}
	if op.Properties.Status != status || got != code {
		t.Fatalf("operation %s: %s %q, want %s %q (error %+v)", name, op.Properties.Status, got, status, code, op.Properties.Error)
	}
	return op
}

// NewOp is an operation document as the frontend writes it, for a test
// to bend before writing it, and its body.
func (k *Kit) NewOp(t testing.TB, req document.Request, externalID, internalID string) (*document.OperationDocument, []byte) {
	t.Helper()
	op, err := document.NewOperation(document.NewOperationParams{
		Request: req, ExternalID: externalID, InternalID: internalID, Location: "eastus", Name: uuid.NewString(), Now: k.Clock.Now(),
		TenantID: testsupport.Tenant, ClientID: testsupport.Client, ClientRequestID: uuid.NewString(), CorrelationRequestID: uuid.NewString(),
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

// EditDoc rewrites the stored document of resource ID rid by hand, as an
// operator or another version of the RP might have left it.
func (k *Kit) EditDoc(t testing.TB, rid string, edit func(map[string]any)) {
	t.Helper()
	ctx := context.Background()
	item, err := k.Memory.Get(ctx, PartitionKey, document.CosmosID(rid))
	if err != nil {
		t.Fatalf("reading %s: %v", rid, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(item.Body, &doc); err != nil {
		t.Fatalf("decoding %s: %v", rid, err)
	}
	for _, sys := range []string{"_rid", "_self", "_etag", "_attachments", "_ts"} {
		delete(doc, sys)
	}
	edit(doc)
	body, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Memory.Replace(ctx, PartitionKey, document.CosmosID(rid), body, item.ETag); err != nil {
		t.Fatalf("editing %s: %v", rid, err)
	}
}
