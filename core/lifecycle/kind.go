package lifecycle

import (
	"context"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/state"
)

// kind is what the requests' shared steps ask of one kind of CS object;
// cluster, nodePool and externalAuth implement it. How a kind's state is
// fetched and converted is decided here and nowhere else.
type kind interface {
	// noun names the kind in messages ("node pool").
	noun() string
	// status reads the CS state of the object at href, converted for j's
	// request, as the source upstream names it
	// (clusterServiceClusterStatus): what create and delete polls need.
	status(ctx context.Context, j *job, href string) (*state.OperationState, error)
	// spec reads the whole object at href for an update poll: its state
	// and whether it already carries what j.res asks of it, one source
	// each.
	spec(ctx context.Context, j *job, href string) ([]*state.OperationState, error)
	// patch sends CS the fields an update of j.res may change; a value CS
	// would refuse is refused first (a *refusal).
	patch(ctx context.Context, j *job, href string) error
	// remove asks CS to delete the object at href.
	remove(ctx context.Context, href string) error
}

// child is a kind whose CS object lives under its cluster's, at an href
// its lower-cased ARM name decides: node pools and external auths. A
// reader can work out such an href, so none is recorded before the POST.
type child interface {
	kind
	// href is the child's href with this id under a cluster's href.
	href(clusterHref, id string) string
	// post creates the CS object of j.res under its cluster with the
	// caller-chosen id, unless a GET finds it there already.
	post(ctx context.Context, j *job, clusterHref, id string) error
}

// specState is the source that says whether CS carries what an update
// asked for: Updating, naming the first field that differs, until it does.
func specState(source, differs string) *state.OperationState {
	if differs != "" {
		return state.NewOperationState(arm.ProvisioningStateUpdating, differs).WithSource(source)
	}
	return state.NewOperationState(arm.ProvisioningStateSucceeded, "").WithSource(source)
}
