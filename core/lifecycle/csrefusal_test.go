package lifecycle

import (
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

// TestCSWordsAreNotRead: after CS's 400 the lifecycle decides on CS's
// objects, never on the 400's words. Words that say "not now" or "already
// under way" beside objects that are ready fail the operation as refused;
// a plain refusal while the cluster is not ready is retried, and goes
// through once CS takes it.
func TestCSWordsAreNotRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		// request submits the operation on a ready cluster c1 with node
		// pool np1, and names the CS call the front refuses.
		request func(t *testing.T, e *env) (op, method, path string)
		words   string
		// clusterState, when set, is what a GET of c1 answers (the front
		// crafts it); else CS's own object answers.
		clusterState string
		want         arm.ProvisioningState // after five rounds of refusals
		wantCode     string
		// then is the state once the front stops refusing.
		then arm.ProvisioningState
	}{
		{"update refused with busy words while everything is ready", updateNodePool,
			"Node pools can only be updated on clusters in an updatable state. The cluster requested is in 'updating' state.",
			"", arm.ProvisioningStateFailed, arm.CodeInvalidRequestContent, arm.ProvisioningStateFailed},
		{"update refused in plain words while the cluster is updating", updateNodePool, "Invalid replicas",
			cs.ClusterStateUpdating, arm.ProvisioningStateAccepted, "", arm.ProvisioningStateSucceeded},
		{"delete refused with uninstalling words while the cluster is ready", deleteNodePool,
			"Cannot delete node pool: its parent cluster must be in a deletable state. Parent cluster state: 'uninstalling'",
			"", arm.ProvisioningStateFailed, arm.CodeInvalidRequestContent, arm.ProvisioningStateFailed},
		{"revocation refused with under-way words while none awaits revocation", revoke,
			"Break glass credentials of cluster 'c1': revocation has already been requested",
			"", arm.ProvisioningStateFailed, arm.CodeInvalidRequestContent, arm.ProvisioningStateFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			clusterHref := e.readyCluster(t, "c1")
			e.drive(t, e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{}))
			op, method, path := tc.request(t, e)
			refusing := e.behind(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.Method == method && strings.HasPrefix(r.URL.Path, path):
					csOwn(http.StatusBadRequest, tc.words).write(w)
				case tc.clusterState != "" && r.Method == http.MethodGet && r.URL.Path == clusterHref:
					id := clusterHref[strings.LastIndex(clusterHref, "/")+1:]
					answer{200, "application/json", fmt.Sprintf(`{"kind":"Cluster","id":%q,"href":%q,"name":"c1","status":{"state":%q}}`,
						id, clusterHref, tc.clusterState)}.write(w)
				default:
					e.sim.ServeHTTP(w, r)
				}
			}))
			for range 5 {
				_, _ = e.deliver(t)
				e.tick(t)
				e.clk.Advance(time.Minute)
			}
			e.wantOp(t, op, tc.want, tc.wantCode)
			refusing.Store(false)
			if tc.then != tc.want {
				e.drive(t, op)
				e.wantOp(t, op, tc.then, "")
			}
		})
	}
}

func updateNodePool(t *testing.T, e *env) (string, string, string) {
	rid := nodePoolRID("c1", "np1")
	op := e.update(t, rid, request{}, func(s *spec) { s.nodePool.Replicas = 3 })
	return op, http.MethodPatch, e.resource(t, rid).ClusterServiceID()
}

func deleteNodePool(t *testing.T, e *env) (string, string, string) {
	rid := nodePoolRID("c1", "np1")
	href := e.resource(t, rid).ClusterServiceID()
	return e.remove(t, rid, request{})[0], http.MethodDelete, href
}

func revoke(t *testing.T, e *env) (string, string, string) {
	href := e.resource(t, clusterRID("c1")).ClusterServiceID()
	id := href[strings.LastIndex(href, "/")+1:]
	return e.revokeCredentials(t, "c1", request{}), http.MethodDelete, cs.ClustersMgmtPrefix + "/clusters/" + id + "/break_glass_credentials"
}

// TestRevocationRefusedAsItFinishes is TestSoakShort's seed 1: the first
// DELETE of the credentials reached CS but its answer was lost; the one
// sent again met CS's "already requested" 400, and by the time the
// credentials were listed CS had revoked them all. Before, that list (none
// awaiting revocation) made the 400 a refusal and the revocation Failed;
// now every credential revoked is CS's word that a revocation went
// through, and the poll decides.
func TestRevocationRefusedAsItFinishes(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c1")
	e.drive(t, e.requestCredential(t, "c1", request{}))
	var deletes atomic.Int32
	e.behind(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodDelete {
			e.sim.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		e.sim.ServeHTTP(rec, r)
		if deletes.Add(1) == 1 {
			answer{http.StatusBadGateway, "text/html", "<html>502 Bad Gateway</html>"}.write(w)
			return
		}
		if rec.Code != http.StatusBadRequest {
			t.Errorf("the DELETE sent again got %d, want CS's 400", rec.Code)
		}
		e.clk.Advance(2 * time.Minute) // CS finishes while its 400 travels
		w.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	op := e.revokeCredentials(t, "c1", request{})
	if _, err := e.deliver(t); err == nil {
		t.Fatal("the lost DELETE was counted as dispatched")
	}
	e.clk.Advance(10 * time.Second)
	e.tick(t)
	e.drive(t, op)
	e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
	if n := deletes.Load(); n != 2 {
		t.Errorf("%d DELETEs, want 2 (the lost one and the one refused)", n)
	}
}

// TestBusyCSBacksOff: CS refusing an update while its cluster upgrades
// (an hour, say) is asked again on the poll backoff (10 s doubling to
// 5 min), as upstream's rate-limited requeue does, not every tick; once
// CS takes it, the update goes through within the longest backoff.
func TestBusyCSBacksOff(t *testing.T) {
	e := newEnv(t)
	clusterHref := e.readyCluster(t, "c1")
	e.drive(t, e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{}))
	op, method, path := updateNodePool(t, e)
	var refused atomic.Int32
	busy := e.behind(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == method && strings.HasPrefix(r.URL.Path, path):
			refused.Add(1)
			csOwn(http.StatusBadRequest, "The cluster is being upgraded").write(w)
		case r.Method == http.MethodGet && r.URL.Path == clusterHref:
			id := clusterHref[strings.LastIndex(clusterHref, "/")+1:]
			answer{200, "application/json", fmt.Sprintf(`{"kind":"Cluster","id":%q,"href":%q,"name":"c1","status":{"state":"updating"}}`,
				id, clusterHref)}.write(w)
		default:
			e.sim.ServeHTTP(w, r)
		}
	}))
	_, _ = e.deliver(t)
	for range 6 * 30 { // a tick every 10 s for half an hour
		e.clk.Advance(10 * time.Second)
		e.tick(t)
	}
	if n := refused.Load(); n < 5 || n > 12 {
		t.Errorf("CS was asked %d times in half an hour while busy, want 5 to 12 (backed off, not every tick)", n)
	}
	e.wantOp(t, op, arm.ProvisioningStateAccepted, "")
	busy.Store(false)
	for range 6 * 5 {
		e.clk.Advance(10 * time.Second)
		e.tick(t)
	}
	if st := e.op(t, op).Properties.Status; st != arm.ProvisioningStateUpdating && st != arm.ProvisioningStateSucceeded {
		t.Errorf("5 minutes after CS stopped refusing, the update is %s, want it sent", st)
	}
}
