package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
)

// writeGuarded is the engine's one ETag-guarded read-modify-write. write
// applies the change to cur and stores it with If-Match on cur's etag; it
// returns (cur, false, nil) when there is nothing to write (the work is
// done, perhaps by someone else). When stale says the store refused
// because cur changed since it was read, reread fetches it again and write
// runs once more; reread answering ok=false means the document is gone, so
// nothing is left to write. A second refusal is left for a later pass
// (errRetryLater) rather than spun on: the writer that won is making
// progress, and a tick or a redelivered batch comes back soon.
func writeGuarded[D any](ctx context.Context, log *slog.Logger, cur D,
	write func(D) (D, bool, error),
	stale func(error) bool,
	reread func(context.Context, D) (D, bool, error),
) (D, bool, error) {
	var zero D
	for attempt := 0; ; attempt++ {
		out, wrote, err := write(cur)
		if err == nil || !stale(err) {
			return out, wrote, err
		}
		if attempt > 0 {
			return zero, false, fmt.Errorf("%w after a re-read: %w", errRetryLater, err)
		}
		log.DebugContext(ctx, "etag conflict; re-reading before one more attempt", "error", err)
		fresh, ok, err := reread(ctx, cur)
		if err != nil || !ok {
			return zero, false, err
		}
		cur = fresh
	}
}
