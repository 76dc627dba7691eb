package soak

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/store/embedded"
	"github.com/hcpops/hcpops/harness/store/embedded/embeddedtest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

func TestObserverFollowsOperations(t *testing.T) {
	st := embeddedtest.Open(t, embedded.WithoutSync())
	ctx := context.Background()
	fe := frontend.New(st, clock.Real{}, uuid.NewString)
	b := builder{ids: ids{subscription: "0f0e0d0c-0000-4000-8000-000000000001", cluster: "c1"}, name: "c1"}
	acc, err := fe.PutCluster(ctx, b.clusterID(), clusterSpec(nil), frontend.Options{NotificationURI: "http://127.0.0.1:1/notify/c1"})
	must(t, err)
	k := docKey{pk: acc.Operation.PartitionKey, id: acc.Operation.ID}

	obs := newObserver(st, time.Millisecond, slog.New(slog.DiscardHandler))
	must(t, obs.drain(ctx))
	op, ok := obs.op(k)
	if !ok || op.Properties.Status != arm.ProvisioningStateAccepted {
		t.Fatalf("op = %+v, %v; want the Accepted operation", op, ok)
	}
	if done, pending := obs.settled(); done || pending != 1 {
		t.Errorf("settled = %v with %d pending, want 1 pending", done, pending)
	}

	// The backend finishes it and clears the URI.
	it, err := st.Get(ctx, k.pk, k.id)
	must(t, err)
	doc, err := document.ParseOperation(it.Body)
	must(t, err)
	doc.Properties.SetStatus(time.Now(), arm.ProvisioningStateSucceeded, nil)
	doc.Properties.NotificationURI = ""
	body, err := doc.MarshalReplace()
	must(t, err)
	_, err = st.Replace(ctx, k.pk, k.id, body, it.ETag)
	must(t, err)

	clk := testsupport.NewClock(time.Now())
	obs.clock = clk
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); obs.run(runCtx) }()
	clk.AwaitWaiter(t) // run has read what there is and waits for its next read
	if settled, pending := obs.settled(); !settled {
		t.Fatalf("the observer's run did not see the operation finish: %d pending", pending)
	}
	stop()
	<-done
	versions, ops, uris := obs.snapshot()
	if got := versions[k]; len(got) != 2 || got[0].version != 1 || got[1].version != 2 {
		t.Errorf("versions of the operation = %+v, want 1 then 2", got)
	}
	if ops[k].Properties.Status != arm.ProvisioningStateSucceeded {
		t.Errorf("latest status %s", ops[k].Properties.Status)
	}
	if uris[k] != "http://127.0.0.1:1/notify/c1" {
		t.Errorf("created with URI %q", uris[k])
	}
	if len(versions) != 2 {
		t.Errorf("%d documents seen, want the operation and the cluster", len(versions))
	}
}
