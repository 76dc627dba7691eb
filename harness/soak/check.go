package soak

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/csfaults"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
)

// evidence is everything a run gathered, for the checks and the summary.
type evidence struct {
	subs     []*submitted
	ops      map[docKey]*document.OperationDocument // latest version seen of every operation
	uris     map[docKey]string                      // notificationUri of each operation whose create was seen
	versions map[docKey][]docVersion                // every version the change feed showed
	writes   map[docKey][]write                     // every acknowledged write
	finals   map[docKey]finalRead
	cs       csCounts
	// simPosts counts create POSTs by object kind in the simulator's own
	// ledger, to hold the soak's create ledger against.
	simPosts map[string]int
	// delivered returns the statuses the sink answered 200 for at uri.
	delivered                      func(uri string) []arm.ProvisioningState
	notifyAttempts, notifyFailures int
	feed                           triggerhost.FeedStats
	kills, starts                  int
	// status is what ARM's status poll answered through the front door,
	// by request label; an error text when the poll failed.
	status map[string]string

	instances int
	ticks     []tick      // every timer invocation of every instance
	routed    map[int]int // other invocations by instance
	// failedInvocations of the change feed (mostly), and their time.
	failedInvocations int
	failedTook        time.Duration
	// cosmosFaults counts the store faults injected, by request kind.
	cosmosFaults     map[string]map[string]int
	wantCosmosFaults bool
	// The sick subset, and the requests about it hung and garbled.
	sick                  sickSet
	sickHung, sickGarbled int
	wantCSHangs           bool
	// The id searches CS answered, and those answered with a lying list.
	idSearches, lyingLists int
	wantLies               bool
	// The CS fault windows, the requests each answered in CS's place, and
	// when CS itself first answered 404 for each object.
	windows        []csWindow
	windowAnswered map[csfaults.Fault]int64
	absent         map[string]time.Time
	// csWords is every state CS itself answered each object in, and when
	// first; csObjects what CS has at the end, by href (csword.go).
	csWords   map[string][]stateSeen
	csObjects map[string]string
}

// problems lists every invariant the run broke, each prefixed by its area.
func (e evidence) problems() []string {
	var out []string
	add := func(area, format string, args ...any) { out = append(out, area+": "+fmt.Sprintf(format, args...)) }

	mine := map[docKey]bool{}
	for _, s := range e.subs {
		if s.problem != "" {
			add("outcome", "%s (%s): %s", s.label, s.kind, s.problem)
			continue
		}
		mine[s.op] = true
		op := e.ops[s.op]
		if op == nil {
			add("outcome", "%s: operation %s never seen on the change feed", s.label, s.op)
			continue
		}
		got := op.Properties.Status
		if !slices.Contains(s.want, got) {
			add("outcome", "%s (%s): ended %s, want %s; error %s", s.label, s.kind, got, joinStates(s.want), describeError(op.Properties.Error))
		}
		if s.wantCode != "" && got == arm.ProvisioningStateFailed && (op.Properties.Error == nil || op.Properties.Error.Code != s.wantCode) {
			add("outcome", "%s: failed with %s, want code %s", s.label, describeError(op.Properties.Error), s.wantCode)
		}
		if uri, seen := e.uris[s.op]; seen && !strings.EqualFold(uri, s.uri) {
			add("notification", "%s: created with notificationUri %q, want %q", s.label, uri, s.uri)
		}
		if st, ok := e.status[s.label]; ok && st != string(got) {
			add("status", "%s: ARM's status poll answered %s, the document says %s", s.label, st, got)
		}
		if p := deadlineProblem(s, op); p != "" {
			add("deadline", "%s", p)
		}
	}
	uris := e.notificationURIs()
	for _, k := range sortedKeys(e.ops) {
		op := e.ops[k]
		p := op.Properties
		if !p.Status.IsTerminal() {
			add("outcome", "operation %s (%s %s) is still %s", op.Name(), p.Request, p.ExternalID, p.Status)
		}
		if !mine[k] && p.Status.IsTerminal() && (p.Request != document.RequestDelete || p.Status != arm.ProvisioningStateSucceeded) {
			add("outcome", "implicit operation %s (%s %s) ended %s, want a Delete that Succeeded", op.Name(), p.Request, p.ExternalID, p.Status)
		}
		uri := uris[k]
		if uri == "" {
			continue
		}
		if p.NotificationURI != "" {
			add("notification", "operation %s (%s %s) still holds notificationUri %s", op.Name(), p.Request, p.ExternalID, p.NotificationURI)
		}
		if got := e.delivered(uri); !slices.Contains(got, p.Status) {
			add("notification", "operation %s (%s %s) ended %s, but ARM received %v at %s", op.Name(), p.Request, p.ExternalID, p.Status, got, uri)
		}
	}
	for _, d := range e.cs.duplicateCreates() {
		add("clusters service", "not created exactly once: %s", d)
	}
	for _, kind := range []string{"cluster", "nodepool", "externalauth"} {
		if got, want := e.cs.posts(kind), e.simPosts[kind]; got != want {
			add("clusters service", "the simulator's ledger has %d %s create POSTs, the soak's %d", want, kind, got)
		}
	}
	for _, p := range checkVersions(e.writes, e.versions, e.finals) {
		add("versions", "%s", p)
	}
	for _, p := range tickProblems(e.ticks, tickBound) {
		add("ticks", "%s", p)
	}
	_, falseTerminals := e.falseTerminals()
	for _, p := range falseTerminals {
		add("false terminal", "%s", p)
	}
	for _, p := range e.orphans() {
		add("orphan", "%s", p)
	}
	out = append(out, e.chaosProblems()...)
	out = append(out, e.faultProblems()...)
	out = append(out, e.windowProblems()...)
	return out
}

// notificationURIs are the URIs operations were created with: what the
// soak sent for its own requests, what the feed showed for the others.
func (e evidence) notificationURIs() map[docKey]string {
	out := make(map[docKey]string, len(e.uris))
	for k, u := range e.uris {
		out[k] = u
	}
	for _, s := range e.subs {
		if s.problem == "" {
			out[s.op] = s.uri
		}
	}
	return out
}

// chaosProblems make sure the faults the soak claims did happen; a soak
// that injected nothing would prove nothing.
func (e evidence) chaosProblems() []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, "chaos: "+fmt.Sprintf(format, args...)) }
	if e.kills < 2 {
		add("the handler was killed %d times, want at least 2", e.kills)
	}
	if e.starts != e.kills+e.instances {
		add("the handler started %d times after %d kills of %d instances, want %d", e.starts, e.kills, e.instances, e.kills+e.instances)
	}
	if e.feed.Batches == 0 || e.feed.Duplicated != e.feed.Batches {
		add("%d of %d change-feed batches were delivered twice, want all", e.feed.Duplicated, e.feed.Batches)
	}
	if e.feed.Reordered == 0 {
		add("no change-feed batch was delivered out of order")
	}
	for _, status := range []int{http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable} {
		if e.cs.statuses[status] == 0 {
			add("clusters service never answered %d", status)
		}
	}
	if e.notifyFailures == 0 {
		add("no ARM notification failed")
	}
	return out
}

func joinStates(states []arm.ProvisioningState) string {
	parts := make([]string, len(states))
	for i, s := range states {
		parts[i] = string(s)
	}
	return strings.Join(parts, " or ")
}

func describeError(e *arm.CloudErrorBody) string {
	if e == nil {
		return "none"
	}
	return fmt.Sprintf("%s (%s)", e.Code, e.Message)
}
