package lifecycle

import (
	"context"
	"fmt"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
)

// Break-glass credential operations target the cluster but never own its
// activeOperationId, so their status writes leave the cluster alone.

// dispatchRequestCredential asks CS for a break-glass credential and
// records its href as the operation's internalId. A revocation in progress
// cancels the request, as ARO-HCP does. If recording the href fails, a
// retry creates a second credential; the first is never handed out and
// expires (ARO-HCP accepts the same).
func (e *Engine) dispatchRequestCredential(ctx context.Context, j *job, t *tally) (outcome, error) {
	if j.op.Properties.SystemAdminCredentialRequest != nil {
		return outcomeSkipped, csrUnsupported()
	}
	if id := j.res.RevokeCredentialsOperationID(); id != "" {
		j.log.Info("a credential revocation is running; canceling the request", "revoke_operation_id", id)
		changed, err := e.updateOperationStatus(ctx, j, arm.ProvisioningStateCanceled, supersededError(), t)
		if changed {
			t.changed.Add(1)
			t.canceled.Add(1)
		}
		return outcomeSkipped, err
	}
	clusterHref := j.res.ClusterServiceID()
	if clusterHref == "" {
		return outcomeSkipped, retryLater("cluster %s is not in clusters service yet", j.res.ResourceID())
	}
	cred, err := e.cs.PostBreakGlassCredential(ctx, clusterHref)
	if err != nil {
		return outcomeSkipped, fmt.Errorf("requesting a break-glass credential of %s: %w", clusterHref,
			refusedBy(err, "break-glass credential", "create"))
	}
	if cred.Href == "" {
		return outcomeSkipped, fmt.Errorf("requesting a break-glass credential of %s: clusters service returned no href", clusterHref)
	}
	return e.recordInternalID(ctx, j, cred.Href)
}

func (e *Engine) pollRequestCredential(ctx context.Context, j *job) (pollResult, error) {
	href := j.op.Properties.InternalID
	cred, err := e.cs.GetBreakGlassCredential(ctx, href)
	if err != nil {
		return pollResult{}, fmt.Errorf("reading break-glass credential %s: %w", href, err)
	}
	s, cerr, err := state.ConvertCredentialStatus(cred.Status, j.op.Properties.Status)
	if err != nil {
		return pollResult{}, fmt.Errorf("converting break-glass credential %s: %w", href, err)
	}
	return polledStates(state.FromConversion(s, cerr).WithSource("clusterServiceBreakGlassCredential")), nil
}

// revokeTarget is the cluster whose credentials are revoked: the frontend
// puts its CS ID in internalId; the cluster document has it too.
func revokeTarget(j *job) string {
	if h := j.op.Properties.InternalID; h != "" {
		return h
	}
	return j.res.ClusterServiceID()
}

// dispatchRevokeCredentials revokes every credential of the cluster and
// moves the operation from Accepted to Deleting, its dispatched marker.
func (e *Engine) dispatchRevokeCredentials(ctx context.Context, j *job, t *tally) (outcome, error) {
	if id := j.res.RevokeCredentialsOperationID(); id != "" && !strings.EqualFold(id, j.op.Name()) {
		j.log.Info("cluster names another revocation; not dispatching", "revoke_operation_id", id)
		return outcomeSkipped, nil
	}
	href := revokeTarget(j)
	if href == "" {
		return outcomeSkipped, retryLater("cluster %s is not in clusters service yet", j.res.ResourceID())
	}
	err := e.cs.DeleteBreakGlassCredentials(ctx, href)
	switch {
	case err == nil:
	case cs.IsRevocationRequested(err):
		j.log.Info("revocation already requested", "reason", err)
	default:
		return outcomeSkipped, fmt.Errorf("revoking break-glass credentials of %s: %w", href,
			refusedBy(err, "break-glass credentials", "revoke"))
	}
	changed, err := e.updateOperationStatus(ctx, j, arm.ProvisioningStateDeleting, nil, t)
	if changed {
		t.changed.Add(1)
	}
	if err != nil {
		return outcomeSkipped, err
	}
	return outcomeDispatched, nil
}

// pollRevokeCredentials lists the cluster's credentials: any awaiting
// revocation keeps the operation Deleting, any failed fails it, and once
// all are revoked or expired it succeeds. On a terminal result the
// cluster's revokeCredentialsOperationId is cleared first, so that an
// interrupted run repeats the clear rather than skipping it.
func (e *Engine) pollRevokeCredentials(ctx context.Context, j *job) (pollResult, error) {
	href := revokeTarget(j)
	creds, err := e.cs.ListBreakGlassCredentials(ctx, href)
	if err != nil {
		return pollResult{}, fmt.Errorf("listing break-glass credentials of %s: %w", href, err)
	}
	const source = "clusterServiceBreakGlassCredentials"
	s := state.NewOperationState(arm.ProvisioningStateSucceeded, "").WithSource(source)
	var failed []string
	for _, c := range creds {
		switch c.Status {
		case cs.CredentialStateRevoked, cs.CredentialStateExpired:
		case cs.CredentialStateFailed:
			failed = append(failed, c.ID)
		default: // awaiting_revocation, or one not revoked yet
			return polledStates(state.NewOperationState(arm.ProvisioningStateDeleting,
				fmt.Sprintf("credential %s is %s", c.ID, c.Status)).WithSource(source)), nil
		}
	}
	if len(failed) > 0 {
		s = state.FromConversion(arm.ProvisioningStateFailed, &arm.CloudErrorBody{
			Code:    arm.CodeInternalServerError,
			Message: fmt.Sprintf("Failed to revoke cluster credentials: %s", strings.Join(failed, ", ")),
		}).WithSource(source)
	}
	if err := e.clearRevocation(ctx, j); err != nil {
		return pollResult{}, err
	}
	return polledStates(s), nil
}

// clearRevocation removes the cluster's pointer to this revocation, which
// lets the frontend accept credential requests again.
func (e *Engine) clearRevocation(ctx context.Context, j *job) error {
	res, _, err := e.mutateResource(ctx, j.log, j.res, func(r *document.Resource) (bool, error) {
		if !strings.EqualFold(r.RevokeCredentialsOperationID(), j.op.Name()) {
			return false, nil
		}
		return true, r.SetRevokeCredentialsOperationID("")
	})
	if err != nil {
		return fmt.Errorf("clearing revokeCredentialsOperationId of %s: %w", j.res.ResourceID(), err)
	}
	j.res = res
	return nil
}
