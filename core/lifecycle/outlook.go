package lifecycle

import (
	"time"

	"github.com/hcpops/hcpops/core/document"
)

// Outlook is what an operator's listing shows of an active operation
// beside its status: the stuck threshold its age has passed and when the
// tick will fail it. It is worked out by the engine's own rules, so
// `hcpopsctl ops` and the tick never disagree about either.
type Outlook struct {
	// Stuck is the highest threshold the operation's age has passed (as
	// operation.stuck records it); zero: not stuck.
	Stuck time.Duration
	// Deadline is when the tick fails it unless CS then says the work is
	// under way, which holds it past (overdue.go); zero: it has none.
	Deadline time.Time
}

// Outlooker reckons outlooks under one set of settings. A listing builds
// it once: its engine and handler registry cost more than one row's rule.
// Only the CLI builds one, so the Function App's binary carries none.
type Outlooker struct{ e *Engine }

// NewOutlooker is the reckoner of outlooks under the settings c.
func NewOutlooker(c Config) Outlooker {
	e := &Engine{cfg: c.withDefaults()}
	e.handlers = e.registry()
	return Outlooker{e}
}

// Outlook is op's outlook at now, with res its target resource (nil when
// its document is gone).
func (x Outlooker) Outlook(op *document.OperationDocument, res *document.Resource, now time.Time) Outlook {
	e := x.e
	var o Outlook
	if kind, err := op.TargetKind(); err == nil && !op.Properties.StartTime.IsZero() {
		own := e.cfg.StuckAfter[StuckKey{kind, op.Properties.Request}]
		o.Stuck = crossed(own, e.cfg.StuckAfter[StuckAny], now.Sub(op.Properties.StartTime))
	}
	o.Deadline = e.deadlineOf(op, res)
	return o
}

// deadlineOf is when the tick fails op (zero: never), as its handler
// reckons it; res is its target resource, nil when gone.
func (e *Engine) deadlineOf(op *document.OperationDocument, res *document.Resource) time.Time {
	kind, err := op.TargetKind()
	if err != nil {
		return time.Time{}
	}
	h, ok := e.handlers[handlerKey{op.Properties.Request, kind}]
	// Only a delete reckons its deadline without its resource.
	if !ok || res == nil && op.Properties.Request != document.RequestDelete {
		return time.Time{}
	}
	return h.deadline(&job{op: op, kind: kind, res: res})
}
