package operator

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/store"
)

// What `hcpopsctl ops` adds to the documents: the stuck threshold an active
// operation passed and its deadline (the engine's own rules, on the
// settings of this environment), and from the local log why it retries
// and which ARM notifications failed or were refused.

// notificationLine is an operation's last ARM notification attempt, when
// it was not delivered.
type notificationLine struct {
	Time      time.Time `json:"time"`
	Outcome   string    `json:"outcome"` // failed (retried) or refused (never sent)
	Host      string    `json:"host"`
	Attempt   int       `json:"attempt"`
	Error     string    `json:"error,omitempty"`
	NextRetry string    `json:"nextRetry,omitempty"`
}

// refusedShownFor is how long a refused notification of a finished
// operation stays in the default listing: ARM never hears of it, and
// nothing retries it, so it is shown for a day rather than not at all.
const refusedShownFor = 24 * time.Hour

// outlooks fills each active row's stuck threshold and deadline. The
// rows' resources are read with ReadMany, MaxReadMany at a time, so a
// listing costs a read per thousand rows, not one per row; the rules are
// built once for all of them.
func outlooks(ctx context.Context, s store.Store, cfg lifecycle.Config, rows []opRow, now time.Time) error {
	var refs []store.DocRef
	seen := map[store.DocRef]bool{}
	for _, r := range rows {
		if ref, ok := resourceRef(r); ok && ref.ID != "" && !seen[ref] {
			seen[ref] = true
			refs = append(refs, ref)
		}
	}
	found := make(map[store.DocRef]store.Item, len(refs))
	for chunk := range slices.Chunk(refs, store.MaxReadMany) {
		items, err := s.ReadMany(ctx, chunk)
		if err != nil {
			return fmt.Errorf("reading the resources of %d active operations: %w", len(chunk), err)
		}
		maps.Copy(found, items)
	}
	rules := lifecycle.NewOutlooker(cfg)
	for i := range rows {
		r := &rows[i]
		ref, ok := resourceRef(*r)
		if !ok {
			continue
		}
		var res *document.Resource
		if item, ok := found[ref]; ok {
			res, _ = document.ParseResource(item.Body) // an unreadable one: the tick skips it, doc get shows it
		}
		o := rules.Outlook(r.op, res, now)
		r.StuckPastSeconds = o.Stuck.Seconds()
		if o.Stuck > 0 {
			since := r.StartTime.Add(o.Stuck).UTC()
			r.StuckSince = &since
		}
		if !o.Deadline.IsZero() {
			d := o.Deadline.UTC()
			r.Deadline = &d
		}
	}
	return nil
}

// resourceRef is the address of an active row's resource; false for a
// terminal row, which has no outlook.
func resourceRef(r opRow) (store.DocRef, bool) {
	if arm.ProvisioningState(r.Status).IsTerminal() || r.op == nil {
		return store.DocRef{}, false
	}
	ref := store.DocRef{PartitionKey: r.op.PartitionKey, ID: document.CosmosID(r.ResourceID)}
	// An address no store accepts would have ReadMany refuse the whole
	// batch; its row is shown as one whose resource is gone.
	if store.CheckAddress(ref.PartitionKey, ref.ID) != nil {
		ref.ID = ""
	}
	return ref, true
}

// fromLog fills each row's last problem and failed notification from the
// local log; with withRefused, operations whose notification was refused
// in the last day are added (finished, so not in an active listing).
func fromLog(ctx context.Context, s store.Store, records func(func(Record), ...string) error, rows []opRow, withRefused bool, now time.Time) []opRow {
	byID := map[string]*opRow{}
	for i := range rows {
		byID[rows[i].OperationID] = &rows[i]
	}
	type refusal struct {
		line       notificationLine
		resourceID string
	}
	refused := map[string]refusal{}
	// No log (Cosmos, or a serve that logs elsewhere) leaves them empty.
	// A dispatch or transition after a problem means it was overcome.
	_ = records(func(r Record) {
		row := byID[r.OperationID]
		if r.Msg == lifecycle.MsgNotification {
			n := notificationOf(r)
			if row != nil {
				row.Notification = n
			}
			delete(refused, r.OperationID)
			if n != nil && n.Outcome == lifecycle.NotificationRefused && row == nil {
				refused[r.OperationID] = refusal{*n, r.Str("resource_id")}
			}
			return
		}
		switch active := row != nil && (!arm.ProvisioningState(row.Status).IsTerminal() || row.Notifying); {
		case !active:
		case r.Msg == lifecycle.MsgDispatched || r.Msg == lifecycle.MsgTransition:
			row.LastProblem = nil
		case r.Msg == lifecycle.MsgStuck:
			// Not why it retries: the row says it is stuck, in words,
			// by the process's own thresholds.
		case r.Problem():
			row.LastProblem = &problemLine{Time: r.Time, Message: r.Msg, Error: r.Str("error")}
		}
	}, `"operation_id"`)
	if !withRefused {
		return rows
	}
	for name, f := range refused {
		if now.Sub(f.line.Time) > refusedShownFor {
			continue
		}
		sub := document.SubscriptionOf(f.resourceID)
		op, err := ReadOperation(ctx, s, OperationRef{Subscription: sub, Name: name})
		if err != nil {
			continue // expired, or the log names another store's
		}
		row := newOpRow(op, now)
		row.Notification = &f.line
		rows = append(rows, row)
	}
	return rows
}

// notificationOf is a notification record's outcome; nil when delivered.
func notificationOf(r Record) *notificationLine {
	outcome := r.Str("outcome")
	if outcome == lifecycle.NotificationDelivered {
		return nil
	}
	return &notificationLine{Time: r.Time, Outcome: outcome, Host: r.Str("host"), Attempt: int(r.Num("attempt")),
		Error: r.Str("error"), NextRetry: r.Str("next_retry")}
}

// newOpRow is op's row at now.
func newOpRow(op *document.OperationDocument, now time.Time) opRow {
	p := op.Properties
	return opRow{
		OperationID: op.Name(), Subscription: op.PartitionKey, Request: string(p.Request), ResourceID: p.ExternalID,
		Status: string(p.Status), StartTime: p.StartTime, LastTransitionTime: p.LastTransitionTime,
		AgeSeconds: now.Sub(p.StartTime).Seconds(), Error: p.Error, Notifying: p.Status.IsTerminal() && p.NotificationURI != "",
		StatusPath: p.OperationID, op: op,
	}
}

// statusCell is the STATUS column: the status, and what is wrong with it.
func statusCell(r opRow) string {
	if r.Unreadable != nil {
		return "UNREADABLE " + cmp.Or(r.Status, "?")
	}
	s := r.Status
	switch {
	case r.Notifying:
		s += " (notifying)"
	case r.Notification != nil && r.Notification.Outcome == lifecycle.NotificationRefused:
		s += " (ARM not told)"
	}
	if r.StuckPastSeconds > 0 {
		s += " STUCK>" + Age(time.Duration(r.StuckPastSeconds*float64(time.Second)))
	}
	return s
}

// deadlineCell is the DEADLINE column: "fails in 37m", or "-". An active
// operation past its deadline is one CS says it is working on (held, not
// failed: the tick fails it at the poll CS stops saying so) or one whose
// next attempt is not due yet.
func deadlineCell(r opRow, now time.Time) string {
	if r.Deadline == nil {
		return "-"
	}
	left := r.Deadline.Sub(now)
	if left <= 0 {
		return "PAST (due " + Age(-left) + " ago): held while CS says it is under way"
	}
	return "fails in " + Age(left)
}

// stuckText is a stuck operation in words: since when, in which status,
// for how long, past which threshold.
func stuckText(r opRow) string {
	return fmt.Sprintf("stuck since %s: %s for %s, past its %s threshold", r.StuckSince.Local().Format("15:04:05"), r.Status,
		Age(time.Duration(r.AgeSeconds*float64(time.Second))), Age(time.Duration(r.StuckPastSeconds*float64(time.Second))))
}

// notificationText says what became of an undelivered notification.
func notificationText(n *notificationLine) string {
	s := fmt.Sprintf("notification %s: attempt %d to %s", n.Outcome, n.Attempt, n.Host)
	if at, err := time.Parse(time.RFC3339, n.NextRetry); err == nil {
		s += " (next attempt " + at.Local().Format("15:04:05") + ")" // before the error, which may be clipped
	}
	if n.Error != "" {
		s += ": " + n.Error
	}
	return s
}
