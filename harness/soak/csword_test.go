package soak

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

func TestObjectStates(t *testing.T) {
	const c = "/api/aro_hcp/v1alpha1/clusters/x"
	for _, tc := range []struct {
		name, path, body string
		want             map[string]string
	}{
		{"cluster", c, `{"kind":"Cluster","id":"x","href":"` + c + `","state":"installing","status":{"state":"installing"}}`, map[string]string{c: "installing"}},
		{"cluster status", c + "/status", `{"kind":"ClusterStatus","id":"x","state":"ready"}`, map[string]string{c: "ready"}},
		{"node pool status", c + "/node_pools/np1/status", `{"state":{"node_pool_state_value":"updating"}}`, map[string]string{c + "/node_pools/np1": "updating"}},
		{"external auth", c + "/external_auth_config/external_auths/ea1", `{"id":"ea1","status":{"state":{"value":"uninstalling"}}}`,
			map[string]string{c + "/external_auth_config/external_auths/ea1": "uninstalling"}},
		{"a list, an item without href", c + "/node_pools", `{"kind":"NodePoolList","items":[{"id":"np1","status":{"state":{"node_pool_state_value":"ready"}}},` +
			`{"href":"` + c + `/node_pools/NP2","status":{"state":{"node_pool_state_value":"error"}}}]}`,
			map[string]string{c + "/node_pools/np1": "ready", c + "/node_pools/np2": "error"}},
		{"upgrade policies name no object", c + "/control_plane_upgrade_policies", `{"items":[{"id":"p","href":"` + c + `/control_plane_upgrade_policies/p","state":{"value":"started"}}]}`, map[string]string{}},
		{"not JSON", c, `<html>`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := objectStates(tc.path, []byte(tc.body))
			if len(got) != len(tc.want) {
				t.Fatalf("objectStates = %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("objectStates = %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// wordEvidence is one terminal operation on rid, whose resource names
// href, seen terminal at wordSeen; CS's words are the test's to set.
func wordEvidence(t *testing.T, req document.Request, rid, href string, status arm.ProvisioningState, cerr *arm.CloudErrorBody) evidence {
	t.Helper()
	op, err := document.NewOperation(document.NewOperationParams{Request: req, Location: location, Name: "8a0c7e7e-0000-4000-8000-000000000009",
		ExternalID: rid, Now: wordStart})
	if err != nil {
		t.Fatal(err)
	}
	op.Properties.SetStatus(wordSeen, status, cerr)
	k, res := docKey{"p", "op9"}, docKey{"p", document.CosmosID(rid)}
	return evidence{
		ops: map[docKey]*document.OperationDocument{k: op},
		versions: map[docKey][]docVersion{
			k:   {{key: k, status: string(status), seen: wordSeen}},
			res: {{key: res, csID: href}},
		},
		absent:  map[string]time.Time{},
		csWords: map[string][]stateSeen{},
	}
}

var (
	wordStart = time.Unix(1_800_000_000, 0)
	wordSeen  = wordStart.Add(10 * time.Minute)
	wordNP    = e0 + "/nodePools/np1"
	wordEA    = e0 + "/externalAuths/ea1"
	hrefNP    = checkHref + "/node_pools/np1"
	hrefEA    = checkHref + "/external_auth_config/external_auths/ea1"
)

// TestFalseTerminalsEveryKind: the soak holds every terminal state of a
// cluster, node pool or external auth to CS's own word about that object,
// seen before it; a deadline needs none.
func TestFalseTerminalsEveryKind(t *testing.T) {
	before, after := wordSeen.Add(-time.Second), wordSeen.Add(time.Second)
	deadline := &arm.CloudErrorBody{Code: arm.CodeInternalServerError, Message: "node pool creation did not complete before the deadline 2027-01-15T08:01:40Z"}
	csError := &arm.CloudErrorBody{Code: arm.CodeInternalServerError, Message: "[clusterServiceNodePoolStatus] no capacity"}
	for _, tc := range []struct {
		name   string
		req    document.Request
		rid    string
		href   string
		status arm.ProvisioningState
		cerr   *arm.CloudErrorBody
		words  map[string]time.Time // CS's states of href
		absent map[string]time.Time
		want   string // "" for none
	}{
		{"node pool create on CS's ready", document.RequestCreate, wordNP, hrefNP, arm.ProvisioningStateSucceeded, nil,
			map[string]time.Time{"installing": before, "ready": before}, nil, ""},
		{"node pool create without CS's ready", document.RequestCreate, wordNP, hrefNP, arm.ProvisioningStateSucceeded, nil,
			map[string]time.Time{"installing": before}, nil, "but CS had not answered " + hrefNP + " ready by then"},
		{"cluster create before CS's ready", document.RequestCreate, e0, checkHref, arm.ProvisioningStateSucceeded, nil,
			map[string]time.Time{"ready": after}, nil, "but CS had not answered " + checkHref + " ready by then"},
		{"node pool create failed on CS's error", document.RequestCreate, wordNP, hrefNP, arm.ProvisioningStateFailed, csError,
			map[string]time.Time{"error": before}, nil, ""},
		{"node pool create failed without it", document.RequestCreate, wordNP, hrefNP, arm.ProvisioningStateFailed, csError,
			map[string]time.Time{"installing": before}, nil, "nor was it a deadline"},
		{"a deadline needs no word", document.RequestCreate, wordNP, hrefNP, arm.ProvisioningStateFailed, deadline, nil, nil, ""},
		{"external auth update on an answer since it started", document.RequestUpdate, wordEA, hrefEA, arm.ProvisioningStateSucceeded, nil,
			map[string]time.Time{"ready": wordStart.Add(time.Minute)}, nil, ""},
		{"external auth update on answers from before it", document.RequestUpdate, wordEA, hrefEA, arm.ProvisioningStateSucceeded, nil,
			map[string]time.Time{"ready": wordStart.Add(-time.Minute)}, nil, "but CS answered nothing of " + hrefEA + " since it started"},
		{"credential requests are not held to the cluster's word", document.RequestRequestCredential, e0, checkHref, arm.ProvisioningStateSucceeded, nil,
			nil, nil, ""},
		{"node pool delete on its own 404", document.RequestDelete, wordNP, hrefNP, arm.ProvisioningStateSucceeded, nil,
			nil, map[string]time.Time{hrefNP: before}, ""},
		{"node pool delete on its cluster's 404", document.RequestDelete, wordNP, hrefNP, arm.ProvisioningStateSucceeded, nil,
			nil, map[string]time.Time{checkHref: before}, ""},
		{"external auth delete without a 404", document.RequestDelete, wordEA, hrefEA, arm.ProvisioningStateSucceeded, nil,
			map[string]time.Time{"uninstalling": before}, nil, "but CS never answered 404 for " + hrefEA},
		{"node pool delete before CS's 404", document.RequestDelete, wordNP, hrefNP, arm.ProvisioningStateSucceeded, nil,
			nil, map[string]time.Time{hrefNP: after}, "before CS first answered 404 for " + hrefNP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := wordEvidence(t, tc.req, tc.rid, tc.href, tc.status, tc.cerr)
			for st, at := range tc.words {
				e.csWords[tc.href] = append(e.csWords[tc.href], stateSeen{state: st, at: at})
			}
			for h, at := range tc.absent {
				e.absent[h] = at
			}
			checked, problems := e.falseTerminals()
			switch {
			case tc.want == "" && len(problems) > 0:
				t.Fatalf("problems %q, want none", problems)
			case tc.want != "" && (len(problems) != 1 || !strings.Contains(problems[0], tc.want)):
				t.Fatalf("problems %q, want one saying %q", problems, tc.want)
			case tc.cerr != deadline && tc.req != document.RequestRequestCredential && checked != 1:
				t.Fatalf("checked %d, want 1", checked)
			}
		})
	}
}

// TestOrphans: every object CS has at the end must be named by a live
// resource; a soft-deleted one names none.
func TestOrphans(t *testing.T) {
	live, gone := docKey{"p", "live"}, docKey{"p", "gone"}
	e := evidence{
		finals: map[docKey]finalRead{
			live: {found: true, doc: docVersion{key: live, csID: checkHref}},
			gone: {found: true, doc: docVersion{key: gone, csID: hrefNP, deleted: true}},
		},
		csObjects: map[string]string{checkHref: "ready"},
	}
	if got := e.orphans(); len(got) != 0 {
		t.Fatalf("orphans %q, want none", got)
	}
	e.csObjects[hrefNP] = "ready"
	e.csObjects[hrefEA] = "uninstalling"
	got := e.orphans()
	if len(got) != 2 || !strings.Contains(got[0], hrefEA+" (uninstalling)") || !strings.Contains(got[1], hrefNP+" (ready)") {
		t.Fatalf("orphans %q, want the node pool whose resource is deleted and the external auth no resource names", got)
	}
	if p := e.problems(); !strings.Contains(strings.Join(p, "\n"), "orphan: clusters service still has "+hrefNP) {
		t.Fatalf("problems %q do not report the orphan", p)
	}
}

// TestUpdateWordIsAnyAnswerSinceItStarted: the same state answered
// before an update and again during it counts (the witness keeps every
// answer, not only the first in each state).
func TestUpdateWordIsAnyAnswerSinceItStarted(t *testing.T) {
	e := wordEvidence(t, document.RequestUpdate, wordNP, hrefNP, arm.ProvisioningStateSucceeded, nil)
	e.csWords[hrefNP] = []stateSeen{{"ready", wordStart.Add(-time.Hour)}}
	if _, p := e.falseTerminals(); len(p) != 1 {
		t.Fatalf("problems %q, want the update without an answer since it started", p)
	}
	e.csWords[hrefNP] = append(e.csWords[hrefNP], stateSeen{"ready", wordStart.Add(time.Minute)})
	if _, p := e.falseTerminals(); len(p) != 0 {
		t.Fatalf("problems %q, want none: CS answered ready during the update", p)
	}
}

// TestOrphansNamedByPendingOrChildID: a cluster whose create answer was
// lost is named by its resource's pending ID, a child by its name under
// its cluster's href.
func TestOrphansNamedByPendingOrChildID(t *testing.T) {
	cluster, pool := docKey{"p", document.CosmosID(e0)}, docKey{"p", document.CosmosID(wordNP)}
	e := evidence{
		finals: map[docKey]finalRead{
			cluster:       {found: true, doc: docVersion{key: cluster, resource: e0, csID: checkHref}},
			pool:          {found: true, doc: docVersion{key: pool, resource: wordNP}},
			{"p", "lost"}: {found: true, doc: docVersion{key: docKey{"p", "lost"}, pendingID: "/api/aro_hcp/v1alpha1/clusters/lost"}},
		},
		csObjects: map[string]string{checkHref: "ready", hrefNP: "ready", "/api/aro_hcp/v1alpha1/clusters/lost": "ready"},
	}
	if got := e.orphans(); len(got) != 0 {
		t.Fatalf("orphans %q, want none", got)
	}
}

// TestWitnessRecordsADeletesOwn404: CS's own 404 to a DELETE is its word
// that the object is gone, on which the lifecycle may complete a delete
// (corroborated by a list); the witness records it as a read's 404.
// Before, a delete so completed under load read as "CS never answered 404".
func TestWitnessRecordsADeletesOwn404(t *testing.T) {
	const c = "/api/aro_hcp/v1alpha1/clusters/x"
	w := newCSWitness(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { rw.WriteHeader(http.StatusNotFound) }))
	for _, m := range []string{http.MethodDelete, http.MethodPatch} {
		w.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(m, c, nil))
	}
	if _, ok := w.absent[c]; !ok {
		t.Fatalf("a DELETE answered 404 left no absence of %s: %v", c, w.absent)
	}
	w2 := newCSWitness(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { rw.WriteHeader(http.StatusNotFound) }))
	w2.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPatch, c, nil))
	if len(w2.absent) != 0 {
		t.Fatalf("a PATCH answered 404 counted as absence: %v", w2.absent)
	}
}
