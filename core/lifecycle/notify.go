package lifecycle

import (
	"context"
	"errors"
	"time"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/notification"
	"github.com/hcpops/hcpops/core/store"
)

// maxNotifyWait bounds a POST whatever the notifier's own timeout says.
const maxNotifyWait = time.Minute

// notify POSTs the terminal status of j.op to its notificationUri and, on
// success, clears the URI. A failure is retried by later ticks on an
// exponential schedule (see backoff); a URI the notifier refuses outright
// is cleared with a warning, since retrying it can never succeed. Delivery
// is at least once across processes: a crash between the POST and the
// clear repeats the POST. Within one process the notifier posts once: a
// delivered notification whose clear failed only has its clear retried,
// and a tick that meets a POST in flight leaves it to its owner.
//
// The POST and the clear each get a context of their own. ctx may be the
// write context of the status change that led here, already partly
// spent; and a slow ARM must not leave the clear without time, or the
// next tick would notify again. delivered: ARM took it now.
func (w *writer) notify(ctx context.Context, j *job) (delivered bool) {
	op := j.op
	uri := op.Properties.NotificationURI
	if uri == "" || !op.Properties.Status.IsTerminal() {
		return false
	}
	key := docRef(op)
	// Due since it became terminal: a process that starts on it numbers
	// its attempt on the schedule from then, not from 1.
	w.notifyAt.resume(key, op.Properties.LastTransitionTime, w.clock())
	attempt := w.notifyAt.attempt(key)
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), maxNotifyWait)
	err := w.notifier.Notify(pctx, uri, op.ToStatus())
	cancel()
	switch {
	case errors.Is(err, notification.ErrInFlight):
		j.log.DebugContext(ctx, "notification is being posted by another tick of this process", "error", err)
		return false
	case errors.Is(err, notification.ErrDelivered):
		j.log.DebugContext(ctx, "notification was delivered before; clearing its URI again", "error", err)
	case errors.Is(err, notification.ErrNotAllowed):
		// Retrying can never succeed: the URI is cleared below.
		w.notification(ctx, j, uri, NotificationRefused, attempt, time.Time{}, err)
	case err != nil:
		next := w.notifyAt.failed(key, w.clock())
		w.notification(ctx, j, uri, NotificationFailed, attempt, next, err)
		return false
	default:
		delivered = true
		w.notification(ctx, j, uri, NotificationDelivered, attempt, time.Time{}, nil)
	}
	w.notifyAt.forget(key)
	wctx, cancel := w.writeCtx(ctx)
	defer cancel()
	cleared, _, err := w.mutateOperation(wctx, j.log, op, func(o *document.OperationDocument) (bool, error) {
		if o.Properties.NotificationURI != uri {
			return false, nil // cleared (or replaced) by someone else
		}
		o.Properties.NotificationURI = ""
		return true, nil
	})
	if err != nil {
		// The next tick sees the URI and clears it; another process
		// would notify again: at least once.
		j.log.WarnContext(ctx, "clearing the notification URI failed; the next tick clears it", "error", err)
		return delivered
	}
	if cleared != nil {
		j.op = cleared
	}
	return delivered
}

// notify is writer.notify, counting a delivery in the run.
func (r *run) notify(ctx context.Context, j *job) {
	if r.writer.notify(ctx, j) {
		r.count.notified.Add(1)
	}
}

// retryNotification notifies a terminal operation whose URI is still set,
// if its retry is due.
func (r *run) retryNotification(ctx context.Context, op *document.OperationDocument) {
	if !r.notifyAt.due(docRef(op), r.clock()) {
		return
	}
	r.notify(ctx, &job{op: op, log: r.logFor(op)})
}

// docRef is the operation's document: the key of everything the engine
// keeps per operation (retry schedules, dispatch locks, the skip log).
func docRef(op *document.OperationDocument) store.DocRef {
	return store.DocRef{PartitionKey: op.PartitionKey, ID: op.ID}
}
