package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// TestDispatchWritesAreCounted: status writes and notifications a
// dispatcher makes (a canceled credential request, a failed update, a
// revocation's Deleting) reach the tick's or the batch's counts.
func TestDispatchWritesAreCounted(t *testing.T) {
	t.Run("change feed: canceled credential request", func(t *testing.T) {
		e := newEnv(t)
		e.readyCluster(t, "c1")
		revoke := e.revokeCredentials(t, "c1", request{})
		res, err := e.deliver(t)
		if err != nil || res.Dispatched != 1 || res.Changed != 1 {
			t.Fatalf("revocation batch = %+v, %v; want one dispatched with its Deleting write counted", res, err)
		}
		e.wantOp(t, revoke, arm.ProvisioningStateDeleting, "")
		req := e.racingCredentialRequest(t, "c1", request{notify: true})
		res, err = e.deliver(t)
		if err != nil || res.Changed != 1 || res.Notified != 1 {
			t.Fatalf("request batch = %+v, %v; want its cancel and notification counted", res, err)
		}
		e.wantOp(t, req, arm.ProvisioningStateCanceled, arm.CodeCanceled)
	})
	t.Run("tick: canceled credential request", func(t *testing.T) {
		// The revocation must still be running when the tick dispatches the
		// request: the tick polls both at once, and a revocation with no
		// credential to revoke would finish in that same tick. So a
		// credential is issued first (revoking it takes CredentialRevoking,
		// a minute) and the tick comes after a grace shorter than that.
		const grace = 30 * time.Second
		e := newEnv(t, func(c *Config) { c.DispatchGrace = grace })
		e.readyCluster(t, "c1")
		e.drive(t, e.requestCredential(t, "c1", request{}))
		revoke := e.revokeCredentials(t, "c1", request{})
		if _, err := e.deliver(t); err != nil {
			t.Fatal(err)
		}
		req := e.racingCredentialRequest(t, "c1", request{notify: true})
		e.feed(t) // the change feed loses the request: the tick picks it up
		e.clk.Advance(grace + time.Second)
		tr := e.tick(t)
		if tr.Canceled != 1 || tr.Notified != 1 || tr.Changed < 1 {
			t.Fatalf("tick = %+v; want the cancel and its notification counted", tr)
		}
		e.wantOp(t, req, arm.ProvisioningStateCanceled, arm.CodeCanceled)
		e.wantOp(t, revoke, arm.ProvisioningStateDeleting, "")
	})
	t.Run("tick: update of a resource CS never had", func(t *testing.T) {
		e := newEnv(t)
		create := e.create(t, document.KindCluster, clusterRID("c1"), request{})
		update := e.racingUpdate(t, clusterRID("c1"), request{notify: true})
		e.feed(t)
		e.clk.Advance(2 * time.Minute)
		tr := e.tick(t)
		if tr.Notified < 1 || tr.Changed < 2 {
			t.Fatalf("tick = %+v; want the create's cancel, the update's failure and its notification counted", tr)
		}
		e.wantOp(t, create, arm.ProvisioningStateCanceled, arm.CodeCanceled)
		e.wantOp(t, update, arm.ProvisioningStateFailed, arm.CodeInternalServerError)
	})
}

// TestStatusWriterCounts: updateOperationStatus counts each write it
// makes, and a status already recorded (no write) adds nothing: its
// callers count only what they know besides (a cancel, an expiry).
func TestStatusWriterCounts(t *testing.T) {
	e := newEnv(t)
	name := e.create(t, document.KindCluster, clusterRID("c1"), request{notify: true})
	if _, err := e.deliver(t); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	j, err := e.engine.jobFor(ctx, e.op(t, name), pageRead{})
	if err != nil {
		t.Fatal(err)
	}
	r := &run{Engine: e.engine}
	for i, tc := range []struct {
		status            arm.ProvisioningState
		wrote             bool
		changed, notified int64
	}{
		{arm.ProvisioningStateProvisioning, true, 1, 0},
		{arm.ProvisioningStateProvisioning, false, 1, 0}, // recorded already
		{arm.ProvisioningStateSucceeded, true, 2, 1},     // terminal: notified too
		{arm.ProvisioningStateFailed, false, 2, 1},       // terminal stays
	} {
		e.clk.Advance(time.Minute)
		wrote, err := r.updateOperationStatus(ctx, j, tc.status, nil)
		if err != nil || wrote != tc.wrote {
			t.Fatalf("write %d (%s) = %v, %v; want %v", i, tc.status, wrote, err, tc.wrote)
		}
		if c, n := r.count.changed.Load(), r.count.notified.Load(); c != tc.changed || n != tc.notified {
			t.Errorf("after write %d (%s): changed %d, notified %d; want %d, %d", i, tc.status, c, n, tc.changed, tc.notified)
		}
	}
}
