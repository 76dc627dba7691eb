package lifecycle

import (
	"log/slog"
	"time"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/store"
)

// writer is what writes an operation's status and its resource's, and
// notifies ARM of a terminal one: the engine's, and an operator's abandon
// (abandon.go), which talks to no Clusters Service and builds one of its
// own. Whole wherever it is built, so neither reaches a part it lacks.
type writer struct {
	store    store.Store
	notifier Notifier
	clock    func() time.Time
	log      *slog.Logger
	// writeTimeout bounds a write that must land whatever its caller's
	// context says (writeCtx).
	writeTimeout time.Duration
	// notifyAt schedules retries of failed ARM notifications.
	notifyAt *backoff
}

func newWriter(st store.Store, n Notifier, c clock.Clock, log *slog.Logger, cfg Config) writer {
	return writer{store: st, notifier: n, clock: c.Now, log: log, writeTimeout: cfg.WriteTimeout,
		notifyAt: newBackoff(cfg.NotifyBackoffBase, cfg.NotifyBackoffMax, cfg.NotifyScheduleSize)}
}
