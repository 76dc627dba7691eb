package lifecycle

import "context"

// externalAuthUpdate is an external auth's update: it PATCHes the issuer,
// and is done once CS carries it.
type externalAuthUpdate struct {
	updating
	externalAuth
}

func (externalAuthUpdate) work() string { return "external auth update" }

func (h externalAuthUpdate) dispatch(ctx context.Context, j *job, t *tally) (outcome, error) {
	return h.dispatchUpdate(ctx, j, t, h.externalAuth)
}

func (h externalAuthUpdate) poll(ctx context.Context, j *job) (pollResult, error) {
	return pollUpdate(ctx, j, h.externalAuth)
}
