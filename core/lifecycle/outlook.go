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

// Outlooker reckons outlooks under one set of settings, the defaults
// filled once for a listing. Only the CLI builds one, so the Function
// App's binary carries none.
type Outlooker struct{ cfg Config }

// NewOutlooker is the reckoner of outlooks under the settings c.
func NewOutlooker(c Config) Outlooker {
	return Outlooker{c.withDefaults()}
}

// Outlook is op's outlook at now, with res its target resource (nil when
// its document is gone).
func (x Outlooker) Outlook(op *document.OperationDocument, res *document.Resource, now time.Time) Outlook {
	kind, err := op.TargetKind()
	if err != nil {
		return Outlook{}
	}
	var o Outlook
	if !op.Properties.StartTime.IsZero() {
		own := x.cfg.StuckAfter[StuckKey{kind, op.Properties.Request}]
		o.Stuck = crossed(own, x.cfg.StuckAfter[StuckAny], now.Sub(op.Properties.StartTime))
	}
	o.Deadline = x.cfg.deadline(&job{op: op, kind: kind, res: res})
	return o
}
