package lifecycle

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

func abandonReq(name string, status arm.ProvisioningState) AbandonRequest {
	return AbandonRequest{PartitionKey: testPK, ID: document.CosmosID(document.OperationResourceID(testSub, name)),
		Status: status, Reason: "CS lost the cluster", By: "alice"}
}

// An abandoned operation ends as the lifecycle would end it: the
// operation and the resource written together, ARM notified with the
// operator's reason, and a tick afterwards changes nothing.
func TestAbandonEndsAnActiveOperation(t *testing.T) {
	for _, c := range []struct {
		status arm.ProvisioningState
		// cli: through Abandon, as the CLI calls it, with an engine of
		// its own; else the serving engine's abandon.
		cli bool
	}{
		{arm.ProvisioningStateFailed, false},
		{arm.ProvisioningStateCanceled, false},
		{arm.ProvisioningStateFailed, true},
	} {
		t.Run(string(c.status), func(t *testing.T) {
			e := newEnv(t)
			rid := clusterRID("lost")
			name := e.create(t, document.KindCluster, rid, request{notify: true})
			if _, err := e.deliver(t); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(2 * time.Minute)
			e.tick(t)
			e.wantOp(t, name, arm.ProvisioningStateProvisioning, "")
			abandon := e.engine.abandon
			if c.cli {
				abandon = func(ctx context.Context, req AbandonRequest) (Abandoned, error) {
					return Abandon(ctx, AbandonDeps{Store: e.store, Notifier: e.notifier(), Clock: e.clk,
						Logger: slog.New(slog.NewJSONHandler(e.logs, nil))}, e.cfg, req)
				}
			}
			got, err := abandon(context.Background(), abandonReq(name, c.status))
			if err != nil {
				t.Fatalf("Abandon: %v", err)
			}
			op := e.wantOp(t, name, c.status, CodeOperationAbandoned)
			if msg := op.Properties.Error.Message; msg != "Abandoned by alice: CS lost the cluster" {
				t.Errorf("error message %q", msg)
			}
			if got.From != arm.ProvisioningStateProvisioning || !got.ResourceUpdated || got.NotificationPending {
				t.Errorf("Abandon = %+v, want from Provisioning, resource updated, notified", got)
			}
			res := e.resource(t, rid)
			if res.ProvisioningState() != c.status || res.ActiveOperationID() != "" {
				t.Errorf("resource: %s, active %q; want %s and no active operation", res.ProvisioningState(), res.ActiveOperationID(), c.status)
			}
			calls := e.sink.calls(name)
			if len(calls) != 1 || calls[0].Body.Status != c.status || calls[0].Body.Error == nil ||
				calls[0].Body.Error.Code != CodeOperationAbandoned || !strings.Contains(calls[0].Body.Error.Message, "Abandoned by alice") {
				t.Errorf("ARM got %d notifications: %+v", len(calls), calls)
			}
			if !strings.Contains(e.logs.String(), MsgAbandoned) || !strings.Contains(e.logs.String(), "CS lost the cluster") {
				t.Errorf("no %s record with the reason:\n%s", MsgAbandoned, e.logs.String())
			}
			e.clk.Advance(10 * time.Minute) // CS finishes: the tick must not undo the operator
			e.tick(t)
			e.wantOp(t, name, c.status, CodeOperationAbandoned)
		})
	}
}

// Refusals write nothing: a terminal or unknown operation, an empty
// reason or operator, a status that is not Failed or Canceled.
func TestAbandonRefuses(t *testing.T) {
	e := newEnv(t)
	done := e.create(t, document.KindCluster, clusterRID("done"), request{})
	e.drive(t, done)
	live := e.create(t, document.KindCluster, clusterRID("live"), request{})
	before := e.op(t, live).ETag
	noReason, noBy, succeeded := abandonReq(live, arm.ProvisioningStateFailed), abandonReq(live, arm.ProvisioningStateFailed), abandonReq(live, arm.ProvisioningStateSucceeded)
	noReason.Reason, noBy.By = "  ", ""
	for _, c := range []struct {
		req       AbandonRequest
		want      string
		abandoned bool // ErrNotAbandonable
	}{
		{abandonReq(done, arm.ProvisioningStateFailed), "is already Succeeded; nothing was written", true},
		{abandonReq("6e34c52d-4115-4834-abff-933590456a6e", arm.ProvisioningStateCanceled), "no operation", true},
		{noReason, "the reason is empty", false},
		{noBy, "the operator is empty", false},
		{succeeded, `status "Succeeded": want Failed or Canceled`, false},
	} {
		_, err := e.engine.abandon(context.Background(), c.req)
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, ErrNotAbandonable) != c.abandoned {
			t.Errorf("Abandon(%+v) = %v, want %q", c.req, err, c.want)
		}
	}
	e.wantOp(t, done, arm.ProvisioningStateSucceeded, "")
	if op := e.op(t, live); op.ETag != before {
		t.Errorf("a refused abandon wrote the live operation: %s", op.Properties.Status)
	}
}
