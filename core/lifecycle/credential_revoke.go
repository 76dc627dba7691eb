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

// credentialRevoke revokes every break-glass credential of a cluster; its
// dispatch moving the operation to Deleting is the marker that it was
// sent.
type credentialRevoke struct{ e *Engine }

func (credentialRevoke) dispatched(j *job) bool {
	return j.op.Properties.Status != arm.ProvisioningStateAccepted
}

func (credentialRevoke) failure() (string, state.FailureMessage) {
	return arm.CodeInternalServerError, state.Bare
}

// revokeTarget is the cluster whose credentials are revoked: the frontend
// puts its CS ID in internalId; the cluster document has it too.
func revokeTarget(j *job) string {
	if h := j.op.Properties.InternalID; h != "" {
		return h
	}
	return j.res.ClusterServiceID()
}

// dispatch revokes every credential of the cluster and moves the
// operation from Accepted to Deleting, its dispatched marker.
func (h credentialRevoke) dispatch(ctx context.Context, r *run, j *job) (outcome, error) {
	if id := j.res.RevokeCredentialsOperationID(); id != "" && !strings.EqualFold(id, j.op.Name()) {
		j.log.InfoContext(ctx, "cluster names another revocation; not dispatching", "revoke_operation_id", id)
		return outcomeSkipped, nil
	}
	href := revokeTarget(j)
	if href == "" {
		return outcomeSkipped, retryLater("cluster %s is not in clusters service yet", j.res.ResourceID())
	}
	if err := h.e.cs.DeleteBreakGlassCredentials(ctx, href); err != nil {
		underway, readErr := refusedDuringRevocation(ctx, h.e.cs, href, err)
		switch {
		case readErr != nil:
			return outcomeSkipped, readErr
		case !underway:
			return outcomeSkipped, fmt.Errorf("revoking break-glass credentials of %s: %w", href,
				h.e.refusedAbout(ctx, href, err, "break-glass credentials", "revoke"))
		}
		j.log.InfoContext(ctx, "revocation already requested", "reason", err)
	}
	if _, err := r.updateOperationStatus(ctx, j, arm.ProvisioningStateDeleting, nil); err != nil {
		return outcomeSkipped, err
	}
	return outcomeDispatched, nil
}

// poll lists the cluster's credentials: any awaiting
// revocation keeps the operation Deleting, any failed fails it, and once
// all are revoked or expired it succeeds. On a terminal result the
// cluster's revokeCredentialsOperationId is cleared first, so that an
// interrupted run repeats the clear rather than skipping it.
func (h credentialRevoke) poll(ctx context.Context, j *job) (pollResult, error) {
	href := revokeTarget(j)
	creds, err := h.e.cs.ListBreakGlassCredentials(ctx, href)
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
	if err := h.clearRevocation(ctx, j); err != nil {
		return pollResult{}, err
	}
	return polledStates(s), nil
}

// clearRevocation removes the cluster's pointer to this revocation, which
// lets the frontend accept credential requests again.
func (h credentialRevoke) clearRevocation(ctx context.Context, j *job) error {
	res, _, err := h.e.mutateResource(ctx, j, func(r *document.Resource) (bool, error) {
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
