package devhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/armsink"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/simulator"
)

// maxConflicts bounds how often a sample is resubmitted after a 409 before
// the run counts it as failed.
const maxConflicts = 50

// sampleState is where one sample is on its way.
type sampleState struct {
	sample
	opName     string // set once accepted
	statusPath string // the Azure-AsyncOperation path ARM would poll
	conflicts  int
	failed     string // why it was never accepted
}

// runner submits the sample plan as prerequisites succeed and watches
// every operation of the run until all are terminal.
type runner struct {
	fe      *frontend.Frontend
	sim     *simulator.Simulator
	sink    *armsink.Sink
	tracker *tracker
	ids     resourceIDs
	logger  *slog.Logger
	out     io.Writer
	every   time.Duration

	samples []*sampleState
}

func newRunner(st store.Store, sim *simulator.Simulator, sk *armsink.Sink, tr *tracker, out io.Writer, logger *slog.Logger, plan []sample) (*runner, error) {
	ids := resourceIDs{subscription: uuid.NewString()}
	tr.samplePK = document.PartitionKey(ids.subscription)
	r := &runner{
		fe:      frontend.New(st, clock.Real{}, uuid.NewString),
		sim:     sim,
		sink:    sk,
		tracker: tr,
		ids:     ids,
		logger:  logger,
		out:     out,
		every:   200 * time.Millisecond,
	}
	for _, s := range plan {
		r.samples = append(r.samples, &sampleState{sample: s})
	}
	for _, s := range r.samples {
		if s.after != "" && r.find(s.after) == nil {
			return nil, fmt.Errorf("sample %s waits for unknown sample %q", s.label, s.after)
		}
	}
	return r, nil
}

// run submits and watches until every operation is settled (nil) or ctx
// ends (its error).
func (r *runner) run(ctx context.Context) error {
	fmt.Fprintf(r.out, "submitting %d sample operations in subscription %s\n", len(r.samples), r.ids.subscription)
	tick := time.NewTicker(r.every)
	defer tick.Stop()
	for {
		if err := r.tracker.poll(ctx); err != nil && ctx.Err() == nil {
			r.logger.WarnContext(ctx, "progress: reading the change feed failed", "error", err)
		}
		r.submitReady(ctx)
		if r.finished() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// submitReady sends every sample whose prerequisite has succeeded, and
// gives up on those whose prerequisite ended otherwise.
func (r *runner) submitReady(ctx context.Context) {
	for _, s := range r.samples {
		if s.opName != "" || s.failed != "" {
			continue
		}
		if s.after != "" {
			pre := r.find(s.after)
			switch status := r.statusOf(pre); {
			case pre.failed != "":
				s.failed = "prerequisite " + s.after + " was not accepted"
				continue
			case status == arm.ProvisioningStateSucceeded:
			case status.IsTerminal():
				s.failed = fmt.Sprintf("prerequisite %s ended %s", s.after, status)
				continue
			default:
				continue
			}
		}
		r.submit(ctx, s)
	}
}

func (r *runner) submit(ctx context.Context, s *sampleState) {
	if s.prepare != nil && s.conflicts == 0 {
		if err := s.prepare(r.sim); err != nil {
			s.failed = "preparing the simulator: " + err.Error()
			return
		}
	}
	uri := r.sink.URI(s.label)
	opts := frontend.Options{
		Location: sampleLocation, TenantID: devTenantID, ClientID: devClientID, NotificationURI: uri,
		ClientRequestID: uuid.NewString(), CorrelationRequestID: uuid.NewString(),
	}
	acc, err := s.submit(ctx, r.fe, r.ids, opts)
	switch {
	case frontend.IsConflict(err) && s.conflicts < maxConflicts:
		s.conflicts++
		r.logger.DebugContext(ctx, "sample conflicts with an operation in flight; retrying", "sample", s.label, "error", err)
		return
	case err != nil:
		s.failed = err.Error()
		fmt.Fprintf(r.out, "%s  %-24s not accepted: %v\n", time.Now().Format("15:04:05.000"), s.label, err)
		return
	}
	s.opName, s.statusPath = acc.Operation.Name(), acc.StatusPath()
	r.tracker.expect(s.opName, s.label, uri, s.want)
}

func (r *runner) find(label string) *sampleState {
	for _, s := range r.samples {
		if s.label == label {
			return s
		}
	}
	return nil
}

func (r *runner) statusOf(s *sampleState) arm.ProvisioningState {
	if s.opName == "" {
		return ""
	}
	return r.tracker.status(s.opName)
}

// finished: nothing left to submit and every operation settled.
func (r *runner) finished() bool {
	for _, s := range r.samples {
		if s.opName == "" && s.failed == "" {
			return false
		}
	}
	return r.tracker.settled(r.sink.Notified)
}

// statusPaths maps each accepted sample to its status path.
func (r *runner) statusPaths() map[string]string {
	out := map[string]string{}
	for _, s := range r.samples {
		if s.statusPath != "" {
			out[s.label] = s.statusPath
		}
	}
	return out
}

// report prints the final table and returns what went other than planned.
func (r *runner) report() error {
	fmt.Fprintln(r.out)
	r.tracker.table(r.out, r.sink.Notified)
	problems := r.tracker.problems(r.sink.Notified)
	for _, s := range r.samples {
		if s.failed != "" {
			problems = append(problems, s.label+": "+s.failed)
		} else if s.opName == "" {
			problems = append(problems, s.label+": never submitted")
		}
	}
	if len(problems) > 0 {
		return errors.New("unexpected outcomes:\n  " + strings.Join(problems, "\n  "))
	}
	fmt.Fprintln(r.out, "\nall sample operations ended as expected")
	return nil
}

// followEvery is how often a serving dev reads the change feed for
// operations submitted from elsewhere: well inside the feed poll delay.
const followEvery = 200 * time.Millisecond

// follow prints the progress of every operation written to the store
// until ctx ends; an idle store prints nothing.
func follow(ctx context.Context, tr *tracker, logger *slog.Logger) {
	tick := time.NewTicker(followEvery)
	defer tick.Stop()
	for {
		if err := tr.poll(ctx); err != nil && ctx.Err() == nil {
			logger.WarnContext(ctx, "progress: reading the change feed failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
