package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/apptest"
	"github.com/hcpops/hcpops/internal/operator"
	"github.com/hcpops/hcpops/logging"
)

// docs/runbooks.md's "Operation stuck", walked end to end as on-call would:
// a cluster create runs past its 20-minute threshold; the alert's shipped
// query matches it; the runbook's first query tells the causes apart (it
// was dispatched and reached Provisioning, no warnings: CS is working on
// it); asking CS for the object says installing; then
//   - "CS is working on it, slowly": nothing changes by hand; CS finishes,
//     the operation ends Succeeded and the alert resolves;
//   - "CS lost the object" (its GET is CS's own 404): the runbook's
//     "Ending an operation by hand", run with the operator's commands on
//     the same store, ends it Failed with OperationAbandoned and the alert
//     resolves.
func TestRunbookOperationStuck(t *testing.T) {
	runbook := readDeploy(t, "../docs/runbooks.md")
	for _, step := range []string{"`GET <CLUSTERS_SERVICE_URL><cluster_service_id>`", "*CS is working on it, slowly.*",
		"hcpopsctl ops fail <status path, or UUID with -subscription SUB> -reason"} {
		if !strings.Contains(runbook, step) {
			t.Fatalf("docs/runbooks.md no longer says %s, which this walks", step)
		}
	}
	for _, cause := range []string{"slow", "lost"} {
		t.Run(cause, func(t *testing.T) {
			var simURL string
			r := apptest.New(t, apptest.Options{Settings: func(u string) map[string]string {
				simURL = u
				return map[string]string{"HCPOPS_PENDING_ID_GRACE": "1ms", "HCPOPS_DISPATCH_GRACE": "1ms"}
			}})
			d := r.Sim.Durations()
			d.ClusterInstalling = 2 * time.Hour // CS is slow: the create cannot finish within its threshold
			r.Sim.SetDurations(d)
			// Inject: the create started 25 minutes ago.
			r.SubmitAt(time.Now().Add(-25 * time.Minute))
			r.Dispatch()
			for ticks := 0; r.Operation().Properties.Status != arm.ProvisioningStateProvisioning; ticks++ {
				if ticks > 50 {
					t.Fatalf("the create never reached Provisioning: %s", r.Operation().Properties.Status)
				}
				r.Sim.Advance(10 * time.Second)
				r.Tick()
			}

			// The alert's shipped query (stuck:cluster.create, 20 minutes) matches it.
			qStuck := shippedQuery(t, "stuck")
			now := time.Now().Add(time.Second)
			if got := stuckAlert(qStuck, r.Logs.Records(t), now, "cluster", "Create", 20*time.Minute); len(got) != 1 ||
				got[0].operationID != apptest.OpName || got[0].resourceID != apptest.ClusterID {
				t.Fatalf("the stuck alert's query = %+v, want the create %s of %s", got, apptest.OpName, apptest.ClusterID)
			}

			// The runbook's first query: the operation's story.
			var story []string
			var warned bool
			for _, rec := range r.Logs.Records(t) {
				if rec["operation_id"] == apptest.OpName {
					story = append(story, apptest.Str(rec, "msg"))
					warned = warned || rec["level"] == "WARN" && apptest.Str(rec, "msg") != "operation.stuck" || rec["level"] == "ERROR"
				}
			}
			if !strings.Contains(strings.Join(story, " "), "operation.dispatched") || !strings.Contains(strings.Join(story, " "), "operation.transition") || warned {
				t.Fatalf("the story does not tell \"CS is working on it\" (dispatched, a transition, no warnings): %v", story)
			}
			// Ask CS for the object, as the runbook says.
			csID := r.Resource().ClusterServiceID()
			if state := csState(t, simURL, csID); state != "installing" {
				t.Fatalf("CS says the cluster is %q, want installing", state)
			}

			switch cause {
			case "slow":
				// Nothing here needs changing: CS finishes, the operation ends.
				r.Sim.Advance(3 * time.Hour)
				for i := 0; r.Operation().Properties.Status != arm.ProvisioningStateSucceeded; i++ {
					if i > 20 {
						t.Fatalf("the create did not end once CS finished: %s", r.Operation().Properties.Status)
					}
					r.Tick()
				}
			case "lost":
				// CS lost the object: its GET is CS's own 404.
				req, _ := http.NewRequest(http.MethodDelete, simURL+csID, nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				r.Sim.Advance(time.Hour) // uninstalled: gone
				if state := csState(t, simURL, csID); state != "" {
					t.Fatalf("CS still has the cluster (%q)", state)
				}
				// Ending an operation by hand, with the operator's commands on the same store.
				var out bytes.Buffer
				env := operator.Env{Prog: "hcpopsctl", Getenv: func(string) string { return "" }, Stdin: strings.NewReader(""), Stdout: &out,
					Connect: func(context.Context, bool, bool) (store.Store, operator.Connection, error) {
						return nopClose{r.App.Store}, operator.Connection{Name: "the rig's store", Server: "the rig's next tick"}, nil
					},
					// Its records collected with the app's, as the runbook
					// asks of an operator's stderr: the alert reads them.
					ActionLog: func() (*slog.Logger, func()) {
						return slog.New(logging.Streams(r.Logs, r.Logs, "json", slog.LevelInfo)), func() {}
					},
				}
				if _, err := operator.Run(context.Background(), env, "ops", []string{"fail", apptest.OpName, "-subscription", apptest.Subscription,
					"-reason", "CS lost cluster " + csID + "; ticket 1234", "-by", "oncall"}); err != nil {
					t.Fatalf("ops fail: %v\n%s", err, out.String())
				}
				if p := r.Operation().Properties; p.Status != arm.ProvisioningStateFailed || p.Error == nil || p.Error.Code != "OperationAbandoned" {
					t.Fatalf("after ops fail: %s %+v", p.Status, p.Error)
				}
				r.Tick() // and the backend leaves it be
				if st := r.Operation().Properties.Status; st != arm.ProvisioningStateFailed {
					t.Errorf("a tick after ops fail moved the operation to %s", st)
				}
			}
			if got := stuckAlert(qStuck, r.Logs.Records(t), time.Now().Add(time.Second), "cluster", "Create", 20*time.Minute); len(got) != 0 {
				t.Errorf("the stuck alert once the operation ended = %+v, want it resolved", got)
			}
		})
	}
}

// csState is the state CS gives the object at csID (its cluster_service_id,
// a path), "" when CS answers its own 404.
func csState(t *testing.T, simURL, csID string) string {
	t.Helper()
	resp, err := http.Get(simURL + csID) // the id is the object's path in CS, as the runbook says
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusNotFound {
		return ""
	}
	var c struct {
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatalf("GET cluster %s: %d %s", csID, resp.StatusCode, body)
	}
	return c.Status.State
}

// nopClose lends the rig's store to a command, which closes what it is
// given.
type nopClose struct{ store.Store }

func (nopClose) Close() error { return nil }
