package lifecycle

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// TestStatusWriteUsesTheJobsResource: a tick that moves every operation
// reads each target resource once, all of the page's in one ReadMany (the
// job's copy serves the status write, no point read), and leaves the job
// holding the documents as stored.
func TestStatusWriteUsesTheJobsResource(t *testing.T) {
	e := newEnv(t)
	const n = 3
	var ops []string
	for i := range n {
		ops = append(ops, e.create(t, document.KindCluster, clusterRID(fmt.Sprintf("c%d", i)), request{}))
	}
	if res, err := e.deliver(t); err != nil || res.Dispatched != n {
		t.Fatalf("dispatch = %+v, %v", res, err)
	}
	e.clk.Advance(2 * time.Minute) // installing: Provisioning is due
	reads, manys, docs := e.store.reads.Load(), e.store.readManys.Load(), e.store.readManyDocs.Load()
	if tr := e.tick(t); tr.Changed != n || tr.Errors != 0 {
		t.Fatalf("tick = %+v, want %d changed", tr, n)
	}
	if got := e.store.reads.Load() - reads; got != 0 {
		t.Errorf("point reads during the tick = %d, want none", got)
	}
	if m, d := e.store.readManys.Load()-manys, e.store.readManyDocs.Load()-docs; m != 1 || d != n {
		t.Errorf("ReadMany during the tick: %d calls for %d documents, want 1 for %d (one per resource)", m, d, n)
	}
	for i, op := range ops {
		e.wantOp(t, op, arm.ProvisioningStateProvisioning, "")
		if got := e.resource(t, clusterRID(fmt.Sprintf("c%d", i))).ProvisioningState(); got != arm.ProvisioningStateProvisioning {
			t.Errorf("cluster c%d state = %s, want Provisioning", i, got)
		}
	}
}

// TestStatusWriteLeavesTheJobCurrent: after a status write the job holds
// exactly what the store holds, etags and _ts included.
func TestStatusWriteLeavesTheJobCurrent(t *testing.T) {
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
	e.clk.Advance(time.Minute)
	changed, err := (&run{Engine: e.engine}).updateOperationStatus(ctx, j, arm.ProvisioningStateProvisioning, nil)
	if err != nil || !changed {
		t.Fatalf("updateOperationStatus = %v, %v", changed, err)
	}
	op, res := e.op(t, name), e.resource(t, clusterRID("c1"))
	if j.op.ETag != op.ETag || j.op.Timestamp != op.Timestamp {
		t.Errorf("job operation etag %s ts %d; stored %s %d", j.op.ETag, j.op.Timestamp, op.ETag, op.Timestamp)
	}
	if got, want := mustMarshal(t, j.op), mustMarshal(t, op); got != want {
		t.Errorf("job operation\n%s\nstored\n%s", got, want)
	}
	if j.res == nil || j.res.ETag != res.ETag || j.res.Timestamp != res.Timestamp {
		t.Fatalf("job resource %+v; stored etag %s", j.res, res.ETag)
	}
	if got, want := mustMarshal(t, j.res), mustMarshal(t, res); got != want {
		t.Errorf("job resource\n%s\nstored\n%s", got, want)
	}
}

func mustMarshal(t *testing.T, d interface{ Marshal() ([]byte, error) }) string {
	t.Helper()
	b, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStatusWriteAfterTheResourceChanged: the resource the job read is
// stale by the time of the status batch. The batch fails with 412, both
// documents are read again, and the retry keeps the change made meanwhile.
func TestStatusWriteAfterTheResourceChanged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, e *env)
		// gone: the resource was deleted, so the operation is written alone.
		gone bool
	}{
		{"edited", func(t *testing.T, e *env) {
			e.editDoc(t, clusterRID("c1"), func(doc obj) { props(doc)["tags"] = obj{"edited": "meanwhile"} })
		}, false},
		{"deleted", func(t *testing.T, e *env) {
			if err := e.store.Store.SoftDelete(context.Background(), testPK, document.CosmosID(clusterRID("c1"))); err != nil {
				t.Fatal(err)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			name := e.create(t, document.KindCluster, clusterRID("c1"), request{})
			if _, err := e.deliver(t); err != nil {
				t.Fatal(err)
			}
			e.clk.Advance(2 * time.Minute)
			var fired atomic.Int32
			e.store.setHook(func(ctx context.Context, phase hookPhase, w write) error {
				if phase == beforeWrite && w.kind == "Batch" && fired.CompareAndSwap(0, 1) {
					tc.change(t, e)
				}
				return nil
			})
			if tr := e.tick(t); tr.Changed != 1 || tr.Errors != 0 {
				t.Fatalf("tick = %+v, want the write to succeed after one re-read", tr)
			}
			if fired.Load() != 1 {
				t.Fatal("the change was never made")
			}
			e.wantOp(t, name, arm.ProvisioningStateProvisioning, "")
			if tc.gone {
				if r := e.resource(t, clusterRID("c1")); r != nil {
					t.Errorf("deleted cluster is back: %s", r.ProvisioningState())
				}
				return
			}
			r := e.resource(t, clusterRID("c1"))
			if r.ProvisioningState() != arm.ProvisioningStateProvisioning || r.Tags()["edited"] != "meanwhile" {
				t.Errorf("cluster state %s tags %v; want Provisioning and the edit kept", r.ProvisioningState(), r.Tags())
			}
		})
	}
}
