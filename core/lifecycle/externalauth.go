package lifecycle

import (
	"context"
	"fmt"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
)

// externalAuthAdapter is the external auth's part of the request handlers.
// CS has no external auth status endpoint; the object carries its status,
// and often none at all: so, as upstream, a create is done once the object
// exists and an update once CS carries its spec. A state CS does state is
// still heeded: "error" fails the operation.
func (e *Engine) externalAuthAdapter() *adapter {
	read := func(ctx context.Context, j *job, href string) (cs.ExternalAuth, error) {
		ea, err := j.reads.externalAuth(ctx, href)
		if err != nil {
			return cs.ExternalAuth{}, fmt.Errorf("reading external auth %s: %w", href, err)
		}
		return ea, nil
	}
	return &adapter{
		kind: document.KindExternalAuth,
		noun: "external auth",
		create: func(ctx context.Context, j *job) (outcome, error) {
			return e.createChild(ctx, j, e.postExternalAuth)
		},
		status: func(ctx context.Context, j *job, href string) (*state.OperationState, error) {
			ea, err := read(ctx, j, href)
			if err != nil {
				return nil, err
			}
			if ea.Status.State == "" { // no word from CS: the delete goes on
				return state.NewOperationState(j.op.Properties.Status, "clusters service reports no state").
					WithSource("clusterServiceExternalAuthStatus"), nil
			}
			return convertExternalAuth(j, href, ea.Status)
		},
		created: func(ctx context.Context, j *job, href string) (*state.OperationState, error) {
			ea, err := read(ctx, j, href)
			if err != nil {
				return nil, err
			}
			return externalAuthExists(ea).WithSource("externalAuthClusterServiceCreate"), nil
		},
		get: func(ctx context.Context, j *job, href string) ([]*state.OperationState, error) {
			ea, err := read(ctx, j, href)
			if err != nil {
				return nil, err
			}
			differs, err := externalAuthSpecDiffers(j.res, ea)
			if err != nil {
				return nil, err
			}
			return []*state.OperationState{externalAuthExists(ea).WithSource("clusterServiceExternalAuthStatus"),
				specState("clusterServiceExternalAuthSpec", differs)}, nil
		},
		patch: func(ctx context.Context, j *job, href string) error {
			iss, err := j.res.Issuer()
			if err != nil {
				return fmt.Errorf("%w: %w", errMalformed, err)
			}
			if err := checkIssuer(iss); err != nil {
				return err
			}
			_, err = e.cs.PatchExternalAuth(ctx, href, cs.ExternalAuthSpec{IssuerURL: iss.URL, Audiences: iss.Audiences, IssuerCA: iss.CA})
			return err
		},
		delete:      e.cs.DeleteExternalAuth,
		uncommitted: noUncommitted,
		childHref:   cs.ExternalAuthHref,
	}
}

// externalAuthExists is the state of an external auth CS returned: Failed
// when CS says it is in error, Succeeded otherwise (upstream's create
// controller reads no state at all).
func externalAuthExists(ea cs.ExternalAuth) *state.OperationState {
	if ea.Status.State == cs.ExternalAuthStateError {
		return state.FromConversion(arm.ProvisioningStateFailed,
			&arm.CloudErrorBody{Code: arm.CodeInternalServerError, Message: ea.Status.Message})
	}
	return state.NewOperationState(arm.ProvisioningStateSucceeded, "")
}

// postExternalAuth creates the external auth of j.res under its cluster
// with the caller-chosen id, unless a GET finds it there already.
func (e *Engine) postExternalAuth(ctx context.Context, j *job, clusterHref, id string) error {
	iss, err := j.res.Issuer()
	if err != nil {
		return fmt.Errorf("%w: %w", errMalformed, err)
	}
	if err := checkIssuer(iss); err != nil {
		return err // CS can never have accepted it, so there is nothing to adopt
	}
	_, err = e.cs.GetExternalAuth(ctx, cs.ExternalAuthHref(clusterHref, id))
	if cs.Classify(err) != cs.Absent {
		return err
	}
	_, err = e.cs.PostExternalAuth(ctx, clusterHref, cs.ExternalAuthSpec{
		ID: id, IssuerURL: iss.URL, Audiences: iss.Audiences, IssuerCA: iss.CA,
	})
	return err
}

// externalAuthSpecDiffers says which part of the issuer an update sends
// CS does not carry yet ("" when it carries it all).
func externalAuthSpecDiffers(res *document.Resource, ea cs.ExternalAuth) (string, error) {
	iss, err := res.Issuer()
	if err != nil {
		return "", fmt.Errorf("%w: %w", errMalformed, err)
	}
	switch {
	case ea.IssuerURL != iss.URL:
		return fmt.Sprintf("cluster service external auth issuer url is %q, want %q", ea.IssuerURL, iss.URL), nil
	case !sameSet(ea.Audiences, iss.Audiences):
		return fmt.Sprintf("cluster service external auth audiences are %v, want %v", ea.Audiences, iss.Audiences), nil
	}
	return "", nil
}

func convertExternalAuth(j *job, href string, st cs.ExternalAuthStatus) (*state.OperationState, error) {
	s, cerr, err := state.ConvertExternalAuthStatus(st, j.op.Properties.Request, j.op.Properties.Status)
	if err != nil {
		return nil, fmt.Errorf("converting status of external auth %s: %w", href, err)
	}
	return state.FromConversion(s, cerr).WithSource("clusterServiceExternalAuthStatus"), nil
}
