package lifecycle

import (
	"context"
	"errors"
	"time"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/notification"
)

// notify POSTs the terminal status of j.op to its notificationUri and, on
// success, clears the URI. A failure is retried by later ticks on an
// exponential schedule (see backoff); a URI the notifier refuses outright
// is cleared with a warning, since retrying it can never succeed. Delivery
// is at least once: a crash between the POST and the clear repeats the POST.
func (e *Engine) notify(ctx context.Context, j *job, t *tally) {
	op := j.op
	uri := op.Properties.NotificationURI
	if uri == "" || !op.Properties.Status.IsTerminal() {
		return
	}
	key := notifyKey(op)
	attempt := e.notifyAt.attempt(key)
	err := e.notifier.Notify(ctx, uri, op.ToStatus())
	switch {
	case errors.Is(err, notification.ErrNotAllowed):
		// Retrying can never succeed: the URI is cleared below.
		e.notification(ctx, j, uri, NotificationRefused, attempt, time.Time{}, err)
	case err != nil:
		next := e.notifyAt.failed(key, e.clock())
		e.notification(ctx, j, uri, NotificationFailed, attempt, next, err)
		return
	default:
		t.notified.Add(1)
		e.notification(ctx, j, uri, NotificationDelivered, attempt, time.Time{}, nil)
	}
	e.notifyAt.forget(key)
	cleared, _, err := e.mutateOperation(ctx, j.log, op, func(o *document.OperationDocument) (bool, error) {
		if o.Properties.NotificationURI != uri {
			return false, nil // cleared (or replaced) by someone else
		}
		o.Properties.NotificationURI = ""
		return true, nil
	})
	if err != nil {
		// The next tick sees the URI and notifies again: at least once.
		j.log.Warn("clearing the notification URI failed; ARM may be notified again", "error", err)
		return
	}
	if cleared != nil {
		j.op = cleared
	}
}

// retryNotification notifies a terminal operation whose URI is still set,
// if its retry is due.
func (e *Engine) retryNotification(ctx context.Context, op *document.OperationDocument, t *tally) {
	if !e.notifyAt.due(notifyKey(op), e.clock()) {
		return
	}
	e.notify(ctx, &job{op: op, log: e.logFor(ctx, op)}, t)
}

func notifyKey(op *document.OperationDocument) string {
	return op.PartitionKey + "/" + op.ID
}
