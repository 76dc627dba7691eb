package lifecycle

import (
	"context"
	"fmt"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/state"
)

// dispatchExternalAuthUpdate PATCHes the issuer (url, audiences, CA).
func (e *Engine) dispatchExternalAuthUpdate(ctx context.Context, j *job) (outcome, error) {
	href, err := e.updateTarget(ctx, j)
	if href == "" {
		return outcomeSkipped, err
	}
	iss, err := j.res.Issuer()
	if err != nil {
		return outcomeSkipped, fmt.Errorf("%w: %w", errMalformed, err)
	}
	patch := cs.ExternalAuthSpec{IssuerURL: iss.URL, Audiences: iss.Audiences, IssuerCA: iss.CA}
	if _, err := e.cs.PatchExternalAuth(ctx, href, patch); err != nil {
		if refused(err, "can only be updated", "state") {
			return outcomeDeferred, fmt.Errorf("%w: %w", errRetryLater, err)
		}
		return outcomeSkipped, fmt.Errorf("updating external auth %s: %w", href, err)
	}
	return e.recordInternalID(ctx, j, href)
}

// pollExternalAuthCreate: CS has no external auth status endpoint; the
// object carries its status.
func (e *Engine) pollExternalAuthCreate(ctx context.Context, j *job) (pollResult, error) {
	href := j.res.ClusterServiceID()
	ea, err := e.cs.GetExternalAuth(ctx, href)
	if err != nil {
		return pollResult{}, fmt.Errorf("reading external auth %s: %w", href, err)
	}
	return convertExternalAuth(j, href, ea.Status)
}

// pollExternalAuthUpdate is Updating until CS carries the issuer the
// update asked for.
func (e *Engine) pollExternalAuthUpdate(ctx context.Context, j *job) (pollResult, error) {
	href := j.op.Properties.InternalID
	ea, err := e.cs.GetExternalAuth(ctx, href)
	if err != nil {
		return pollResult{}, fmt.Errorf("reading external auth %s: %w", href, err)
	}
	r, err := convertExternalAuth(j, href, ea.Status)
	if err != nil || r.status != arm.ProvisioningStateSucceeded {
		return r, err
	}
	iss, err := j.res.Issuer()
	if err != nil {
		return pollResult{}, fmt.Errorf("%w: %w", errMalformed, err)
	}
	if ea.IssuerURL != iss.URL || !sameSet(ea.Audiences, iss.Audiences) {
		r.status = arm.ProvisioningStateUpdating
	}
	return r, nil
}

func convertExternalAuth(j *job, href string, st cs.ExternalAuthStatus) (pollResult, error) {
	s, cerr, err := state.ConvertExternalAuthStatus(st, j.op.Properties.Request, j.op.Properties.Status)
	if err != nil {
		return pollResult{}, fmt.Errorf("converting status of external auth %s: %w", href, err)
	}
	return pollResult{status: s, err: cerr}, nil
}
