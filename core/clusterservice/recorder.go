package clusterservice

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/clock"
)

// Recorder is what the Clusters Service client's transport saw, request
// by request (each page and each retry is one): how many were made for an
// invocation, how many failed and how long they took, the numbers an SRE
// reads in that invocation's telemetry record; and when CS last answered
// as a working service, which the lifecycle weighs before it blames a
// failure on one object rather than on CS. The ocm client records into
// it; whoever built the client hands the same Recorder to its readers. Its
// methods are safe for concurrent use, and a nil Recorder records nothing.
type Recorder struct {
	clock clock.Clock
	// scope names the invocation a request was made for, from the
	// request's context; "" counts it in no invocation's numbers.
	scope func(context.Context) string

	mu     sync.Mutex
	worked time.Time // zero: never
	open   map[string]*tally
}

// NewRecorder records on clock c (nil: the wall clock), counting requests
// per the invocation scope names (nil: none is counted, health is still
// kept).
func NewRecorder(c clock.Clock, scope func(context.Context) string) *Recorder {
	return &Recorder{clock: clock.OrReal(c), scope: scope, open: map[string]*tally{}}
}

// tally is what one scope's requests came to; refs counts the Count calls
// still open on it.
type tally struct {
	refs         int
	count        int
	errors       int
	unrecognized int
	samples      []time.Duration
}

// maxSamples bounds the latencies kept for percentiles; a tick seldom makes
// more requests, and beyond it the percentiles describe the first ones.
const maxSamples = 8192

// Record notes one request made with ctx that took elapsed and ended as
// class says. A 404 is an answer (delete completion relies on it), not an
// error.
func (r *Recorder) Record(ctx context.Context, elapsed time.Duration, class Class) {
	if r == nil {
		return
	}
	now := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if class.Working() && now.After(r.worked) {
		r.worked = now
	}
	t := r.open[r.scopeOf(ctx)]
	if t == nil {
		return
	}
	t.count++
	if class != Answered && class != Absent {
		t.errors++
	}
	if class == Unrecognized {
		t.unrecognized++
	}
	if len(t.samples) < maxSamples {
		t.samples = append(t.samples, elapsed)
	}
}

// Unrecognized notes that an answer Record counted as CS's was found, once
// read, to be no evidence: a list that breaks its contract, an item about
// another object. It counts in the invocation's errors and unrecognized
// answers, not as another request.
func (r *Recorder) Unrecognized(ctx context.Context) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.open[r.scopeOf(ctx)]; t != nil {
		t.errors++
		t.unrecognized++
	}
}

func (r *Recorder) scopeOf(ctx context.Context) string {
	if r.scope == nil {
		return ""
	}
	return r.scope(ctx)
}

// Count starts counting the requests made for ctx's invocation; the
// returned func stops and says what they came to. Work that overlaps
// under one invocation shares its numbers; work with no invocation counts
// nothing.
func (r *Recorder) Count(ctx context.Context) func() CallSummary {
	if r == nil {
		return func() CallSummary { return CallSummary{} }
	}
	key := r.scopeOf(ctx)
	if key == "" {
		return func() CallSummary { return CallSummary{} }
	}
	r.mu.Lock()
	t := r.open[key]
	if t == nil {
		t = &tally{}
		r.open[key] = t
	}
	t.refs++
	r.mu.Unlock()
	var once sync.Once
	var s CallSummary
	return func() CallSummary {
		once.Do(func() { s = r.close(key, t) })
		return s
	}
}

func (r *Recorder) close(key string, t *tally) CallSummary {
	r.mu.Lock()
	s := CallSummary{Count: t.count, Errors: t.errors, Unrecognized: t.unrecognized}
	sorted := slices.Clone(t.samples)
	if t.refs--; t.refs == 0 {
		delete(r.open, key)
	}
	r.mu.Unlock()
	slices.Sort(sorted)
	s.P50, s.P99 = percentile(sorted, 50), percentile(sorted, 99)
	return s
}

// WorkedSince reports whether CS answered as a working service (see
// Class.Working) at or after t.
func (r *Recorder) WorkedSince(t time.Time) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.worked.IsZero() && !r.worked.Before(t)
}

// CallSummary is what one invocation's requests to CS came to.
type CallSummary struct {
	Count        int           // requests made
	Errors       int           // requests that failed, 404s aside
	Unrecognized int           // error answers that were not CS's own (no evidence)
	P50          time.Duration // median latency
	P99          time.Duration // 99th percentile latency
}

// Attrs is the summary as the cs_* keys of a function's telemetry record
// (docs/functions.md): one spelling for every function that reports calls.
func (s CallSummary) Attrs() []slog.Attr {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return []slog.Attr{
		slog.Int("cs_calls", s.Count),
		slog.Int("cs_errors", s.Errors),
		slog.Int("cs_unrecognized", s.Unrecognized),
		slog.Float64("cs_p50_ms", ms(s.P50)),
		slog.Float64("cs_p99_ms", ms(s.P99)),
	}
}

// percentile is the nearest-rank percentile of sorted samples.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // the ceiling of p% of n
	return sorted[max(rank, 1)-1]
}
