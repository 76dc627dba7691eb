package devhost

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/localstore"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clock"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/armsink"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
)

func TestMain(m *testing.M) { os.Exit(cosmostest.Main(m)) }

// cosmosDevEnv is the environment of a dev on a fresh database of the
// Cosmos-compatible test server, as a user would set it.
func cosmosDevEnv(cfg cosmos.Config) map[string]string { return cosmostest.Settings(cfg) }

// devRun is one hcpopsctl dev on Cosmos DB, running until stop.
type devRun struct {
	host *triggerhost.Host
	sim  *simulator.Simulator
	out  syncBuffer
	logs syncBuffer
	stop func() error
}

func startCosmosDev(t *testing.T, o options, env map[string]string) *devRun {
	t.Helper()
	o.samples, o.exitWhenDone, o.timeout = false, false, 0
	r := &devRun{}
	ctx, cancel := context.WithCancel(context.Background())
	hosts := make(chan *triggerhost.Host, 1)
	o.hooks.started = func(h *triggerhost.Host) { hosts <- h }
	o.hooks.simulator = func(s *simulator.Simulator) { r.sim = s }
	done := make(chan error, 1)
	go func() { done <- run(ctx, o, &r.out, &r.logs, env) }()
	stopped := false
	r.stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			return <-done
		}
		return nil
	}
	t.Cleanup(func() { _ = r.stop() })
	select {
	case r.host = <-hosts:
	case err := <-done:
		t.Fatalf("dev stopped before serving: %v\n%s\n%s", err, r.out.String(), r.logs.String())
	case <-time.After(60 * time.Second):
		t.Fatal("dev did not start within 60s")
	}
	return r
}

// records returns the JSON log records named msg.
func (r *devRun) records(msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(r.logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// dispatches returns the function (dispatchOperations: the change feed;
// pollOperations: the tick's safety net) of every dispatch of operation.
func (r *devRun) dispatches(operation string) []string {
	var out []string
	for _, rec := range r.records("operation.dispatched") {
		if rec["operation_id"] == operation {
			out = append(out, rec["function"].(string))
		}
	}
	return out
}

// createCluster writes a cluster create the way ARO-HCP's frontend does,
// with its own client of the database, and returns the operation.
func createCluster(t *testing.T, fe *frontend.Frontend, sub, name, notifyURI string) *document.OperationDocument {
	t.Helper()
	id := "/subscriptions/" + sub + "/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name
	a, err := fe.PutCluster(context.Background(), id, clusterSpec(nil), frontend.Options{Location: sampleLocation,
		TenantID: devTenantID, ClientID: devClientID, NotificationURI: notifyURI})
	if err != nil {
		t.Fatalf("writing the cluster create %s: %v", name, err)
	}
	return a.Operation
}

// waitTerminal waits until the sink was notified of uri and returns the
// operation as stored.
func waitTerminal(t *testing.T, st store.Store, sink *armsink.Sink, op *document.OperationDocument, uri string) *document.OperationDocument {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := sink.AwaitNotified(ctx, uri); err != nil {
		t.Fatal(err)
	}
	it, err := st.Get(context.Background(), op.PartitionKey, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := document.ParseOperation(it.Body)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestDevOnCosmos: hcpopsctl dev on the Cosmos-compatible server, with the
// database created for it. A cluster create written as the frontend writes
// it is dispatched by the change feed (not the tick's safety net), polled
// to Succeeded and notified. Dev stopped and started again resumes from
// its lease in the leases container: an operation written while it was
// down is dispatched, and nothing done before is dispatched again.
func TestDevOnCosmos(t *testing.T) {
	cfg := cosmostest.Config(t)
	env := cosmosDevEnv(cfg)
	feStore, err := cosmos.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer feStore.Close()
	defer func() { _ = feStore.DropDatabase(context.Background()) }()
	sink, err := armsink.Start(t.Context(), armsink.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	fe := frontend.New(feStore, clock.Real{}, uuid.NewString)
	sub := uuid.NewString()
	o := fastOptions(t)

	first := startCosmosDev(t, o, env)
	banner := first.out.String()
	for _, want := range []string{"store          Cosmos DB " + cfg.Endpoint + " database " + cfg.Database,
		"containers Resources and leases created if missing", "leases         leases container, hcpops-dev.<function>"} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
	if err := feStore.CheckContainers(context.Background()); err != nil {
		t.Fatalf("dev did not create the containers as upstream deploys them: %v", err)
	}

	uriA := sink.URI("a")
	opA := createCluster(t, fe, sub, "a", uriA)
	doneA := waitTerminal(t, feStore, sink, opA, uriA)
	if doneA.Properties.Status != arm.ProvisioningStateSucceeded {
		t.Fatalf("cluster a ended %s, want Succeeded", doneA.Properties.Status)
	}
	if got := first.dispatches(opA.Name()); len(got) != 1 || got[0] != "dispatchOperations" {
		t.Fatalf("cluster a was dispatched by %v, want once by the change feed (dispatchOperations)\n%s", got, first.logs.String())
	}
	if st := first.host.FeedStats(); st.Deliveries == 0 {
		t.Errorf("feed stats %+v: no change-feed delivery", st)
	}
	if err := first.stop(); err != nil {
		t.Fatalf("first dev: %v\n%s", err, first.logs.String())
	}
	leases, err := feStore.Leases()
	if err != nil {
		t.Fatal(err)
	}
	lease, err := leases.Get(context.Background(), "hcpops-dev.dispatchOperations")
	if err != nil {
		t.Fatalf("the dispatch lease is not in the leases container: %v", err)
	}
	var l struct{ Continuation, Owner string }
	if err := json.Unmarshal(lease.Body, &l); err != nil || l.Continuation == "" || l.Owner != "" {
		t.Fatalf("lease after a clean stop = %s, want a position and no owner", lease.Body)
	}

	// Written while no dev runs: only the lease can bring it.
	uriB := sink.URI("b")
	opB := createCluster(t, fe, sub, "b", uriB)

	second := startCosmosDev(t, o, env)
	doneB := waitTerminal(t, feStore, sink, opB, uriB)
	if doneB.Properties.Status != arm.ProvisioningStateSucceeded {
		t.Fatalf("cluster b ended %s, want Succeeded", doneB.Properties.Status)
	}
	if got := second.dispatches(opB.Name()); len(got) != 1 || got[0] != "dispatchOperations" {
		t.Errorf("cluster b was dispatched by %v, want once by the change feed", got)
	}
	if len(second.records("change feed resuming from lease")) != 1 {
		t.Errorf("the second dev did not resume from its lease:\n%s", second.logs.String())
	}
	if got := second.dispatches(opA.Name()); len(got) != 0 {
		t.Errorf("cluster a was dispatched again after the restart, by %v", got)
	}
	// The ledger is kept with the simulator's objects: the first run's
	// POST, then b's.
	if n := second.sim.Ledger().Count("POST", cs.ClustersPath) - first.sim.Ledger().Count("POST", cs.ClustersPath); n != 1 {
		t.Errorf("the second dev posted %d clusters to Clusters Service, want 1 (b only)", n)
	}
	if err := second.stop(); err != nil {
		t.Fatalf("second dev: %v", err)
	}
}

// TestDevOnCosmosRefusals: what a run on Cosmos DB cannot honour is refused
// before anything is created, with a message naming what to do.
func TestDevOnCosmosRefusals(t *testing.T) {
	cfg := cosmostest.Config(t)
	tests := []struct {
		name string
		env  map[string]string
		opts func(*options)
		want []string
	}{
		{"-reset empties only the embedded store", cosmosDevEnv(cfg), func(o *options) { o.reset = true },
			[]string{"-reset empties the embedded store", "CosmosDB is set, so this run uses cosmos " + cfg.Endpoint + " database " + cfg.Database}},
		{"an empty database name", map[string]string{"CosmosDB": cosmosDevEnv(cfg)["CosmosDB"], "COSMOS_DATABASE": ""}, nil,
			[]string{"setting COSMOS_DATABASE: database name is empty"}},
		{"missing containers without -create-containers", cosmosDevEnv(cfg), func(o *options) { o.createContainers = new(false) },
			[]string{"database " + cfg.Database, "pass -create-containers to create it as upstream deploys it"}},
		{"the test server's expired certificate", map[string]string{"CosmosDB": cosmosDevEnv(cfg)["CosmosDB"], "COSMOS_DATABASE": cfg.Database}, nil,
			[]string{"x509", "COSMOS_CA_FILE", "COSMOS_INSECURE_LOOPBACK=true"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := fastOptions(t)
			o.samples, o.exitWhenDone = false, false
			if tc.opts != nil {
				tc.opts(&o)
			}
			var out, logs syncBuffer
			err := run(context.Background(), o, &out, &logs, tc.env)
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Fatalf("run = %v, want it to say %q", err, w)
				}
			}
		})
	}
	check, err := cosmos.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	if err := check.CheckContainers(context.Background()); !errors.Is(err, cosmos.ErrMissing) {
		t.Errorf("after the refused runs CheckContainers = %v, want the database still missing", err)
	}
}

// TestCLIWithAnotherStoreThanTheRunningDevIsRefused: with CosmosDB
// exported for the CLI while dev runs on the embedded store, the CLI
// refuses, naming both, instead of writing where dev never looks.
func TestCLIWithAnotherStoreThanTheRunningDevIsRefused(t *testing.T) {
	var out, logs syncBuffer
	o := fastOptions(t)
	startDev(t, o, &out, &logs)
	env := cosmosDevEnv(cosmos.Config{Endpoint: "https://127.0.0.1:9/", Key: cosmostest.EmulatorKey, Database: "rp"})
	env[localstore.EnvDataDir] = o.dataDir
	_, _, err := localstore.ConnectStore(context.Background(), func(k string) string { return env[k] }, localstore.ReadWrite, slog.New(slog.DiscardHandler))
	for _, w := range []string{"CosmosDB (or CosmosDB__accountEndpoint) is set here",
		"would use cosmos https://127.0.0.1:9/ database rp", "but hcpopsctl dev (pid", "uses " + localstore.EmbeddedStoreName(o.dataDir)} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("ConnectStore = %v, want it to say %q", err, w)
		}
	}
}

func TestCreateContainersFlag(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	for _, tc := range []struct {
		args []string
		want string
	}{{nil, "auto"}, {[]string{"-create-containers"}, "true"}, {[]string{"-create-containers=false"}, "false"}} {
		o, err := parseOptions(tc.args, noEnv, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := (optionalBool{&o.createContainers}).String(); got != tc.want {
			t.Errorf("%q: -create-containers = %s, want %s", tc.args, got, tc.want)
		}
	}
	if _, err := parseOptions([]string{"-create-containers=maybe"}, noEnv, io.Discard); err == nil {
		t.Error("-create-containers=maybe accepted")
	}
	if _, err := parseOptions([]string{"-cs-addr", "0.0.0.0:8000"}, noEnv, io.Discard); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("-cs-addr on every interface: %v, want a refusal", err)
	}
}
