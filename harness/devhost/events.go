package devhost

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/lifecycle"
)

// event is a warning or error the process logged, as the terminal shows
// it: the store's change feed tells an operation's transitions, only the
// log tells why one is retrying, refused or skipped.
type event struct {
	at    time.Time
	level slog.Level
	msg   string
	attrs map[string]string
}

func (e event) get(k string) string { return e.attrs[k] }

// events taps the process's log for the terminal. Lines logged before a
// tracker is attached are held (a restarted run's first batch may fail
// before the tracker has read the store) and handed over when it is.
type events struct {
	mu      sync.Mutex
	sink    func(event)
	pending []event
}

// maxPending bounds the lines held for a tracker not yet attached.
const maxPending = 200

func (e *events) attach(sink func(event)) {
	e.mu.Lock()
	pending := e.pending
	e.pending, e.sink = nil, sink
	e.mu.Unlock()
	for _, ev := range pending {
		sink(ev)
	}
}

func (e *events) emit(ev event) {
	e.mu.Lock()
	sink := e.sink
	if sink == nil && len(e.pending) < maxPending {
		e.pending = append(e.pending, ev)
	}
	e.mu.Unlock()
	if sink != nil {
		sink(ev)
	}
}

// handler wraps the process's slog handler: every line still reaches it
// (at its level), and Warn and Error lines also reach the terminal,
// whatever -log-level says.
func (e *events) handler(next slog.Handler) slog.Handler {
	return &eventHandler{next: next, events: e}
}

type eventHandler struct {
	next   slog.Handler
	events *events
	attrs  []slog.Attr
	group  string
}

// waiting are Info lines that say an operation waits for a later try,
// which the terminal shows too: without them a deferred dispatch looks
// like one nobody attempted.
var waiting = map[string]bool{"dispatch deferred": true, "operation left for the next tick": true}

func (h *eventHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

func (h *eventHandler) Handle(ctx context.Context, r slog.Record) error {
	// A delivered notification too: ARM's part of the story, which a
	// person would otherwise never see arrive.
	if r.Level >= slog.LevelWarn || (r.Level >= slog.LevelInfo && (waiting[r.Message] || r.Message == lifecycle.MsgNotification)) {
		ev := event{at: r.Time, level: r.Level, msg: r.Message, attrs: map[string]string{}}
		add := func(a slog.Attr) bool {
			ev.attrs[h.group+a.Key] = a.Value.Resolve().String()
			return true
		}
		for _, a := range h.attrs {
			add(a)
		}
		r.Attrs(add)
		h.events.emit(ev)
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *eventHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(attrs)
	c.attrs = slices.Concat(h.attrs, attrs)
	return &c
}

func (h *eventHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.next = h.next.WithGroup(name)
	c.group = h.group + name + "."
	return &c
}

// verdict says what an event means for its operation, in the terminal's
// words: retrying (it will be tried again), refused, skipped, or a plain
// warning or error.
func verdict(ev event) string {
	m := ev.msg
	switch {
	case m == "notification.attempt" && ev.get("outcome") == "refused":
		return "notification refused"
	case m == "notification.attempt":
		return "notification " + orDash(ev.get("outcome"))
	case strings.HasPrefix(m, "skipping"):
		return "skipped"
	case m == "operation.stuck":
		return "STUCK"
	case strings.Contains(m, "will try again"): // the ocm SDK's own retries
		return "retrying"
	case strings.Contains(m, "retried") || strings.Contains(m, "retries") || strings.Contains(m, "retrying") || strings.Contains(m, "left to the tick") ||
		strings.Contains(m, "backed off") || strings.Contains(m, "the tick dispatches"):
		return "retrying"
	case waiting[m]:
		return "waiting"
	case ev.level >= slog.LevelError:
		return "error"
	}
	return "warning"
}

// describe is an event's why (the message and its error or reason) and
// when it is tried next, when the line names that.
func describe(ev event) (why, next string) {
	why = ev.msg
	switch ev.msg {
	case "notification.attempt":
		why = fmt.Sprintf("attempt %s to %s", orDash(ev.get("attempt")), orDash(ev.get("host")))
	case lifecycle.MsgStuck:
		why = stuckText(ev)
	case "invocation failed; retrying":
		why = fmt.Sprintf("invocation failed; retry %s of %s", ev.get("retry"), ev.get("max_retries"))
		if d, err := time.ParseDuration(ev.get("delay")); err == nil {
			next = " (next attempt " + ev.at.Add(d).Local().Format("15:04:05") + ")"
		}
	}
	for _, k := range []string{"error", "reason"} {
		if e := ev.get(k); e != "" {
			why += ": " + e
			break
		}
	}
	for _, k := range []string{"next_attempt", "next_retry"} {
		if n := ev.get(k); n != "" {
			return why, " (next attempt " + clockTime(n) + ")"
		}
	}
	return why, next
}

// stuckText is an operation.stuck record in words: how long, past which
// threshold, and when the tick fails it.
func stuckText(ev event) string {
	secs := func(k string) string {
		f, _ := strconv.ParseFloat(ev.get(k), 64)
		d := time.Duration(f * float64(time.Second)).Round(time.Second).String()
		return strings.Replace(strings.Replace(d, "m0s", "m", 1), "h0m", "h", 1) // 21m, 1h, 1h30m
	}
	s := fmt.Sprintf("%s for %s, past its %s threshold (%s)", orDash(ev.get("status")), secs("seconds_since_start"),
		secs("threshold_seconds"), lifecycle.EnvStuckAfter)
	if at, err := time.Parse(time.RFC3339, ev.get("deadline")); err == nil {
		s += fmt.Sprintf("; fails in %s (%s)", inWords(at.Sub(ev.at)), at.Local().Format("15:04:05"))
	}
	return s
}

// inWords is a duration as a person reads it at a glance: 45s, 37m, 5h.
func inWords(d time.Duration) string {
	switch {
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(max(d, 0).Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh", int(d.Hours()))
}

// clockTime shows a logged time as the terminal's clock does.
func clockTime(s string) string {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999 -0700 MST"} {
		if at, err := time.Parse(layout, s); err == nil {
			return at.Local().Format("15:04:05")
		}
	}
	return s
}
