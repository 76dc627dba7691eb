package dst

import (
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/armread"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// armPoller is ARM polling each operation's status, as it does after a
// 202, through the read service the Function App serves it with: a
// terminal state once shown never changes.
func (w *world) armPoller(rng *rand.Rand) {
	ctx := withActor(w.ctx, "arm")
	client, err := ocm.New(ctx, ocm.Config{URL: csURL, RetryLimit: 2, RetryInterval: time.Second, NoRetryJitter: true, Timeout: 10 * time.Second,
		Recorder: clusterservice.NewRecorder(clock.Real{}, nil), Transport: w.cs}, nil)
	if err != nil {
		panic("dst: the read service's CS client: " + err.Error())
	}
	defer func() { _ = client.Close() }()
	reads, err := armread.NewReadService(armread.ReadDeps{Store: w.store, ClusterService: client,
		Logger: slog.New(w.logs), Clock: clock.Real{}}, armread.ReadConfig{})
	if err != nil {
		panic("dst: the read service: " + err.Error())
	}
	shown := map[string]arm.ProvisioningState{}
	period := 30*time.Second + offset(rng)
	for sleep(ctx, period) {
		w.sched.gate(ctx, "polls")
		for _, op := range w.oracle.unshown(shown) {
			st, err := reads.Status(ctx, armread.StatusRequest{SubscriptionID: testsupport.Subscription, Location: "eastus",
				OperationName: op.name, HomeTenantID: testsupport.Tenant, ClientObjectID: testsupport.Client})
			if err != nil {
				continue // a store fault: ARM polls again
			}
			w.cover.add("arm status read", 1)
			if prev := shown[op.id]; prev.IsTerminal() && st.Status != prev {
				w.oracle.failf([]string{op.name}, "ARM was shown %s %s %s, then %s", op.request, op.name, prev, st.Status)
			}
			shown[op.id] = st.Status
		}
	}
}

// unshown are the operations ARM has not yet been shown terminal, sorted.
func (o *oracle) unshown(shown map[string]arm.ProvisioningState) []*operation {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*operation
	for _, id := range slices.Sorted(maps.Keys(o.ops)) {
		if !shown[id].IsTerminal() {
			out = append(out, o.ops[id])
		}
	}
	return out
}

// failf records a problem found outside a terminal write.
func (o *oracle) failf(ids []string, format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.fail(fmt.Sprintf(format, args...), ids...)
}
