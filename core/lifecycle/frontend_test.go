package lifecycle

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// The tests make their requests through harness/frontend, the project's one
// implementation of ARO-HCP's frontend writes, so the engine meets the
// documents a real RP database holds. rawwrites_test.go keeps only the
// writes the frontend refuses on purpose.

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

// request is what the caller of an ARM request sends.
type request struct {
	notify bool // carry an Azure-AsyncNotificationUri
}

// spec is a PUT body for each kind; a test changes the one its resource
// has.
type spec struct {
	cluster      frontend.ClusterSpec
	nodePool     frontend.NodePoolSpec
	externalAuth frontend.ExternalAuthSpec
}

// defaultSpec is what every test resource is created with.
func defaultSpec(rid string) spec {
	name := rid[strings.LastIndex(rid, "/")+1:]
	return spec{
		cluster: frontend.ClusterSpec{
			Location:                "eastus",
			VersionID:               "4.20",
			ChannelGroup:            "stable",
			ManagedResourceGroup:    name + "-mrg",
			Tags:                    map[string]string{"env": "test"},
			NodeDrainTimeoutMinutes: new(15),
			AuthorizedCIDRs:         []string{"10.0.0.0/8"},
		},
		nodePool: frontend.NodePoolSpec{
			VersionID:    "4.20.3",
			ChannelGroup: "stable",
			VMSize:       "Standard_D8s_v3",
			Replicas:     2,
			AutoRepair:   true,
			Labels:       map[string]string{"team": "blue"},
		},
		externalAuth: frontend.ExternalAuthSpec{
			IssuerURL: "https://login.microsoftonline.com/" + testTenant + "/v2.0",
			Audiences: []string{"app-1"},
		},
	}
}

// submit makes one request through the frontend, writing straight to the
// embedded store (not through the recording wrapper: those writes are not
// the engine's), and returns the accepted operation's name. The name is
// drawn first so that the notification URI can carry it: the sink tells
// operations apart by path.
func (e *env) submit(t testing.TB, r request,
	call func(context.Context, *frontend.Frontend, frontend.Options) (frontend.Accepted, error)) string {
	t.Helper()
	name := uuid.NewString()
	opts := frontend.Options{
		TenantID:             testTenant,
		ClientID:             testClient,
		ClientRequestID:      uuid.NewString(),
		CorrelationRequestID: uuid.NewString(),
	}
	if r.notify {
		opts.NotificationURI = e.sink.uri(name)
	}
	drawn := false
	fe := frontend.New(e.store.Store, e.clk, func() string {
		if drawn {
			return uuid.NewString() // implicit operations of a cluster delete
		}
		drawn = true
		return name
	})
	accepted, err := call(context.Background(), fe, opts)
	if err != nil {
		t.Fatalf("frontend refused the request: %v", err)
	}
	if got := accepted.Operation.Name(); got != name {
		t.Fatalf("frontend named the operation %s, want %s (its notification URI names the latter)", got, name)
	}
	return name
}

// put is a PUT of s at rid: a Create, or an Update when the resource exists.
func (e *env) put(t testing.TB, kind document.Kind, rid string, r request, s spec) string {
	t.Helper()
	return e.submit(t, r, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		switch kind {
		case document.KindCluster:
			return fe.PutCluster(ctx, rid, s.cluster, o)
		case document.KindNodePool:
			return fe.PutNodePool(ctx, rid, s.nodePool, o)
		case document.KindExternalAuth:
			return fe.PutExternalAuth(ctx, rid, s.externalAuth, o)
		}
		return frontend.Accepted{}, fmt.Errorf("kind: a %s cannot be PUT", kind)
	})
}

// create PUTs a new resource of kind at rid with the default spec.
func (e *env) create(t testing.TB, kind document.Kind, rid string, r request) string {
	t.Helper()
	return e.put(t, kind, rid, r, defaultSpec(rid))
}

// update PUTs the resource again with the default spec as change leaves it.
func (e *env) update(t testing.TB, rid string, r request, change func(*spec)) string {
	t.Helper()
	kind, _, err := document.ResourceKindOfID("rid", rid)
	if err != nil {
		t.Fatalf("update of %s: %v", rid, err)
	}
	s := defaultSpec(rid)
	change(&s)
	return e.put(t, kind, rid, r, s)
}

// remove is a DELETE. It returns the operation names, the requested one
// first, then for a cluster the implicit deletes of its children.
func (e *env) remove(t testing.TB, rid string, r request) []string {
	t.Helper()
	names := []string{e.submit(t, r, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.Delete(ctx, rid, o)
	})}
	kind, _, err := document.ResourceKindOfID("rid", rid)
	if err != nil {
		t.Fatalf("delete of %s: %v", rid, err)
	}
	if kind != document.KindCluster {
		return names
	}
	err = e.store.Children(context.Background(), testPK, rid, func(items []store.Item) error {
		for _, it := range items {
			if k, _ := document.Sniff(it.Body); k != document.KindNodePool && k != document.KindExternalAuth {
				continue
			}
			child, err := document.ParseResource(it.Body)
			if err != nil {
				return err
			}
			names = append(names, child.ActiveOperationID())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing the children of %s: %v", rid, err)
	}
	return names
}

// requestCredential is POST requestadmincredential: the operation only.
func (e *env) requestCredential(t testing.TB, cluster string, r request) string {
	t.Helper()
	return e.submit(t, r, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.RequestCredential(ctx, clusterRID(cluster), o)
	})
}

// revokeCredentials is POST revokecredentials: the operation carries the
// cluster's CS ID and the cluster points at the operation.
func (e *env) revokeCredentials(t testing.TB, cluster string, r request) string {
	t.Helper()
	return e.submit(t, r, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.RevokeCredentials(ctx, clusterRID(cluster), o)
	})
}

// readyCluster creates cluster name and drives it to Succeeded.
func (e *env) readyCluster(t testing.TB, name string) string {
	t.Helper()
	op := e.create(t, document.KindCluster, clusterRID(name), request{})
	e.drive(t, op)
	e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
	return e.resource(t, clusterRID(name)).ClusterServiceID()
}
