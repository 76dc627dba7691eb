package devhost

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
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
	if r.Level >= slog.LevelWarn || (r.Level >= slog.LevelInfo && waiting[r.Message]) {
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
