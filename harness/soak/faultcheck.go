package soak

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// Bounds the checks hold the handler to. A tick may overrun its budget by
// the writes already under way when it ran out (each bounded on its own)
// and a busy machine's scheduling; an operation past its deadline is
// failed by the next tick that reaches it, so within two budgets.
const (
	tickBound     = pollBudget + 5*time.Second
	deadlineLate  = 2 * pollBudget
	deadlineMatch = "before the deadline"
)

// deadlineProblem checks a request that had a deadline: it must have
// failed for it, no earlier than the deadline and not long after.
func deadlineProblem(s *submitted, op *document.OperationDocument) string {
	if s.deadlineAt.IsZero() {
		return ""
	}
	p := op.Properties
	switch {
	case p.Status != arm.ProvisioningStateFailed:
		return fmt.Sprintf("%s: ended %s, want Failed at its deadline %s", s.label, p.Status, stamp(s.deadlineAt))
	case p.Error == nil || !strings.Contains(p.Error.Message, deadlineMatch):
		return fmt.Sprintf("%s: failed with %s, want the deadline error", s.label, describeError(p.Error))
	case p.LastTransitionTime.Before(s.deadlineAt):
		return fmt.Sprintf("%s: failed at %s, before its deadline %s", s.label, stamp(p.LastTransitionTime), stamp(s.deadlineAt))
	case p.LastTransitionTime.After(s.deadlineAt.Add(deadlineLate)):
		return fmt.Sprintf("%s: failed at %s, %s after its deadline %s (allowed %s)", s.label, stamp(p.LastTransitionTime),
			p.LastTransitionTime.Sub(s.deadlineAt).Round(time.Millisecond), stamp(s.deadlineAt), deadlineLate)
	}
	return ""
}

func stamp(t time.Time) string { return t.UTC().Format("15:04:05.000") }

// tickProblems lists the ticks that ran past bound or never answered,
// leaving out those cut short by a kill or the end of the run.
func tickProblems(ticks []tick, bound time.Duration) []string {
	var out []string
	for _, t := range ticks {
		switch {
		case t.cut:
		case t.status == 0:
			out = append(out, fmt.Sprintf("instance %d: the tick started %s got no answer after %s: %s", t.instance, stamp(t.started),
				t.took.Round(time.Millisecond), t.err))
		case t.took > bound:
			out = append(out, fmt.Sprintf("instance %d: the tick started %s took %s, past the budget %s (allowed %s)", t.instance,
				stamp(t.started), t.took.Round(time.Millisecond), pollBudget, bound))
		}
	}
	return out
}

// tickStats are the tick durations of a run for the summary.
func tickStats(ticks []tick) (n int, longest time.Duration, over int) {
	for _, t := range ticks {
		if t.cut || t.status == 0 {
			continue
		}
		n++
		longest = max(longest, t.took)
		if t.took > pollBudget {
			over++
		}
	}
	return n, longest, over
}

// faultProblems makes sure the faults added for fault isolation happened:
// hung CS calls, the sick subset both ways, every instance at work and the
// store faults on every kind of request.
func (e evidence) faultProblems() []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, "chaos: "+fmt.Sprintf(format, args...)) }
	if e.wantCSHangs && e.cs.statuses[0] == 0 {
		add("no clusters service request hung")
	}
	if e.wantLies && e.lyingLists == 0 {
		add("no lying list was served (%d id searches)", e.idSearches)
	}
	if e.sick.size() >= len(sickShapes) && (e.sickHung == 0 || e.sickGarbled == 0) {
		add("the sick subset of %d objects saw %d hung and %d garbled requests, want both", e.sick.size(), e.sickHung, e.sickGarbled)
	}
	ticked := map[int]bool{}
	for _, t := range e.ticks {
		if t.status/100 == 2 {
			ticked[t.instance] = true
		}
	}
	for i := range e.instances {
		if !ticked[i] || e.routed[i] == 0 {
			add("instance %d answered %d ticks and was sent %d other invocations; want both", i, countTicks(e.ticks, i), e.routed[i])
		}
	}
	if !e.wantCosmosFaults {
		return out
	}
	for _, kind := range cosmosKinds {
		if e.cosmosFaults[kind][faultThrottle] == 0 {
			add("no Cosmos %s was throttled", kind)
		}
	}
	for _, fault := range []string{faultUnavailable, faultTimeout, faultSlow} {
		if n := cosmosFaultCount(e.cosmosFaults, fault); n == 0 {
			add("Cosmos never answered %s", fault)
		}
	}
	return out
}

func countTicks(ticks []tick, instance int) int {
	n := 0
	for _, t := range ticks {
		if t.instance == instance && t.status/100 == 2 {
			n++
		}
	}
	return n
}

func cosmosFaultCount(counts map[string]map[string]int, fault string) int {
	n := 0
	for _, m := range counts {
		n += m[fault]
	}
	return n
}

// cosmosFaultLine renders the store faults for the summary.
func cosmosFaultLine(counts map[string]map[string]int) string {
	parts := make([]string, 0, len(cosmosKinds))
	for _, kind := range cosmosKinds {
		m := counts[kind]
		parts = append(parts, fmt.Sprintf("%s %d/%d/%d/%d", kind, m[faultThrottle], m[faultUnavailable], m[faultTimeout], m[faultSlow]))
	}
	return strings.Join(parts, ", ")
}

// unanswered is the CS requests that got no answer: hung, or given up by
// the client during a latency spike.
func (c csCounts) unanswered() int { return c.statuses[0] }

// sickStats are the sick subset's results for the summary: requests, how
// many failed at their deadline, and the latest of them past it.
func sickStats(e evidence) (n, onTime int, latest time.Duration) {
	for _, s := range e.subs {
		if s.deadlineAt.IsZero() {
			continue
		}
		n++
		op := e.ops[s.op]
		if op == nil || deadlineProblem(s, op) != "" {
			continue
		}
		onTime++
		latest = max(latest, op.Properties.LastTransitionTime.Sub(s.deadlineAt))
	}
	return n, onTime, latest
}

// sickCreated counts the sick objects CS created nonetheless (a garbled
// create is served, then its answer thrown away; a stuck one answered).
func (e evidence) sickCreated() int {
	n := 0
	for name := range e.cs.named {
		if _, ok := e.sick.clusters[name]; ok {
			n++
		}
	}
	for o, m := range e.cs.creates {
		pool, ok := strings.CutPrefix(o, "nodepool/")
		if _, sick := e.sick.pools[pool[strings.LastIndex(pool, "/")+1:]]; ok && sick && m[http.StatusCreated] > 0 {
			n++
		}
	}
	return n
}
