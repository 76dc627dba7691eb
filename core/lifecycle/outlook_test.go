package lifecycle

import (
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/document"
)

// An operator's outlook of an operation is the engine's own: the stuck
// crossing operation.stuck records, and the deadline the tick fails it
// at (the resource's own, else the configured one; none for an update).
func TestOutlook(t *testing.T) {
	e := newEnv(t)
	start := e.clk.Now()
	create := e.op(t, e.create(t, document.KindCluster, clusterRID("c1"), request{}))
	res := e.resource(t, clusterRID("c1"))
	cfg := Config{StuckAfter: map[StuckKey]time.Duration{{document.KindCluster, document.RequestCreate}: 5 * time.Minute}}

	own, hasOwn := res.CreateOperationCompletionDeadline()
	want := start.Add(DefaultCreateDeadline)
	if hasOwn {
		want = own
	}
	for _, tc := range []struct {
		at       time.Duration
		res      *document.Resource
		stuck    time.Duration
		deadline time.Time
		what     string
	}{
		{4 * time.Minute, res, 0, want, "young: not stuck"},
		{6 * time.Minute, res, 5 * time.Minute, want, "past its own threshold"},
		{61 * time.Minute, res, time.Hour, want, "past the backstop's hour"},
		{6 * time.Minute, nil, 5 * time.Minute, time.Time{}, "a create without its resource has no deadline"},
	} {
		o := NewOutlooker(cfg).Outlook(create, tc.res, start.Add(tc.at))
		if o.Stuck != tc.stuck || !o.Deadline.Equal(tc.deadline) {
			t.Errorf("%s: %+v, want stuck %s and deadline %s", tc.what, o, tc.stuck, tc.deadline)
		}
	}
	// The resource's own deadline wins over the setting.
	res.SetCreateOperationCompletionDeadline(start.Add(10 * time.Minute))
	if o := NewOutlooker(cfg).Outlook(create, res, start); !o.Deadline.Equal(start.Add(10 * time.Minute)) {
		t.Errorf("the resource's createOperationCompletionDeadline: %+v", o)
	}
	e.drive(t, create.Name())
	update := e.op(t, e.update(t, clusterRID("c1"), request{}, func(s *spec) { n := 30; s.cluster.NodeDrainTimeoutMinutes = &n }))
	// A cluster's update may change its version: the upgrade deadline.
	wantUpdate := update.Properties.StartTime.Add(DefaultUpgradeDeadline)
	if o := NewOutlooker(cfg).Outlook(update, e.resource(t, clusterRID("c1")), start.Add(2*time.Hour)); !o.Deadline.Equal(wantUpdate) || o.Stuck == 0 {
		t.Errorf("an update's deadline is the upgrade deadline %s, and it is stuck past 45m: %+v", wantUpdate, o)
	}
}
