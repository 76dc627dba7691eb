package devhost

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/hcpops/hcpops/core/admission"
	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/changefeed"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Labels of operations no sample submitted: the frontend's own (a cluster
// delete's child deletes) and those written by anyone else (hcpopsctl submit
// in another terminal).
const (
	implicitLabel = "(implicit)"
	outsideLabel  = "(submitted)"
	// earlierLabel: active when this run started (a restart, or written
	// while no dev ran).
	earlierLabel = "(earlier)"
	// documentLabel: a line about a change-feed document that is no
	// readable operation.
	documentLabel = "(document)"
)

// opView is what the local host knows of one operation.
type opView struct {
	name     string
	label    string
	request  document.Request
	resource string
	status   arm.ProvisioningState // "" until seen in the store
	errText  string
	start    time.Time
	end      time.Time
	// notifyURI is what the sample handed the frontend; "" for implicit ones.
	notifyURI string
	want      arm.ProvisioningState
	// sample: in the samples' subscription, so the sample run waits for it.
	sample bool
	// held are lines about it logged before the feed showed it, printed
	// after its first line (or after holdFor, if the feed never does).
	held      []string
	heldSince time.Time
}

// holdFor bounds how long a line about an operation waits for the
// operation's first line: one the feed never shows (a document that is
// no readable operation) still has its lines printed.
const holdFor = 2 * time.Second

// tracker follows every operation written after it started through the
// store's change feed, with a position of its own, and prints each state
// change; the first line of an operation is followed by the curl that
// reads its ARM status through the host's front door.
//
// The log tells the rest: a line for each warning or error about an
// operation (retrying, refused, skipped, a notification that failed), so
// nothing stuck is invisible here while dev.log fills up.
type tracker struct {
	store    store.Store
	feed     *changefeed.Reader
	out      io.Writer
	clock    clock.Clock
	frontURL string
	// samplePK is the samples' partition; "" when there are none.
	samplePK string

	// mu serialises the feed reader and the log's events: both print.
	mu       sync.Mutex
	cont     string
	ops      map[string]*opView
	order    []string
	repeated map[string]*repeat
	// earlier holds what start found active, until showEarlier.
	earlier [][]byte
}

// repeat is the last line printed for one kind of event of one operation,
// so a warning logged every tick prints once a minute, not every tick.
type repeat struct {
	text    string
	printed time.Time
	more    int
}

// repeatEvery is how often an unchanged warning is printed again.
const repeatEvery = time.Minute

func newTracker(s store.Store, out io.Writer, c clock.Clock, frontURL string) *tracker {
	return &tracker{store: s, feed: changefeed.NewReader(s, changefeed.WithClock(c)), out: out, clock: c,
		frontURL: frontURL, ops: map[string]*opView{}, repeated: map[string]*repeat{}}
}

// start moves the tracker's feed position past everything written so far
// and shows every operation still active (or waiting to notify ARM): a
// restarted run, or one started on a store the CLI wrote to meanwhile,
// shows the work it picks up.
func (t *tracker) start(ctx context.Context) error {
	// From now, not by reading the whole feed: what was written before is
	// either finished or in the active list below. The store is read
	// without the lock, as in poll.
	cont, err := t.feed.Begin(ctx, changefeed.FromNow())
	if err != nil {
		return err
	}
	var earlier [][]byte
	err = t.store.ActiveOperations(ctx, store.ActiveOperationsQuery{WithPendingNotification: true}, func(items []store.Item) error {
		for _, it := range items {
			earlier = append(earlier, it.Body)
		}
		return nil
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cont = cont
	t.earlier = append(t.earlier, earlier...)
	if err != nil {
		return fmt.Errorf("listing active operations: %w", err)
	}
	return nil
}

// showEarlier prints the operations start found active.
func (t *tracker) showEarlier() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.earlier) > 0 {
		fmt.Fprintf(t.out, "\nfollowing %d operation(s) active when this run started:\n", len(t.earlier))
	}
	for _, body := range t.earlier {
		t.observe(body, earlierLabel)
	}
	t.earlier = nil
}

// expect registers a sample's operation before the feed shows it.
func (t *tracker) expect(name, label, notifyURI string, want arm.ProvisioningState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := t.view(name)
	v.label, v.notifyURI, v.want, v.sample = label, notifyURI, want, true
}

// status is what the tracker last saw of an operation.
func (t *tracker) status(name string) arm.ProvisioningState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.view(name).status
}

// view is name's view, made on first sight; t.mu held.
func (t *tracker) view(name string) *opView {
	v, ok := t.ops[name]
	if !ok {
		v = &opView{name: name, label: implicitLabel, want: arm.ProvisioningStateSucceeded}
		t.ops[name] = v
		t.order = append(t.order, name)
	}
	return v
}

// poll reads the feed to its end and prints a line per status change.
// The feed is read without the lock: a store that meets damage while
// reading logs an Error, and that line comes back through onEvent, which
// takes the lock. Only follow polls, so cont is its alone meanwhile.
func (t *tracker) poll(ctx context.Context) error {
	t.mu.Lock()
	from := t.cont
	t.mu.Unlock()
	var bodies [][]byte
	cont, err := t.feed.Drain(ctx, from, func(items []store.Item) error {
		for _, it := range items {
			bodies = append(bodies, it.Body)
		}
		return nil
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, b := range bodies {
		t.observe(b, outsideLabel)
	}
	now := t.clock.Now()
	for _, name := range t.order {
		if v := t.ops[name]; len(v.held) > 0 && now.Sub(v.heldSince) >= holdFor {
			t.flushHeld(v)
		}
	}
	t.cont = cont
	return err
}

// observe prints an operation's first sight and each status change; an
// operation first seen here gets label (its first line's origin).
func (t *tracker) observe(raw []byte, label string) {
	if kind, err := document.Sniff(raw); err != nil || kind != document.KindOperation {
		return
	}
	op, err := document.ParseOperation(raw)
	if err != nil {
		return // the dispatcher logs it, and that line is shown
	}
	p := op.Properties
	_, known := t.ops[op.Name()]
	v := t.view(op.Name())
	if !known && (t.samplePK == "" || op.PartitionKey != t.samplePK) {
		v.label = label
	}
	if !known && op.PartitionKey == t.samplePK {
		v.sample = true
	}
	v.request, v.resource, v.start = p.Request, shortResource(p.ExternalID), p.StartTime
	v.errText = ""
	if p.Error != nil {
		v.errText = p.Error.Code + ": " + p.Error.Message
	}
	if p.Status == v.status {
		return
	}
	old := string(v.status)
	if old == "" {
		old = "-"
	}
	v.status = p.Status
	if p.Status.IsTerminal() {
		v.end = p.LastTransitionTime
	}
	line := fmt.Sprintf("%s -> %s", old, v.status)
	if v.errText != "" {
		line += "  " + v.errText
	}
	t.line(v, line)
	if old == "-" && p.OperationID != "" && t.frontURL != "" {
		fmt.Fprintf(t.out, "%*s%s\n", WrapIndent, "", Curl(t.frontURL, p.OperationID, p.TenantID, p.ClientID))
	}
	t.flushHeld(v)
}

// flushHeld prints the lines held for v; t.mu held.
func (t *tracker) flushHeld(v *opView) {
	for _, text := range v.held {
		t.line(v, text)
	}
	v.held, v.heldSince = nil, time.Time{}
}

// line prints one line about v: time, label, operation, request and
// resource, then text, wrapped to the screen's width (screen.go).
func (t *tracker) line(v *opView, text string) {
	head := t.clock.Now().Format("15:04:05.000") + " " + fmt.Sprintf("%-11s", v.label) + " " + v.name
	fmt.Fprint(t.out, layout(head, join(string(v.request), " ", v.resource), text))
}

// onEvent prints a warning or error the process logged, under the
// operation it is about; an unchanged one is repeated once a minute at
// most, with how often it recurred meanwhile.
func (t *tracker) onEvent(ev event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var v *opView
	if id := ev.get("operation_id"); id != "" {
		v = t.view(id)
		if v.status == "" && v.label == implicitLabel && !v.sample {
			v.label = outsideLabel
		}
		if v.request == "" {
			v.request = document.Request(ev.get("request"))
		}
		if v.resource == "" && ev.get("resource_id") != "" {
			v.resource = shortResource(ev.get("resource_id"))
		}
	} else if id := ev.get("document_id"); id != "" {
		v = &opView{name: id, label: documentLabel}
	} else if ev.get("source") == "ocm-sdk" {
		v = &opView{name: "-", label: "(cs client)"} // a list call's retry: many operations' at once
	} else if ev.msg == "dispatch.batch" {
		return // its operations' own lines say why
	} else if fn := ev.get("function"); fn != "" && strings.HasPrefix(ev.msg, "invocation failed") {
		v = &opView{name: "-", label: "(host) " + fn}
	} else if ev.level < slog.LevelError {
		return // a warning about no operation: dev.log has it
	} else {
		v = &opView{name: "-", label: "(process)"}
	}
	why, next := describe(ev)
	why = verdict(ev) + ": " + why
	key, now := v.name+"|"+ev.msg, t.clock.Now()
	text := why + next
	switch r := t.repeated[key]; {
	case r != nil && r.text == why && now.Sub(r.printed) < repeatEvery:
		r.more++
		return
	case r != nil && r.text == why:
		if r.more > 0 {
			text += fmt.Sprintf(" (%d more since %s)", r.more, r.printed.Format("15:04:05"))
		}
		r.printed, r.more = now, 0
	default:
		t.repeated[key] = &repeat{text: why, printed: now}
	}
	if t.store != nil && ev.get("operation_id") != "" && v.status == "" {
		// Not shown yet (the log is quicker than the change feed): its
		// first line comes first.
		if len(v.held) == 0 {
			v.heldSince = now
		}
		v.held = append(v.held, text)
		return
	}
	t.line(v, text)
}

// Curl is a ready-to-paste ARM status poll of an operation through the
// front door at frontURL, with the caller identity ARM would forward (the
// status endpoint shows an operation only to the caller who started it)
// and the api-version ARM always sends (the route requires one).
func Curl(frontURL, statusPath, tenantID, clientID string) string {
	if !strings.Contains(statusPath, "?") {
		statusPath += "?api-version=" + admission.DefaultAPIVersions[0]
	}
	var b strings.Builder
	b.WriteString("curl -s")
	if tenantID != "" {
		fmt.Fprintf(&b, " -H 'X-Ms-Home-Tenant-Id: %s'", tenantID)
	}
	if clientID != "" {
		fmt.Fprintf(&b, " -H 'X-Ms-Client-Object-Id: %s'", clientID)
	}
	fmt.Fprintf(&b, " '%s%s'", strings.TrimRight(frontURL, "/"), statusPath)
	return b.String()
}

// settled reports whether every sample operation is terminal and has
// notified ARM where it was asked to.
func (t *tracker) settled(notified func(uri string) bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, v := range t.ops {
		if !v.sample {
			continue
		}
		if !v.status.IsTerminal() || (v.notifyURI != "" && !notified(v.notifyURI)) {
			return false
		}
	}
	return true
}

// problems lists operations that ended other than expected.
func (t *tracker) problems(notified func(uri string) bool) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, name := range t.order {
		v := t.ops[name]
		switch {
		case !v.sample:
		case v.status != v.want:
			out = append(out, fmt.Sprintf("%s %s: %s, want %s", v.label, name, orDash(string(v.status)), v.want))
		case v.notifyURI != "" && !notified(v.notifyURI):
			out = append(out, fmt.Sprintf("%s %s: ARM was not notified", v.label, name))
		}
	}
	return out
}

// table prints the final summary within the screen's width: operation
// IDs shortened (the lines above name them whole), errors below it.
func (t *tracker) table(w io.Writer, notified func(uri string) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OPERATION\tID\tREQUEST\tSTATUS\tTOOK\tNOTIFIED")
	var errs []string
	for _, name := range t.order {
		v := t.ops[name]
		dur := "-"
		if !v.end.IsZero() && !v.start.IsZero() {
			dur = v.end.Sub(v.start).Round(100 * time.Millisecond).String()
		}
		note := "-"
		if v.notifyURI != "" {
			note = "n"
			if notified(v.notifyURI) {
				note = "y"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.label, shortID(name), orDash(join(string(v.request), " ", v.resource)),
			orDash(string(v.status)), dur, note)
		if v.errText != "" {
			errs = append(errs, layout(v.label+" "+shortID(name), "", v.errText))
		}
	}
	tw.Flush()
	if len(errs) > 0 {
		fmt.Fprintln(w, "\nerrors:")
		fmt.Fprint(w, strings.Join(errs, ""))
	}
}

// shortResource names a resource by kind and path below its cluster's
// resource group: "cluster c1", "nodepool c1/np1". An ID it cannot read
// is shown as it is.
func shortResource(externalID string) string {
	id, err := document.ParseResourceID("resource_id", externalID)
	if err != nil {
		return externalID
	}
	switch t := id.ResourceType.String(); {
	case strings.EqualFold(t, arm.ClusterResourceType):
		return "cluster " + id.Name
	case strings.EqualFold(t, arm.NodePoolResourceType):
		return "nodepool " + id.Parent.Name + "/" + id.Name
	case strings.EqualFold(t, arm.ExternalAuthResourceType):
		return "externalauth " + id.Parent.Name + "/" + id.Name
	}
	return externalID
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shortID is an operation ID's first 8 characters, as git shortens a hash.
func shortID(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}
