package lifecycle

import (
	"context"
)

// externalAuthCreate is an external auth's create. Its dispatch POSTs the
// external auth under its cluster once that is in CS (a later tick
// retries until then), with its lower-cased ARM name as the CS ID, and
// records the href as clusterServiceID, the marker. Its poll is done once
// the object exists (CS often gives it no status), unless CS says it is
// in error. It must end by the deadline, and fails under
// InternalServerError with the merged message.
type externalAuthCreate struct {
	childCreation               // what every child's create shares (create.go), but its poll
	ea            *externalAuth // the external auth's CS calls (externalauth.go)
}

// poll: externalAuth.read, and the object's existence as the source
// externalAuthClusterServiceCreate (externalAuthExists: Failed only when
// CS says "error").
func (h externalAuthCreate) poll(ctx context.Context, j *job) (pollResult, error) {
	ea, err := h.ea.read(ctx, j, j.res.ClusterServiceID())
	if err != nil {
		return pollResult{}, err
	}
	return polledStates(externalAuthExists(ea).WithSource("externalAuthClusterServiceCreate")), nil
}
