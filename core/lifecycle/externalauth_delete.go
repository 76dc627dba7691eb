package lifecycle

import "context"

// externalAuthDelete is an external auth's delete: done once CS answers
// 404 for it; while CS reports no state the delete goes on.
type externalAuthDelete struct {
	deletion
	externalAuth
}

func (externalAuthDelete) work() string { return "external auth deletion" }

func (h externalAuthDelete) dispatch(ctx context.Context, j *job, _ *tally) (outcome, error) {
	return h.dispatchDelete(ctx, j, h.externalAuth)
}

func (h externalAuthDelete) poll(ctx context.Context, j *job) (pollResult, error) {
	return h.pollDelete(ctx, j, h.externalAuth)
}
