package lifecycle

import (
	"context"

	"github.com/hcpops/hcpops/core/document"
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
	// request: what create and delete polls need.
	status func(ctx context.Context, j *job, href string) (pollResult, error)
	// get reads the whole object at href: its converted state and whether
	// it already carries what j.res asks of it (the spec matches), which is
	// what an update poll needs.
	get func(ctx context.Context, j *job, href string) (observed, error)
	// patch sends CS the fields an update of j.res may change.
	patch func(ctx context.Context, j *job, href string) error
	// delete asks CS to delete the object at href.
	delete func(ctx context.Context, href string) error
	// uncommitted is the href of an object whose create may have reached
	// CS without being recorded as its clusterServiceID ("" when none).
	uncommitted func(res *document.Resource) string
}

// observed is a whole CS object as an update poll sees it.
type observed struct {
	pollResult
	// matches: CS carries every field of the resource an update may change.
	matches bool
}

// adapters builds one adapter per kind.
func (e *Engine) adapters() map[document.Kind]*adapter {
	return map[document.Kind]*adapter{
		document.KindCluster:      e.clusterAdapter(),
		document.KindNodePool:     e.nodePoolAdapter(),
		document.KindExternalAuth: e.externalAuthAdapter(),
	}
}

// noUncommitted is the uncommitted of kinds whose CS ID is recorded in the
// same step that creates the object.
func noUncommitted(*document.Resource) string { return "" }
