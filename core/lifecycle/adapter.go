package lifecycle

import (
	"context"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
)

// adapter is everything the lifecycle does differently for one kind of
// resource. The request handlers (create.go, patch.go, delete.go) are
// written once over it, so this is the only place a cluster is told from a
// node pool, and the one place to change how a kind's CS state is fetched.
type adapter struct {
	kind document.Kind
	// noun names the kind in messages ("node pool").
	noun string
	// parent: deleting the resource deletes its node pools and external
	// auths with it.
	parent bool
	// create makes the CS object of j.res, or adopts the one an earlier
	// attempt made, and records its href on the resource.
	create func(ctx context.Context, j *job) (outcome, error)
	// status reads the CS state of the object at href, converted for j's
	// request, as the source upstream names (clusterServiceClusterStatus):
	// what delete polls need.
	status func(ctx context.Context, j *job, href string) (*state.OperationState, error)
	// created is the create poll's source; nil means status. An external
	// auth that exists is created (CS often gives it no status).
	created func(ctx context.Context, j *job, href string) (*state.OperationState, error)
	// get reads the whole object at href for an update poll: its state and
	// whether it already carries what j.res asks of it, one source each.
	get func(ctx context.Context, j *job, href string) ([]*state.OperationState, error)
	// patch sends CS the fields an update of j.res may change; a value CS
	// would refuse is refused first (a *refusal).
	patch func(ctx context.Context, j *job, href string) error
	// delete asks CS to delete the object at href.
	delete func(ctx context.Context, href string) error
	// uncommitted is the href of an object whose create may have reached
	// CS without being recorded as its clusterServiceID ("" when none).
	uncommitted func(res *document.Resource) string
	// childHref, for node pools and external auths, is the deterministic
	// CS href of the child id under a cluster's href; nil for clusters.
	childHref func(clusterHref, id string) string
}

// specState is the source that says whether CS carries what an update
// asked for: Updating, naming the first field that differs, until it does.
func specState(source, differs string) *state.OperationState {
	if differs != "" {
		return state.NewOperationState(arm.ProvisioningStateUpdating, differs).WithSource(source)
	}
	return state.NewOperationState(arm.ProvisioningStateSucceeded, "").WithSource(source)
}

// adapters builds one adapter per kind.
func (e *Engine) adapters() map[document.Kind]*adapter {
	return map[document.Kind]*adapter{
		document.KindCluster:      e.clusterAdapter(),
		document.KindNodePool:     e.nodePoolAdapter(),
		document.KindExternalAuth: e.externalAuthAdapter(),
	}
}

// noUncommitted is the uncommitted of kinds whose CS ID a reader can work
// out instead (childHref), so no pending ID is recorded for them.
func noUncommitted(*document.Resource) string { return "" }
