package lifecycle

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// TestUpgradeOutlastingItsDeadline is issue #43's case 6: a node pool
// (or control plane) upgrade outlasting HCPOPS_UPGRADE_DEADLINE while CS's
// policy says it is started. No deadline overrides CS's word that the work
// is under way: the operation is marked stuck past its deadline (one
// operation.stuck record saying so), stays Updating, and ends Succeeded
// when CS finishes at the new version, ARM told once.
func TestUpgradeOutlastingItsDeadline(t *testing.T) {
	for _, tc := range upgradeCases() {
		t.Run(tc.name, func(t *testing.T) {
			e, _, _ := upgradeEnv(t, time.Hour, func(c *Config) { c.UpgradeDeadline = 10 * time.Minute })
			op := e.update(t, tc.rid, request{notify: true}, tc.change)
			for range 30 { // 30 minutes: 20 past the deadline, CS's policy started
				if _, err := e.deliver(t); err != nil {
					t.Fatal(err)
				}
				e.tick(t)
				e.clk.Advance(time.Minute)
			}
			if got := e.op(t, op).Properties.Status; got != arm.ProvisioningStateUpdating {
				t.Fatalf("the update is %s past its deadline while CS's upgrade policy is started; want Updating", got)
			}
			overdue := e.overdueRecords(op)
			if len(overdue) != 1 || !strings.Contains(overdue[0], "started") {
				t.Fatalf("want one operation.stuck record past the deadline naming CS's word; got %q", overdue)
			}
			e.drive(t, op)
			e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
			if calls := e.sink.calls(op); len(calls) != 1 {
				t.Fatalf("ARM told %d times, want once", len(calls))
			}
		})
	}
}

// TestOverdueHeldOperationCanBeFailedByAnOperator: ops fail still ends an
// operation held past its deadline.
func TestOverdueHeldOperationCanBeFailedByAnOperator(t *testing.T) {
	tc := upgradeCases()[1]
	e, _, _ := upgradeEnv(t, time.Hour, func(c *Config) { c.UpgradeDeadline = 10 * time.Minute })
	op := e.update(t, tc.rid, request{}, tc.change)
	for range 15 {
		if _, err := e.deliver(t); err != nil {
			t.Fatal(err)
		}
		e.tick(t)
		e.clk.Advance(time.Minute)
	}
	e.wantOp(t, op, arm.ProvisioningStateUpdating, "")
	if _, err := e.engine.abandon(context.Background(), abandonReq(op, arm.ProvisioningStateFailed)); err != nil {
		t.Fatal(err)
	}
	e.wantOp(t, op, arm.ProvisioningStateFailed, CodeOperationAbandoned)
	e.tick(t)
	e.wantOp(t, op, arm.ProvisioningStateFailed, CodeOperationAbandoned)
}

// heldOverdue checks an operation past its deadline was held on CS's word:
// one operation.stuck record saying so.
func heldOverdue(t *testing.T, e *env, op *document.OperationDocument) {
	t.Helper()
	if n := len(e.overdueRecords(op.Name())); n != 1 {
		t.Errorf("%d operation.stuck records past the deadline, want 1:\n%s", n, e.logs.String())
	}
}

// overdueRecords are the operation.stuck records of operation name that
// say it is past its deadline.
func (e *env) overdueRecords(name string) []string {
	var out []string
	for _, l := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(l, "msg="+MsgStuck) && strings.Contains(l, "operation_id="+name) && strings.Contains(l, "past_deadline=true") {
			out = append(out, l)
		}
	}
	return out
}

// csDown answers every CS request with a gateway's 503: CS unreadable.
func csDown(_ *testing.T, e *env) {
	e.fake.Front(func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasPrefix(r.URL.Path, "/api/") {
			return false
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	})
}
