package lifecycle

import (
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/simulator"
)

// TestFailuresReachFailed: CS failures become Failed operations with the
// error ARO-HCP would record, on the operation and the resource alike.
func TestFailuresReachFailed(t *testing.T) {
	np, ea := nodePoolRID("c1", "np1"), externalAuthRID("c1", "default")
	tests := []struct {
		name    string
		run     func(t *testing.T, e *env) (op, rid string)
		code    string
		message string
		details int
	}{{
		name: "cluster provision error",
		run: func(t *testing.T, e *env) (string, string) {
			if _, err := e.sim.FailCluster("c1", simulator.ClusterFailure{Code: "OCM3055", Message: "quota exceeded in eastus"}); err != nil {
				t.Fatal(err)
			}
			return e.create(t, document.KindCluster, clusterRID("c1"), request{notify: true}), clusterRID("c1")
		},
		code: "OCM3055", message: "quota exceeded in eastus",
	}, {
		name: "OCM4001 with one failed check",
		run: func(t *testing.T, e *env) (string, string) {
			f := simulator.ClusterFailure{Code: cs.ProvisionErrorInflightChecks, CheckErrors: []string{"subnet has no route to login.microsoftonline.com"}}
			if _, err := e.sim.FailCluster("c1", f); err != nil {
				t.Fatal(err)
			}
			return e.create(t, document.KindCluster, clusterRID("c1"), request{notify: true}), clusterRID("c1")
		},
		code: arm.CodeInternalServerError, message: "subnet has no route to login.microsoftonline.com",
	}, {
		name: "OCM4001 with three failed checks",
		run: func(t *testing.T, e *env) (string, string) {
			f := simulator.ClusterFailure{Code: cs.ProvisionErrorInflightChecks, FailedChecks: 3}
			if _, err := e.sim.FailCluster("c1", f); err != nil {
				t.Fatal(err)
			}
			return e.create(t, document.KindCluster, clusterRID("c1"), request{notify: true}), clusterRID("c1")
		},
		code: arm.CodeMultipleErrorsOccurred, message: "Cluster provisioning failed due to multiple errors", details: 3,
	}, {
		name: "node pool error",
		run: func(t *testing.T, e *env) (string, string) {
			e.readyCluster(t, "c1")
			if _, err := e.sim.FailNodePool("c1", "np1", simulator.NodePoolFailure{State: cs.NodePoolStateError, Message: "VM size not available"}); err != nil {
				t.Fatal(err)
			}
			return e.create(t, document.KindNodePool, np, request{notify: true}), np
		},
		code: arm.CodeInternalServerError, message: "VM size not available",
	}, {
		name: "external auth error",
		run: func(t *testing.T, e *env) (string, string) {
			e.readyCluster(t, "c1")
			if _, err := e.sim.FailExternalAuth("c1", "default", simulator.ExternalAuthFailure{Message: "issuer URL not reachable"}); err != nil {
				t.Fatal(err)
			}
			return e.create(t, document.KindExternalAuth, ea, request{notify: true}), ea
		},
		code: arm.CodeInternalServerError, message: "issuer URL not reachable",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			name, rid := tc.run(t, e)
			e.drive(t, name)
			op := e.wantOp(t, name, arm.ProvisioningStateFailed, tc.code)
			if got := op.Properties.Error.Message; !strings.Contains(got, tc.message) {
				t.Errorf("error message = %q, want it to contain %q", got, tc.message)
			}
			if got := len(op.Properties.Error.Details); got != tc.details {
				t.Errorf("error details = %d (%+v), want %d", got, op.Properties.Error.Details, tc.details)
			}
			r := e.resource(t, rid)
			if r.ProvisioningState() != arm.ProvisioningStateFailed || r.ActiveOperationID() != "" {
				t.Errorf("resource = %s, active %q; want Failed and released", r.ProvisioningState(), r.ActiveOperationID())
			}
			calls := e.sink.calls(name)
			if len(calls) != 1 || calls[0].Body.Error == nil || calls[0].Body.Error.Code != tc.code {
				t.Errorf("notifications = %+v, want one carrying code %s", calls, tc.code)
			}
		})
	}
}

func TestDeadlineFailsOperation(t *testing.T) {
	// CS stops answering after the first tick: past the deadline no word
	// of CS's holds the create (overdue.go), so the deadline fails it at
	// its next attempt.
	t.Run("resource deadline, CS unreadable", func(t *testing.T) {
		e := newEnv(t)
		d := testDurations()
		d.ClusterInstalling = 3 * time.Hour
		e.sim.SetDurations(d)
		deadline := e.clk.Now().Add(5 * time.Minute)
		name := e.create(t, document.KindCluster, clusterRID("c1"), request{})
		e.editDoc(t, clusterRID("c1"), func(doc obj) {
			spp(doc)["createOperationCompletionDeadline"] = deadline.Format(time.RFC3339)
		})
		var expired int
		for i := 0; i < 8; i++ {
			if _, err := e.deliver(t); err != nil {
				t.Fatal(err)
			}
			if i == 1 {
				if err := e.sim.SetFaults(simulator.Faults{ErrorRate: 1, ErrorStatus: 500}); err != nil {
					t.Fatal(err)
				}
			}
			expired += e.tick(t).Expired
			e.clk.Advance(time.Minute)
		}
		op := e.wantOp(t, name, arm.ProvisioningStateFailed, arm.CodeInternalServerError)
		want := "cluster creation did not complete before the deadline 2026-08-20T10:05:00Z"
		if op.Properties.Error.Message != want {
			t.Errorf("message = %q, want %q", op.Properties.Error.Message, want)
		}
		if expired != 1 {
			t.Errorf("ticks reported %d expiries, want 1", expired)
		}
		if got := op.Properties.LastTransitionTime; got.Before(deadline) {
			t.Errorf("failed at %s, before the deadline %s", got, deadline)
		}
	})
	t.Run("configured default, CS unreachable", func(t *testing.T) {
		e := newEnv(t, func(c *Config) { c.DeleteDeadline = 10 * time.Minute })
		e.readyCluster(t, "c1")
		e.drive(t, e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{}))
		start := e.clk.Now()
		name := e.remove(t, nodePoolRID("c1", "np1"), request{})[0]
		if _, err := e.deliver(t); err != nil {
			t.Fatal(err)
		}
		if err := e.sim.SetFaults(simulator.Faults{ErrorRate: 1, ErrorStatus: 500}); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(11 * time.Minute)
		res := e.tick(t)
		op := e.wantOp(t, name, arm.ProvisioningStateFailed, arm.CodeInternalServerError)
		want := "node pool deletion did not complete before the deadline " + start.Add(10*time.Minute).UTC().Format(time.RFC3339)
		if op.Properties.Error.Message != want || res.Expired != 1 {
			t.Errorf("message %q, expired %d; want %q, 1", op.Properties.Error.Message, res.Expired, want)
		}
	})
}

func TestSupersededOperationIsCanceled(t *testing.T) {
	e := newEnv(t)
	name := e.create(t, document.KindCluster, clusterRID("c1"), request{notify: true})
	// A newer operation took the resource before this one was dispatched.
	doc, etag := e.readDoc(t, clusterRID("c1"))
	newer := "0b7e6f4e-3a59-4c7e-a1b0-6f1f3f6f2a10"
	spp(doc)["activeOperationId"] = newer
	if _, err := e.store.Store.Replace(t.Context(), testPK, document.CosmosID(clusterRID("c1")), mustJSON(t, doc), etag); err != nil {
		t.Fatal(err)
	}
	res, err := e.deliver(t)
	if err != nil || res.Dispatched != 0 || res.Skipped == 0 {
		t.Fatalf("dispatch = %+v, %v; want the operation skipped", res, err)
	}
	tr := e.tick(t)
	op := e.wantOp(t, name, arm.ProvisioningStateCanceled, arm.CodeCanceled)
	if op.Properties.Error.Message != "This operation was superseded by another" || tr.Canceled != 1 {
		t.Errorf("error %+v, canceled %d", op.Properties.Error, tr.Canceled)
	}
	if r := e.resource(t, clusterRID("c1")); r.ActiveOperationID() != newer || r.ProvisioningState() != arm.ProvisioningStateAccepted {
		t.Errorf("the resource changed: active %q, %s", r.ActiveOperationID(), r.ProvisioningState())
	}
	if got := e.sim.Ledger().Total(); got != 0 {
		t.Errorf("CS saw %d requests, want none", got)
	}
	if calls := e.sink.calls(name); len(calls) != 1 || calls[0].Body.Status != arm.ProvisioningStateCanceled {
		t.Errorf("notifications = %+v, want one Canceled", calls)
	}
}

func TestTickDispatchesWhatTheChangeFeedMissed(t *testing.T) {
	e := newEnv(t)
	name := e.create(t, document.KindCluster, clusterRID("c1"), request{})
	for _, step := range []time.Duration{0, 30 * time.Second} {
		e.clk.Advance(step)
		if res := e.tick(t); res.Dispatched != 0 || res.Polled != 1 {
			t.Fatalf("tick before the grace = %+v, want the operation polled, not dispatched", res)
		}
	}
	e.clk.Advance(31 * time.Second)
	if res := e.tick(t); res.Dispatched != 1 {
		t.Fatalf("tick after the grace = %+v, want one dispatch", res)
	}
	for i := 0; i < 10 && !e.op(t, name).Properties.Status.IsTerminal(); i++ {
		e.clk.Advance(time.Minute)
		e.tick(t)
	}
	e.wantOp(t, name, arm.ProvisioningStateSucceeded, "")
	if got := e.csPosts(clustersPOST); got != 1 {
		t.Errorf("cluster POSTs = %d, want 1", got)
	}
}
