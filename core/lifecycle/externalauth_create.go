package lifecycle

import "context"

// externalAuthCreate is an external auth's create: under its cluster, once
// that is in CS, with the lower-cased ARM name as its CS ID; done once the
// object exists (CS often gives it no status), unless CS says it failed.
type externalAuthCreate struct {
	creation
	externalAuth
}

func (externalAuthCreate) work() string { return "external auth creation" }

func (h externalAuthCreate) dispatch(ctx context.Context, j *job, _ *tally) (outcome, error) {
	return h.createChild(ctx, j, h.externalAuth)
}

func (h externalAuthCreate) poll(ctx context.Context, j *job) (pollResult, error) {
	ea, err := h.read(ctx, j, j.res.ClusterServiceID())
	if err != nil {
		return pollResult{}, err
	}
	return polledStates(externalAuthExists(ea).WithSource("externalAuthClusterServiceCreate")), nil
}
