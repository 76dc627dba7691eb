package armread

import (
	"context"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/lifecycletest"
	"github.com/hcpops/hcpops/harness/store/counting"
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

// env is a lifecycletest kit, whose engine writes the operations, and the
// read service under test on its store, counted: it must write nothing.
type env struct {
	*lifecycletest.Kit
	store *counting.Store
	reads *ReadService
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{}
	e.Kit = lifecycletest.New(t, lifecycletest.Options{Store: func(s store.Store) store.Store {
		e.store = counting.New(s)
		return e.store
	}})
	var err error
	if e.reads, err = NewReadService(ReadDeps{Store: e.store, ClusterService: e.CS, Logger: e.Logger}, ReadConfig{}); err != nil {
		t.Fatal(err)
	}
	return e
}

// create PUTs a new cluster at rid (the only kind these tests need).
func (e *env) create(t testing.TB, kind document.Kind, rid string, _ request) string {
	t.Helper()
	if kind != document.KindCluster {
		t.Fatalf("create: the read service's tests make clusters only, not a %s", kind)
	}
	return e.Submit(t, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.PutCluster(ctx, rid, frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable",
			ManagedResourceGroup: rid[strings.LastIndex(rid, "/")+1:] + "-mrg"}, o)
	})
}

// remove is a DELETE of a cluster with no children: its operation's name.
func (e *env) remove(t testing.TB, rid string, _ request) []string {
	t.Helper()
	return []string{e.Submit(t, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.Delete(ctx, rid, o)
	})}
}

// requestCredential is POST requestadmincredential.
func (e *env) requestCredential(t testing.TB, cluster string, _ request) string {
	t.Helper()
	return e.Submit(t, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.RequestCredential(ctx, clusterRID(cluster), o)
	})
}

// readyCluster creates cluster name and drives it to Succeeded.
func (e *env) readyCluster(t testing.TB, name string) {
	t.Helper()
	op := e.create(t, document.KindCluster, clusterRID(name), request{})
	e.Drive(t, op)
	e.WantOp(t, op, arm.ProvisioningStateSucceeded, "")
}

type obj = map[string]any

func props(doc obj) obj { return doc["properties"].(obj) }

// newOp is the kit's NewOp, in the shape the lifecycle's tests call it.
func (e *env) newOp(t testing.TB, req document.Request, externalID, internalID string, _ request) (*document.OperationDocument, []byte) {
	t.Helper()
	return e.NewOp(t, req, externalID, internalID)
}

// batch writes one transaction straight to the store.
func (e *env) batch(t testing.TB, ops []store.BatchOp) {
	t.Helper()
	if _, err := e.store.Store.Batch(context.Background(), testPK, ops); err != nil {
		t.Fatalf("raw batch: %v", err)
	}
}
