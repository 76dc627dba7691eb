package lifecycle

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
)

// Evidence, not the absence of an error: the fault-proxy runs of issue
// #31, each through a front standing before the simulator as a gateway
// or a fault proxy would (csfake.CS.Front). Each failed on the code
// before it: a delete written Succeeded while CS still had the cluster,
// a create written Failed on an answer that said nothing, a 409 adopted
// for an object CS never made.

// answer is one canned HTTP answer of the front.
type answer struct {
	status int
	ctype  string
	body   string
}

func (a answer) write(w http.ResponseWriter) {
	if a.ctype != "" {
		w.Header().Set("Content-Type", a.ctype)
	}
	w.WriteHeader(a.status)
	fmt.Fprint(w, a.body)
}

// csOwn is CS's own error answer, as Clusters Service words it.
func csOwn(status int, reason string) answer {
	return answer{status, "application/json", fmt.Sprintf(`{"kind":"Error","id":"%d","href":"/api/clusters_mgmt/v1/errors/%d","code":"CLUSTERS-MGMT-%d","reason":%q}`,
		status, status, status, reason)}
}

var (
	gateway404   = answer{404, "application/json", `{"statusCode":404,"message":"Resource not found"}`}
	emptyJSON404 = answer{404, "application/json", ""}
	html404      = answer{404, "text/html", "<html><body><h1>404 Not Found</h1></body></html>"}
	bare404      = answer{404, "", "not found"}
)

// about reports whether r names id anywhere: its path or its search.
func about(r *http.Request, id string) bool {
	return strings.Contains(r.URL.Path, id) || strings.Contains(r.URL.RawQuery, id)
}

// TestDeleteCompletesOnlyOnCSOwn404: a 404 that is not CS's, for the
// cluster being deleted, completes nothing while CS still has it; CS's
// own 404, once the uninstall is done, completes it.
func TestDeleteCompletesOnlyOnCSOwn404(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    answer
	}{
		{"gateway 404 body", gateway404},
		{"empty JSON 404", emptyJSON404},
		{"HTML 404", html404},
		{"404 without a content type", bare404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			href := e.readyCluster(t, "c1")
			id := href[strings.LastIndex(href, "/")+1:]
			del := e.remove(t, clusterRID("c1"), request{})[0]
			if _, err := e.deliver(t); err != nil {
				t.Fatal(err)
			}
			e.fake.Front(func(w http.ResponseWriter, r *http.Request) bool {
				if !about(r, id) {
					return false
				}
				tc.a.write(w)
				return true
			})
			for range 3 {
				e.tick(t)
				e.clk.Advance(time.Minute)
			}
			if op := e.op(t, del); op.Properties.Status.IsTerminal() {
				t.Fatalf("delete is %s on a 404 that is not Clusters Service's; CS still has %s", op.Properties.Status, href)
			}
			if !e.live(t, clusterRID("c1")) {
				t.Fatal("the cluster document was deleted on a 404 that is not Clusters Service's")
			}
			e.fake.Front(nil)
			e.clk.Advance(5 * time.Minute) // past the simulator's uninstall and any backoff
			e.drive(t, del)
			e.wantOp(t, del, arm.ProvisioningStateSucceeded, "")
		})
	}
}

// TestGatewayAnsweredDeleteIsNotDispatched: a DELETE a gateway answered
// with its own 404 never reached CS, so it is not counted as dispatched;
// once CS answers, the DELETE is sent and the delete completes on CS's
// word.
func TestGatewayAnsweredDeleteIsNotDispatched(t *testing.T) {
	e := newEnv(t)
	href := e.readyCluster(t, "c1")
	id := href[strings.LastIndex(href, "/")+1:]
	e.fake.Front(func(w http.ResponseWriter, r *http.Request) bool {
		if !about(r, id) {
			return false
		}
		gateway404.write(w)
		return true
	})
	del := e.remove(t, clusterRID("c1"), request{})[0]
	_, _ = e.deliver(t) // the gateway's answer fails the batch's dispatch: no evidence either way
	for range 3 {
		e.tick(t)
		e.clk.Advance(time.Minute)
	}
	res := e.resource(t, clusterRID("c1"))
	if res == nil {
		t.Fatal("the cluster document was deleted while CS never got the DELETE")
	}
	if _, stamped := res.ClusterServiceDeletionTimestamp(); stamped {
		t.Fatal("a DELETE the gateway answered was recorded as dispatched")
	}
	if op := e.op(t, del); op.Properties.Status.IsTerminal() {
		t.Fatalf("delete is %s while CS never got the DELETE", op.Properties.Status)
	}
	if n := e.sim.Ledger().Count(http.MethodDelete, "/api/aro_hcp/v1alpha1/clusters/{id}"); n != 0 {
		t.Fatalf("CS got %d DELETEs through the gateway; the test's front should have held them all", n)
	}
	e.fake.Front(nil)
	e.drive(t, del)
	e.wantOp(t, del, arm.ProvisioningStateSucceeded, "")
	if n := e.sim.Ledger().Count(http.MethodDelete, "/api/aro_hcp/v1alpha1/clusters/{id}"); n != 1 {
		t.Fatalf("CS got %d DELETEs, want 1", n)
	}
}

// TestAmbiguousAnswerIsNoRefusal: the first create POST answered with
// one of HTTP's retry statuses, or a 4xx whose body is not CS's refusal,
// fails nothing: the next POST creates the cluster. CS's own refusal,
// with its reason, still fails the create at once.
func TestAmbiguousAnswerIsNoRefusal(t *testing.T) {
	for _, tc := range []struct {
		name     string
		a        answer
		kind     document.Kind
		refusal  bool
		wantCode string
	}{
		{"421", answer{421, "application/json", ""}, document.KindCluster, false, ""},
		{"423", answer{423, "application/json", ""}, document.KindCluster, false, ""},
		{"425", answer{425, "application/json", "{}"}, document.KindCluster, false, ""},
		{"423 text", answer{423, "text/plain", "locked"}, document.KindCluster, false, ""},
		{"400 empty body", answer{400, "application/json", ""}, document.KindCluster, false, ""},
		{"400 {}", answer{400, "application/json", "{}"}, document.KindCluster, false, ""},
		{"400 gateway body", answer{400, "application/json", `{"statusCode":400,"message":"Bad Request"}`}, document.KindCluster, false, ""},
		{"400 OCM without a reason", answer{400, "application/json", `{"kind":"Error","id":"400","code":"CLUSTERS-MGMT-400"}`}, document.KindCluster, false, ""},
		{"node pool 400 empty body", answer{400, "application/json", ""}, document.KindNodePool, false, ""},
		{"node pool 425", answer{425, "application/json", ""}, document.KindNodePool, false, ""},
		{"CS's refusal (control)", csOwn(400, "Attribute 'region' is not a supported region"), document.KindCluster, true, arm.CodeInvalidRequestContent},
		{"CS's node pool refusal (control)", csOwn(400, "Attribute 'replicas' must be at most 100"), document.KindNodePool, true, arm.CodeInvalidRequestContent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rid, route := clusterRID("c1"), cs.ClustersPath
			if tc.kind == document.KindNodePool {
				e.readyCluster(t, "c1")
				rid, route = nodePoolRID("c1", "np1"), cs.NodePoolsSegment
			}
			var answered atomic.Int32
			e.fake.Front(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodPost || !strings.HasSuffix(strings.TrimSuffix(r.URL.Path, "/"), strings.TrimSuffix(route, "/")) ||
					!answered.CompareAndSwap(0, 1) {
					return false
				}
				tc.a.write(w)
				return true
			})
			op := e.create(t, tc.kind, rid, request{})
			e.drive(t, op)
			if answered.Load() != 1 {
				t.Fatal("the front never answered the create's POST")
			}
			if tc.refusal {
				got := e.wantOp(t, op, arm.ProvisioningStateFailed, tc.wantCode)
				if !strings.Contains(got.Properties.Error.Message, "Attribute '") {
					t.Errorf("refusal message %q does not carry CS's reason", got.Properties.Error.Message)
				}
				return
			}
			e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
		})
	}
}

// TestCreate409IsVerified: CS's 409 on a create is believed only after
// a GET of the ID: this resource's object is adopted; none there means
// the POST is made again; another resource's object, or a second 409, is
// a conflict naming the name.
func TestCreate409IsVerified(t *testing.T) {
	conflict409 := csOwn(409, "Cluster with name 'c1' already exists")
	other := func(id string) answer {
		return answer{200, "application/json", fmt.Sprintf(`{"kind":"Cluster","id":%q,"href":"%s/%s","name":"c1","azure":{"subscription_id":"00000000-0000-0000-0000-000000000099","resource_group_name":"other","resource_name":"c1"},"status":{"state":"ready"}}`,
			id, cs.ClustersPath, id)}
	}
	for _, tc := range []struct {
		name string
		// front answers the create's POSTs (n counts from 1) and GETs of
		// the pending ID; false hands the request to CS.
		front    func(e *env, w http.ResponseWriter, r *http.Request, n int32) bool
		want     arm.ProvisioningState
		wantCode string
		clusters int // CS clusters at the end
	}{
		{"name conflict, then the POST goes through", func(e *env, w http.ResponseWriter, r *http.Request, n int32) bool {
			if n == 1 {
				conflict409.write(w)
				return true
			}
			return false
		}, arm.ProvisioningStateSucceeded, "", 1},
		{"created, but the answer was a 409", func(e *env, w http.ResponseWriter, r *http.Request, n int32) bool {
			if n == 1 {
				e.sim.ServeHTTP(httptest.NewRecorder(), r)
				csOwn(409, "Cluster with identifier 'x' already exists").write(w)
				return true
			}
			return false
		}, arm.ProvisioningStateSucceeded, "", 1},
		{"409 twice, and CS lists another resource's cluster of the name", func(e *env, w http.ResponseWriter, r *http.Request, n int32) bool {
			if n > 0 {
				conflict409.write(w)
				return true
			}
			return false
		}, arm.ProvisioningStateFailed, arm.CodeConflict, 1},
		{"another resource's cluster at the ID", func(e *env, w http.ResponseWriter, r *http.Request, n int32) bool {
			switch {
			case n == 1:
				conflict409.write(w)
			case n == 0 && r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, cs.ClustersPath+"/"):
				other(r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]).write(w)
			default:
				return false
			}
			return true
		}, arm.ProvisioningStateFailed, arm.CodeConflict, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.clusters == 1 && tc.wantCode == arm.CodeConflict {
				anotherNamed(t, e, "c1")
			}
			var posts atomic.Int32
			e.fake.Front(func(w http.ResponseWriter, r *http.Request) bool {
				n := int32(0)
				if r.Method == http.MethodPost && r.URL.Path == cs.ClustersPath {
					n = posts.Add(1)
				}
				return tc.front(e, w, r, n)
			})
			op := e.create(t, document.KindCluster, clusterRID("c1"), request{})
			e.drive(t, op)
			got := e.wantOp(t, op, tc.want, tc.wantCode)
			if tc.wantCode == arm.CodeConflict {
				if got.Properties.Error.Target != "name" || !strings.Contains(got.Properties.Error.Message, `"c1"`) {
					t.Errorf("conflict error %+v does not name the name", got.Properties.Error)
				}
			}
			if posts.Load() < 2 && tc.want == arm.ProvisioningStateSucceeded && tc.name != "created, but the answer was a 409" {
				t.Errorf("%d POSTs; want the POST made again after CS's 404 for the ID", posts.Load())
			}
			e.fake.Front(nil)
			if list, err := e.cs.ListClusters(context.Background(), ""); err != nil || len(list) != tc.clusters {
				t.Errorf("CS has %d clusters (%v), want %d", len(list), err, tc.clusters)
			}
		})
	}
}

// anotherNamed creates in CS a cluster of another subscription's resource
// named name.
func anotherNamed(t *testing.T, e *env, name string) {
	t.Helper()
	_, err := e.cs.PostCluster(context.Background(), cs.ClusterSpec{ID: "0123456789abcdefghijklmnopqrstuv", Name: name, Region: "eastus",
		VersionID: "4.20", Azure: cs.AzureRef{SubscriptionID: "00000000-0000-0000-0000-000000000099", ResourceGroupName: "other",
			ResourceName: name, ManagedResourceGroupName: "other-managed", TenantID: "00000000-0000-0000-0000-0000000000aa"}})
	if err != nil {
		t.Fatalf("creating another resource's cluster named %s: %v", name, err)
	}
}

// TestCreate409TwiceIsNoEvidenceAlone: a second 409 with no cluster at
// the pending ID and none of the name in CS's list fails nothing, whatever
// CS's words say ("Cluster with name 'c1' already exists" is text, not an
// object); once CS stops answering 409 the create goes through.
func TestCreate409TwiceIsNoEvidenceAlone(t *testing.T) {
	e := newEnv(t)
	var refusing atomic.Bool
	var refused atomic.Int32
	refusing.Store(true)
	e.fake.Front(func(w http.ResponseWriter, r *http.Request) bool {
		if refusing.Load() && r.Method == http.MethodPost && r.URL.Path == cs.ClustersPath {
			refused.Add(1)
			csOwn(409, "Cluster with name 'c1' already exists").write(w)
			return true
		}
		return false
	})
	op := e.create(t, document.KindCluster, clusterRID("c1"), request{})
	for range 5 {
		_, _ = e.deliver(t)
		e.tick(t)
		e.clk.Advance(time.Minute)
	}
	e.wantOp(t, op, arm.ProvisioningStateAccepted, "")
	if refused.Load() < 4 {
		t.Fatalf("CS refused %d POSTs; want the create to have met 409 twice, more than once", refused.Load())
	}
	refusing.Store(false)
	e.drive(t, op)
	e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
}

// TestContradicting409IsNoEvidence: CS's 409 for the ID beside CS's 404
// for the same ID (a misrouted read, as the soak's misrouted window
// answers) fails nothing, for a cluster or a child; once CS answers
// consistently, the create goes on. Found by the soak: such a pair once
// failed creates with Conflict.
func TestContradicting409IsNoEvidence(t *testing.T) {
	for _, kind := range []document.Kind{document.KindCluster, document.KindNodePool} {
		t.Run(kind.String(), func(t *testing.T) {
			e := newEnv(t)
			rid := clusterRID("c1")
			if kind == document.KindNodePool {
				e.readyCluster(t, "c1")
				rid = nodePoolRID("c1", "np1")
			}
			var answered atomic.Int32
			e.fake.Front(func(w http.ResponseWriter, r *http.Request) bool {
				creates := r.Method == http.MethodPost && (r.URL.Path == cs.ClustersPath || strings.HasSuffix(r.URL.Path, "/node_pools"))
				reads := r.Method == http.MethodGet && (kind == document.KindCluster && strings.HasPrefix(r.URL.Path, cs.ClustersPath+"/") ||
					strings.Contains(r.URL.Path, "/node_pools/"))
				switch {
				case creates:
					csOwn(409, "Cluster with identifier 'x' already exists").write(w)
				case reads:
					csOwn(404, "Object not found").write(w)
				default:
					return false
				}
				answered.Add(1)
				return true
			})
			op := e.create(t, kind, rid, request{})
			for range 4 {
				_, _ = e.deliver(t)
				e.tick(t)
				e.clk.Advance(2 * time.Minute)
			}
			if answered.Load() == 0 {
				t.Fatal("the front answered nothing")
			}
			if got := e.op(t, op); got.Properties.Status.IsTerminal() {
				t.Fatalf("create is %s on a 409 CS's own 404 contradicts (error %+v)", got.Properties.Status, got.Properties.Error)
			}
			e.fake.Front(nil)
			e.drive(t, op)
			e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
		})
	}
}
