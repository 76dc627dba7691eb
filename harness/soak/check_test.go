package soak

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/csfaults"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
)

const checkURI = "http://127.0.0.1:1/notify/c0/create"

// e0 is the cluster every operation of these checks is about.
const e0 = "/subscriptions/00000000-0000-4000-8000-000000000001/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c0"

func checkOp(t *testing.T, req document.Request, status arm.ProvisioningState, uri string) *document.OperationDocument {
	t.Helper()
	op, err := document.NewOperation(document.NewOperationParams{Request: req, Location: location, Name: "8a0c7e7e-0000-4000-8000-000000000001",
		ExternalID: "/subscriptions/00000000-0000-4000-8000-000000000001/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c0",
		Now:        time.Unix(1_800_000_000, 0), NotificationURI: uri})
	if err != nil {
		t.Fatal(err)
	}
	op.Properties.SetStatus(time.Unix(1_800_000_100, 0), status, nil)
	op.Properties.NotificationURI = ""
	return op
}

// The sick request of cleanEvidence: its deadline and when it failed.
var (
	sickDeadline = time.Unix(1_800_000_100, 0)
	sickFailed   = sickDeadline.Add(1500 * time.Millisecond)
)

// cleanEvidence is a run where everything went right: one request, one
// sick one failed at its deadline and one implicit delete, every fault
// injected, two instances at work.
func cleanEvidence(t *testing.T) evidence {
	mine, implicit, sick := docKey{"p", "op1"}, docKey{"p", "op2"}, docKey{"p", "op3"}
	sickOp := checkOp(t, document.RequestCreate, arm.ProvisioningStateFailed, checkURI)
	sickOp.Properties.SetStatus(sickFailed, arm.ProvisioningStateFailed, deadlineError())
	sickOp.Properties.NotificationURI = ""
	return evidence{
		subs: []*submitted{{request: request{label: "c0/create", kind: "create cluster", want: succeeded},
			op: mine, uri: checkURI, statusPath: "/status", outcome: arm.ProvisioningStateSucceeded},
			{request: request{label: "c1/create", kind: kindSickCreate, want: failed, deadline: 10 * time.Second},
				op: sick, uri: checkURI, statusPath: "/status1", outcome: arm.ProvisioningStateFailed, deadlineAt: sickDeadline}},
		ops: map[docKey]*document.OperationDocument{
			mine:     checkOp(t, document.RequestCreate, arm.ProvisioningStateSucceeded, checkURI),
			implicit: checkOp(t, document.RequestDelete, arm.ProvisioningStateSucceeded, ""),
			sick:     sickOp,
		},
		uris: map[docKey]string{mine: checkURI, implicit: "", sick: checkURI},
		cs: csCounts{creates: map[string]map[int]int{"cluster/x": {503: 1, 201: 1}, "nodepool/x/np1": {201: 1, 409: 2}},
			statuses: map[int]int{0: 1, 201: 2, 409: 2, 429: 1, 500: 1, 503: 1},
			named:    map[string]map[string]bool{"soak-c0": {"cluster/x": true}}},
		simPosts: map[string]int{"cluster": 2, "nodepool": 3},
		delivered: func(uri string) []arm.ProvisioningState {
			if uri == checkURI {
				return []arm.ProvisioningState{arm.ProvisioningStateSucceeded, arm.ProvisioningStateFailed}
			}
			return nil
		},
		notifyAttempts: 2, notifyFailures: 1,
		feed:  triggerhost.FeedStats{Batches: 2, Deliveries: 4, Duplicated: 2, Reordered: 1},
		kills: 2, starts: 4, instances: 2,
		status: map[string]string{"c0/create": "Succeeded", "c1/create": "Failed"},
		ticks: []tick{{instance: 0, status: 200, took: pollBudget}, {instance: 1, status: 200, took: time.Second},
			{instance: 1, took: time.Minute, err: "killed", cut: true}},
		routed:           map[int]int{0: 3, 1: 2},
		cosmosFaults:     allCosmosFaults(),
		wantCosmosFaults: true,
		sick: sickSet{clusters: map[string]sickness{"soak-c1": sickHang, "soak-c2": sickGarbage, "soak-c3": sickHangCreated},
			pools: map[string]sickness{"np-sick-c4": sickHangCreated}},
		sickHung: 3, sickGarbled: 2, wantCSHangs: true,
		// The implicit delete was seen Succeeded a second after CS's own
		// 404 for its cluster; both fault windows answered.
		versions: map[docKey][]docVersion{
			implicit:   {opV1, {key: implicit, etag: "b", version: 2, status: "Succeeded", seen: checkSeen}},
			clusterDoc: {clusterV1, {key: clusterDoc, etag: "d", version: 2, deleted: true}},
		},
		writes: map[docKey][]write{
			implicit:   {{kind: writeCreate, doc: opV1}, {kind: writeReplace, doc: docVersion{key: implicit, etag: "b", version: 2}}},
			clusterDoc: {{kind: writeCreate, doc: clusterV1}, {kind: writeReplace, doc: docVersion{key: clusterDoc, etag: "d", version: 2}}},
		},
		absent:         map[string]time.Time{checkHref: checkSeen.Add(-time.Second)},
		windows:        csWindowsOf(15*time.Second, 3*time.Second, 3*time.Second),
		windowAnswered: map[csfaults.Fault]int64{csfaults.Misrouted: 40, csfaults.Gateway: 30},
	}
}

// The cluster of cleanEvidence's implicit delete, and when that delete was
// seen Succeeded.
var (
	clusterDoc = docKey{"p", document.CosmosID(e0)}
	checkHref  = "/api/aro_hcp/v1alpha1/clusters/x"
	checkSeen  = time.Unix(1_800_000_200, 0)
	opV1       = docVersion{key: docKey{"p", "op2"}, etag: "a", version: 1, status: "Deleting", seen: checkSeen.Add(-time.Minute)}
	clusterV1  = docVersion{key: clusterDoc, etag: "c", version: 1, csID: checkHref}
)

func allCosmosFaults() map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, k := range cosmosKinds {
		out[k] = map[string]int{faultThrottle: 2, faultUnavailable: 1, faultTimeout: 1, faultSlow: 1}
	}
	return out
}

// deadlineError is what the lifecycle records at a deadline.
func deadlineError() *arm.CloudErrorBody {
	return &arm.CloudErrorBody{Code: arm.CodeInternalServerError, Message: "cluster creation did not complete before the deadline 2027-01-15T08:01:40Z"}
}

func TestEvidenceProblems(t *testing.T) {
	mine, implicit, sick := docKey{"p", "op1"}, docKey{"p", "op2"}, docKey{"p", "op3"}
	tests := []struct {
		name   string
		break_ func(e *evidence)
		want   string
	}{
		{"clean", func(*evidence) {}, ""},
		{"unexpected outcome", func(e *evidence) { e.ops[mine].Properties.Status = arm.ProvisioningStateFailed },
			"outcome: c0/create (create cluster): ended Failed, want Succeeded"},
		{"never accepted", func(e *evidence) { e.subs[0].problem = "not accepted: boom" }, "outcome: c0/create (create cluster): not accepted: boom"},
		{"never seen", func(e *evidence) { delete(e.ops, mine) }, "never seen on the change feed"},
		{"unfinished", func(e *evidence) { e.ops[implicit].Properties.Status = arm.ProvisioningStateDeleting }, "is still Deleting"},
		{"implicit delete failed", func(e *evidence) { e.ops[implicit].Properties.Status = arm.ProvisioningStateFailed },
			"implicit operation 8a0c7e7e-0000-4000-8000-000000000001 (Delete"},
		{"wrong failure", func(e *evidence) {
			e.subs[0].want, e.subs[0].wantCode = failed, "OCM3055"
			e.ops[mine].Properties.Status = arm.ProvisioningStateFailed
			e.ops[mine].Properties.Error = &arm.CloudErrorBody{Code: "InternalServerError", Message: "x"}
			e.delivered = func(string) []arm.ProvisioningState { return failed }
			e.status["c0/create"] = "Failed"
		}, "failed with InternalServerError (x), want code OCM3055"},
		{"created without the URI", func(e *evidence) { e.uris[mine] = "http://elsewhere" }, `created with notificationUri "http://elsewhere"`},
		{"URI never cleared", func(e *evidence) { e.ops[mine].Properties.NotificationURI = checkURI }, "still holds notificationUri"},
		{"never notified", func(e *evidence) { e.delivered = func(string) []arm.ProvisioningState { return nil } },
			"ended Succeeded, but ARM received [] at " + checkURI},
		{"notified another status", func(e *evidence) { e.delivered = func(string) []arm.ProvisioningState { return failed } },
			"but ARM received [Failed]"},
		{"status poll disagrees", func(e *evidence) { e.status["c0/create"] = "HTTP 404: " }, "status: c0/create: ARM's status poll answered HTTP 404"},
		{"created twice", func(e *evidence) { e.cs.creates["cluster/x"][201] = 2; e.simPosts["cluster"] = 3 },
			"clusters service: not created exactly once: cluster/x: 201 x2, 503 x1"},
		{"ledgers disagree", func(e *evidence) { e.simPosts["cluster"] = 3 }, "the simulator's ledger has 3 cluster create POSTs, the soak's 2"},
		{"stomped update", func(e *evidence) {
			k := docKey{"p", "r"}
			e.writes = map[docKey][]write{k: {{kind: writeCreate, doc: docVersion{key: k, version: 1}}, {kind: writeReplace, doc: docVersion{key: k, version: 1}}}}
		}, "versions: p/r: instanceVersion 1 written more than once"},
		{"one kill", func(e *evidence) { e.kills, e.starts = 1, 3 }, "chaos: the handler was killed 1 times"},
		{"a kill without a restart", func(e *evidence) { e.starts = 3 }, "chaos: the handler started 3 times after 2 kills of 2 instances, want 4"},
		{"sick one succeeded", func(e *evidence) { e.ops[sick].Properties.Status = arm.ProvisioningStateSucceeded },
			"deadline: c1/create: ended Succeeded, want Failed at its deadline"},
		{"sick one failed for another reason", func(e *evidence) {
			e.ops[sick].Properties.Error = &arm.CloudErrorBody{Code: arm.CodeInternalServerError, Message: "garbage"}
		}, "deadline: c1/create: failed with InternalServerError (garbage), want the deadline error"},
		{"sick one failed early", func(e *evidence) { e.ops[sick].Properties.LastTransitionTime = sickDeadline.Add(-time.Second) },
			"deadline: c1/create: failed at 08:01:39.000, before its deadline 08:01:40.000"},
		{"sick one failed late", func(e *evidence) {
			e.ops[sick].Properties.LastTransitionTime = sickDeadline.Add(deadlineLate + time.Second)
		}, "deadline: c1/create: failed at 08:01:57.000, 17s after its deadline"},
		{"tick past budget", func(e *evidence) { e.ticks[1].took = tickBound + time.Millisecond },
			"ticks: instance 1: the tick started 00:00:00.000 took 13.001s, past the budget 8s"},
		{"tick never answered", func(e *evidence) { e.ticks[2].cut = false }, "ticks: instance 1: the tick started 00:00:00.000 got no answer after 1m0s: killed"},
		{"cluster created under two IDs", func(e *evidence) {
			e.cs.creates["cluster/y"] = map[int]int{201: 1}
			e.cs.named["soak-c0"]["cluster/y"] = true
			e.simPosts["cluster"] = 3
		}, "clusters service: not created exactly once: cluster soak-c0 created 2 times: cluster/x, cluster/y"},
		{"never created after a refused POST", func(e *evidence) {
			e.cs.creates["cluster/z"] = map[int]int{503: 1}
			e.simPosts["cluster"] = 3
		}, ""},
		{"node pool never created", func(e *evidence) { e.cs.creates["nodepool/x/np1"] = map[int]int{409: 3} },
			"clusters service: not created exactly once: nodepool/x/np1: 409 x3"},
		{"no CS hang", func(e *evidence) { delete(e.cs.statuses, 0) }, "chaos: no clusters service request hung"},
		{"sick subset never garbled", func(e *evidence) { e.sickGarbled = 0 }, "chaos: the sick subset of 4 objects saw 3 hung and 0 garbled requests"},
		{"an instance never ticked", func(e *evidence) { e.ticks = e.ticks[:1] }, "chaos: instance 1 answered 0 ticks and was sent 2 other invocations"},
		{"an instance never sent a batch", func(e *evidence) { delete(e.routed, 0) }, "chaos: instance 0 answered 1 ticks and was sent 0 other invocations"},
		{"no batch throttled", func(e *evidence) { delete(e.cosmosFaults[cosmosBatch], faultThrottle) }, "chaos: no Cosmos batch was throttled"},
		{"no store timeout", func(e *evidence) {
			for _, m := range e.cosmosFaults {
				delete(m, faultTimeout)
			}
		}, "chaos: Cosmos never answered 408"},
		{"batches delivered once", func(e *evidence) { e.feed.Duplicated = 1 }, "chaos: 1 of 2 change-feed batches were delivered twice"},
		{"feed in order", func(e *evidence) { e.feed.Reordered = 0 }, "chaos: no change-feed batch was delivered out of order"},
		{"no 503", func(e *evidence) { delete(e.cs.statuses, http.StatusServiceUnavailable) }, "chaos: clusters service never answered 503"},
		{"sink never failed", func(e *evidence) { e.notifyFailures = 0 }, "chaos: no ARM notification failed"},
		{"delete completed on a 404 not CS's", func(e *evidence) { delete(e.absent, checkHref) },
			"false terminal: delete 8a0c7e7e-0000-4000-8000-000000000001 of " + e0 + " Succeeded, but CS never answered 404 for " + checkHref},
		{"delete completed before CS's 404", func(e *evidence) { e.absent[checkHref] = checkSeen.Add(time.Second) },
			"was seen Succeeded at 08:03:20.000, before CS first answered 404 for " + checkHref + " at 08:03:21.000"},
		{"delete of a cluster CS never had", func(e *evidence) {
			delete(e.absent, checkHref)
			e.versions[clusterDoc] = e.versions[clusterDoc][1:]
		}, ""},
		{"misrouted window answered nothing", func(e *evidence) { e.windowAnswered[csfaults.Misrouted] = 0 },
			"chaos: the misrouted window (3s at 6s) answered no request in CS's place"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := cleanEvidence(t)
			tc.break_(&e)
			problems := e.problems()
			switch {
			case tc.want == "" && len(problems) > 0:
				t.Errorf("problems %q, want none", problems)
			case tc.want != "" && !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }):
				t.Errorf("problems %q\nwant one saying %q", problems, tc.want)
			}
		})
	}
}

func TestCapPerArea(t *testing.T) {
	var problems []string
	for range 5 {
		problems = append(problems, "versions: x")
	}
	problems = append(problems, "chaos: y")
	got := capPerArea(problems, 2)
	want := []string{"versions: x", "versions: x", "chaos: y", "versions: ... and 3 more"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("capPerArea = %q, want %q", got, want)
	}
}
