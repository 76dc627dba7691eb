package soak

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/harness/armsink"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/simulator"
)

// Caller identity the requests carry (X-Ms-Home-Tenant-Id and
// X-Ms-Client-Object-Id); made up.
const (
	soakTenantID = "736f616b-0000-4000-8000-000000000001"
	soakClientID = "736f616b-0000-4000-8000-000000000002"
)

// submitted is what became of one request.
type submitted struct {
	request
	scenario   string
	op         docKey // the operation document, once accepted
	statusPath string
	// deadlineAt is when a request with a deadline must be terminal.
	deadlineAt time.Time
	uri        string
	conflicts  int
	// problem says why it never ran or never finished.
	problem string
	outcome arm.ProvisioningState
}

// driver plays every scenario against the frontend: each scenario in a
// goroutine of its own, from its start offset, one stage at a time.
type driver struct {
	fe     *frontend.Frontend
	sim    *simulator.Simulator
	sink   *armsink.Sink
	obs    *observer
	logger *slog.Logger
	// every is how often a waiting scenario looks at the observer;
	// conflictPause how long it waits before sending a 409'd request again.
	every, conflictPause time.Duration
	// conflictBudget bounds how long a request keeps meeting 409s.
	conflictBudget time.Duration

	mu      sync.Mutex
	results []*submitted
}

func (d *driver) run(ctx context.Context, plan []scenario) {
	var wg sync.WaitGroup
	start := time.Now()
	for _, sc := range plan {
		wg.Go(func() {
			select {
			case <-ctx.Done():
			case <-time.After(time.Until(start.Add(sc.start))):
			}
			d.play(ctx, sc)
		})
	}
	wg.Wait()
}

// play runs one scenario. A stage whose requests did not all end as
// planned stops the scenario: what follows would only fail for that.
func (d *driver) play(ctx context.Context, sc scenario) {
	stopped := ""
	for _, st := range sc.stages {
		var subs []*submitted
		for _, r := range st {
			s := &submitted{request: r, scenario: sc.name, uri: d.sink.URI(r.label)}
			d.record(s)
			if stopped != "" {
				s.problem = "not sent: " + stopped
				continue
			}
			if r.delay > 0 {
				sleep(ctx, r.delay)
			}
			d.submit(ctx, s)
			subs = append(subs, s)
		}
		for _, s := range subs {
			if s.problem == "" {
				d.wait(ctx, s)
			}
			if s.problem != "" && stopped == "" {
				stopped = s.label + " " + s.problem
			} else if !slices.Contains(s.want, s.outcome) && stopped == "" {
				stopped = fmt.Sprintf("%s ended %s", s.label, s.outcome)
			}
		}
	}
}

func (d *driver) record(s *submitted) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.results = append(d.results, s)
}

// submit sends one request, again after each 409 until conflictBudget.
func (d *driver) submit(ctx context.Context, s *submitted) {
	if s.prepare != nil {
		if err := s.prepare(d.sim); err != nil {
			s.problem = "preparing the simulator: " + err.Error()
			return
		}
	}
	opts := frontend.Options{Location: location, TenantID: soakTenantID, ClientID: soakClientID, NotificationURI: s.uri,
		ClientRequestID: uuid.NewString(), CorrelationRequestID: uuid.NewString(), CreateDeadline: s.deadline}
	deadline := time.Now().Add(d.conflictBudget)
	for {
		acc, err := s.submit(ctx, d.fe, opts)
		switch {
		case err == nil:
			s.op = docKey{pk: acc.Operation.PartitionKey, id: acc.Operation.ID}
			s.statusPath = acc.StatusPath()
			if s.deadline > 0 {
				// The resource document keeps whole seconds (RFC 3339).
				s.deadlineAt = acc.Operation.Properties.StartTime.Add(s.deadline).Truncate(time.Second)
			}
			return
		case frontend.IsConflict(err) && time.Now().Before(deadline) && ctx.Err() == nil:
			s.conflicts++
			d.logger.DebugContext(ctx, "soak: request conflicts with one in flight; sending it again", "request", s.label, "error", err)
			sleep(ctx, d.conflictPause)
		default:
			s.problem = "not accepted: " + err.Error()
			return
		}
	}
}

// wait returns once the request's operation is terminal.
func (d *driver) wait(ctx context.Context, s *submitted) {
	for {
		if op, ok := d.obs.op(s.op); ok && op.Properties.Status.IsTerminal() {
			s.outcome = op.Properties.Status
			return
		}
		if ctx.Err() != nil {
			s.problem = "still not terminal when the run ended"
			return
		}
		sleep(ctx, d.every)
	}
}

// submissions returns every request of the run, in the order they were
// reached.
func (d *driver) submissions() []*submitted {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.results)
}

// sleep waits d; false means ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
