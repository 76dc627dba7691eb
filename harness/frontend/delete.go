package frontend

import (
	"context"
	"errors"
	"fmt"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Delete accepts a DELETE: it cancels the target's active operations, writes
// a Delete operation (status Deleting) and marks the resource Deleting. A
// cluster delete does the same, with implicit operations, for every node
// pool and external auth under it. ErrNotFound means ARM's 204.
func (f *Frontend) Delete(ctx context.Context, resourceID string, opts Options) (Accepted, error) {
	t, err := parseTarget(resourceID)
	if err != nil {
		return Accepted{}, err
	}
	r, err := f.read(ctx, t)
	if err != nil {
		return Accepted{}, err
	}
	if r == nil {
		return Accepted{}, fmt.Errorf("%s %s: %w; nothing to delete (ARM answers 204) and nothing was written", t.kind, resourceID, ErrNotFound)
	}
	if r.ProvisioningState() == arm.ProvisioningStateDeleting {
		return Accepted{}, &ConflictError{Message: fmt.Sprintf("%s is already being deleted", resourceID)}
	}
	if t.kind != document.KindCluster {
		if _, err := f.checkParent(ctx, t); err != nil && !errors.Is(err, ErrNotFound) {
			return Accepted{}, err
		}
	}
	if opts.Location == "" {
		opts.Location = r.Location()
	}
	// A cluster's own cancel excludes nested resources; theirs are canceled
	// with their own implicit deletes below.
	steps, err := f.cancelActive(ctx, t.pk, resourceID, t.kind != document.KindCluster, "")
	if err != nil {
		return Accepted{}, err
	}
	op, more, err := f.deleteSteps(r, opts, false)
	if err != nil {
		return Accepted{}, err
	}
	steps = append(steps, more...)
	if t.kind == document.KindCluster {
		children, err := f.childResources(ctx, t)
		if err != nil {
			return Accepted{}, err
		}
		for _, child := range children {
			if child.ProvisioningState() == arm.ProvisioningStateDeleting {
				continue
			}
			cancel, err := f.cancelActive(ctx, t.pk, child.ResourceID(), true, "")
			if err != nil {
				return Accepted{}, err
			}
			_, more, err := f.deleteSteps(child, opts, true)
			if err != nil {
				return Accepted{}, err
			}
			steps = append(append(steps, cancel...), more...)
		}
	}
	if err := f.commit(ctx, t.pk, dedupe(steps)); err != nil {
		return Accepted{}, err
	}
	return Accepted{Operation: op}, nil
}

// deleteSteps renders the Delete operation and the resource's Deleting write.
func (f *Frontend) deleteSteps(r *document.Resource, opts Options, implicit bool) (*document.OperationDocument, []store.BatchOp, error) {
	op, err := f.newOperation(document.RequestDelete, r.ResourceID(), "", opts, implicit)
	if err != nil {
		return nil, nil, err
	}
	opStep, err := createOp(op)
	if err != nil {
		return nil, nil, err
	}
	r = r.Clone()
	if _, ok := r.DeletionTimestamp(); !ok {
		r.SetDeletionTimestamp(f.now())
	}
	r.SetActiveOperationID(op.Name())
	r.SetProvisioningState(arm.ProvisioningStateDeleting)
	if err := r.SetUsesNewDeletionApproach(true); err != nil {
		return nil, nil, err
	}
	if r.Kind == document.KindCluster {
		r.SetDeleteOperationCompletionDeadline(f.now().Add(DefaultDeleteDeadline))
	}
	resStep, err := replaceResource(r)
	if err != nil {
		return nil, nil, err
	}
	return op, []store.BatchOp{opStep, resStep}, nil
}

// childResources returns the cluster's node pools and external auths.
func (f *Frontend) childResources(ctx context.Context, t target) ([]*document.Resource, error) {
	var out []*document.Resource
	err := f.store.Children(ctx, t.pk, t.id, func(items []store.Item) error {
		for _, it := range items {
			kind, err := document.Sniff(it.Body)
			if err != nil || (kind != document.KindNodePool && kind != document.KindExternalAuth) {
				continue
			}
			r, err := document.ParseResource(it.Body)
			if err != nil {
				return fmt.Errorf("reading a child of %s: %w", t.id, err)
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing children of %s: %w", t.id, err)
	}
	return out, nil
}

// dedupe drops a second replace of the same document (an operation canceled
// both as the cluster's nested op and as a child's own).
func dedupe(steps []store.BatchOp) []store.BatchOp {
	seen := map[string]bool{}
	out := steps[:0]
	for _, s := range steps {
		if s.Kind == store.OpReplace {
			if seen[s.ID] {
				continue
			}
			seen[s.ID] = true
		}
		out = append(out, s)
	}
	return out
}

// RequestCredential accepts POST requestadmincredential: an operation only,
// no resource write.
func (f *Frontend) RequestCredential(ctx context.Context, clusterID string, opts Options) (Accepted, error) {
	t, r, err := f.credentialTarget(ctx, clusterID, &opts)
	if err != nil {
		return Accepted{}, err
	}
	if r.RevokeCredentialsOperationID() != "" {
		return Accepted{}, &ConflictError{Message: fmt.Sprintf("credentials of %s are being revoked; retry later", clusterID)}
	}
	op, err := f.newOperation(document.RequestRequestCredential, clusterID, "", opts, false)
	if err != nil {
		return Accepted{}, err
	}
	step, err := createOp(op)
	if err != nil {
		return Accepted{}, err
	}
	if err := f.commit(ctx, t.pk, []store.BatchOp{step}); err != nil {
		return Accepted{}, err
	}
	return Accepted{Operation: op}, nil
}

// RevokeCredentials accepts POST revokecredentials: it cancels pending
// credential requests, writes the operation (internalId = the cluster's CS
// ID) and records it on the cluster.
func (f *Frontend) RevokeCredentials(ctx context.Context, clusterID string, opts Options) (Accepted, error) {
	t, r, err := f.credentialTarget(ctx, clusterID, &opts)
	if err != nil {
		return Accepted{}, err
	}
	if r.RevokeCredentialsOperationID() != "" {
		return Accepted{}, &ConflictError{Message: fmt.Sprintf("credentials of %s are already being revoked", clusterID)}
	}
	steps, err := f.cancelActive(ctx, t.pk, clusterID, false, document.RequestRequestCredential)
	if err != nil {
		return Accepted{}, err
	}
	op, err := f.newOperation(document.RequestRevokeCredentials, clusterID, r.ClusterServiceID(), opts, false)
	if err != nil {
		return Accepted{}, err
	}
	opStep, err := createOp(op)
	if err != nil {
		return Accepted{}, err
	}
	r = r.Clone()
	if err := r.SetRevokeCredentialsOperationID(op.Name()); err != nil {
		return Accepted{}, err
	}
	resStep, err := replaceResource(r)
	if err != nil {
		return Accepted{}, err
	}
	if err := f.commit(ctx, t.pk, append(steps, opStep, resStep)); err != nil {
		return Accepted{}, err
	}
	return Accepted{Operation: op}, nil
}

// credentialTarget checks a credential POST: the cluster exists, is
// terminal and has a CS ID.
func (f *Frontend) credentialTarget(ctx context.Context, clusterID string, opts *Options) (target, *document.Resource, error) {
	t, err := parseTarget(clusterID, document.KindCluster)
	if err != nil {
		return target{}, nil, err
	}
	r, err := f.read(ctx, t)
	if err != nil {
		return target{}, nil, err
	}
	if r == nil {
		return target{}, nil, fmt.Errorf("%s: %w", clusterID, ErrNotFound)
	}
	if s := r.ProvisioningState(); !s.IsTerminal() {
		return target{}, nil, &ConflictError{Message: fmt.Sprintf("%s is %s", clusterID, s)}
	}
	if r.ClusterServiceID() == "" {
		return target{}, nil, &ConflictError{Message: fmt.Sprintf("%s has no Clusters Service ID yet", clusterID)}
	}
	if opts.Location == "" {
		opts.Location = r.Location()
	}
	return t, r, nil
}
