package soak

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/devhost/triggerhost"
)

const checkURI = "http://127.0.0.1:1/notify/c0/create"

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

// cleanEvidence is a run where everything went right: one request and
// one implicit delete, every fault injected.
func cleanEvidence(t *testing.T) evidence {
	mine, implicit := docKey{"p", "op1"}, docKey{"p", "op2"}
	return evidence{
		subs: []*submitted{{request: request{label: "c0/create", kind: "create cluster", want: succeeded},
			op: mine, uri: checkURI, statusPath: "/status", outcome: arm.ProvisioningStateSucceeded}},
		ops: map[docKey]*document.OperationDocument{
			mine:     checkOp(t, document.RequestCreate, arm.ProvisioningStateSucceeded, checkURI),
			implicit: checkOp(t, document.RequestDelete, arm.ProvisioningStateSucceeded, ""),
		},
		uris:     map[docKey]string{mine: checkURI, implicit: ""},
		cs:       csCounts{creates: map[string]map[int]int{"cluster/x": {503: 1, 201: 1}}, statuses: map[int]int{201: 1, 429: 1, 500: 1, 503: 1}},
		simPosts: map[string]int{"cluster": 2},
		delivered: func(uri string) []arm.ProvisioningState {
			if uri == checkURI {
				return []arm.ProvisioningState{arm.ProvisioningStateSucceeded}
			}
			return nil
		},
		notifyAttempts: 2, notifyFailures: 1,
		feed:  triggerhost.FeedStats{Batches: 2, Deliveries: 4, Duplicated: 2, Reordered: 1},
		kills: 2, starts: 3,
		status: map[string]string{"c0/create": "Succeeded"},
	}
}

func TestEvidenceProblems(t *testing.T) {
	mine, implicit := docKey{"p", "op1"}, docKey{"p", "op2"}
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
		{"one kill", func(e *evidence) { e.kills, e.starts = 1, 2 }, "chaos: the handler was killed 1 times"},
		{"a kill without a restart", func(e *evidence) { e.starts = 2 }, "chaos: the handler started 2 times after 2 kills, want 3"},
		{"batches delivered once", func(e *evidence) { e.feed.Duplicated = 1 }, "chaos: 1 of 2 change-feed batches were delivered twice"},
		{"feed in order", func(e *evidence) { e.feed.Reordered = 0 }, "chaos: no change-feed batch was delivered out of order"},
		{"no 503", func(e *evidence) { delete(e.cs.statuses, http.StatusServiceUnavailable) }, "chaos: clusters service never answered 503"},
		{"sink never failed", func(e *evidence) { e.notifyFailures = 0 }, "chaos: no ARM notification failed"},
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
