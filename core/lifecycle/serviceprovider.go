package lifecycle

import (
	"context"
	"errors"
	"fmt"

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
	rid, ok := document.ServiceProviderID(res)
	if !ok || version == "" {
		return nil
	}
	pk, id := res.PartitionKey(), document.CosmosID(rid)
	item, err := st.Get(ctx, pk, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return createActiveVersion(ctx, st, res, rid, version)
	case err != nil:
		return fmt.Errorf("reading %s: %w", rid, err)
	}
	doc, err := document.ParseServiceProvider(item.Body)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", errMalformed, rid, err)
	}
	if doc.ActiveVersion() == version {
		return nil
	}
	doc.ETag = item.ETag // the store's, as every replace sends
	doc.SetActiveVersion(version)
	body, err := doc.MarshalReplace()
	if err != nil {
		return fmt.Errorf("encoding %s: %w", rid, err)
	}
	if _, err := st.Replace(ctx, pk, id, body, item.ETag); errors.Is(err, store.ErrPreconditionFailed) {
		return retryLater("%s changed meanwhile", rid)
	} else if err != nil {
		return fmt.Errorf("replacing %s: %w", rid, err)
	}
	return nil
}

func createActiveVersion(ctx context.Context, st store.Store, res *document.Resource, rid, version string) error {
	doc, err := document.NewServiceProvider(res)
	if err != nil {
		return err
	}
	doc.SetActiveVersion(version)
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
