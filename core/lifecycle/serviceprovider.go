package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Active versions. ARO-HCP's frontend accepts a node pool version change
// only when it knows the versions running: it reads them from the
// cluster's and node pool's service-provider documents, which upstream's
// active-version controllers keep from the management cluster. hcpops
// keeps them from what Clusters Service reports, in the shape upstream's
// coreapi marshals (document.ServiceProvider), with an etag-guarded
// replace that keeps every other member, as every other write.

// recordActiveVersion makes version the active version in res's
// service-provider document: created when absent, replaced (etag-guarded,
// instanceVersion bumped, other members kept) when its newest entry
// differs, left alone otherwise. A lost race is retried later.
func recordActiveVersion(ctx context.Context, st store.Store, res *document.Resource, version string) error {
	_, err := recordVersions(ctx, st, res, spVersions{active: version})
	return err
}

// spVersions is what hcpops keeps in a service-provider document: the
// active version and, for a cluster, the update channels it can move
// along (nil channels: leave them as they are).
type spVersions struct {
	active   string
	channels []string
}

// recordVersions writes v into res's service-provider document as
// recordActiveVersion does; written says whether it wrote.
func recordVersions(ctx context.Context, st store.Store, res *document.Resource, v spVersions) (written bool, err error) {
	rid, ok := document.ServiceProviderID(res)
	if !ok || v.active == "" {
		return false, nil
	}
	pk, id := res.PartitionKey(), document.CosmosID(rid)
	item, err := st.Get(ctx, pk, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return true, createVersions(ctx, st, res, rid, v)
	case err != nil:
		return false, fmt.Errorf("reading %s: %w", rid, err)
	}
	doc, err := document.ParseServiceProvider(item.Body)
	if err != nil {
		return false, fmt.Errorf("%w: %s: %w", errMalformed, rid, err)
	}
	if !v.set(doc) {
		return false, nil
	}
	doc.ETag = item.ETag // the store's, as every replace sends
	body, err := doc.MarshalReplace()
	if err != nil {
		return false, fmt.Errorf("encoding %s: %w", rid, err)
	}
	if _, err := st.Replace(ctx, pk, id, body, item.ETag); errors.Is(err, store.ErrPreconditionFailed) {
		return false, retryLater("%s changed meanwhile", rid)
	} else if err != nil {
		return false, fmt.Errorf("replacing %s: %w", rid, err)
	}
	return true, nil
}

// set puts v into doc and says whether anything changed.
func (v spVersions) set(doc *document.ServiceProvider) bool {
	changed := false
	if doc.ActiveVersion() != v.active {
		doc.SetActiveVersion(v.active)
		changed = true
	}
	if v.channels != nil && doc.HasChannels() {
		if old, ok := doc.DesiredVersionChannels(); !ok || !slices.Equal(old, v.channels) {
			doc.SetDesiredVersionChannels(v.channels)
			changed = true
		}
	}
	return changed
}

func createVersions(ctx context.Context, st store.Store, res *document.Resource, rid string, v spVersions) error {
	doc, err := document.NewServiceProvider(res)
	if err != nil {
		return err
	}
	v.set(doc)
	body, err := doc.Marshal()
	if err != nil {
		return fmt.Errorf("encoding %s: %w", rid, err)
	}
	if _, err := st.Create(ctx, res.PartitionKey(), body); errors.Is(err, store.ErrConflict) {
		return retryLater("%s was created meanwhile", rid)
	} else if err != nil {
		return fmt.Errorf("creating %s: %w", rid, err)
	}
	return nil
}
