package lifecycle

import (
	"context"
	"fmt"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
)

// externalAuth is the external auth kind: a child of its cluster in CS, at
// {cluster href}/external_auth_config/external_auths/{lower-cased ARM
// name}. CS has no external auth status endpoint; the object carries its
// status, and often none at all: so, as upstream, a create is done once
// the object exists and an update once CS carries its spec. A state CS
// does state is still heeded: "error" fails the operation.
type externalAuth struct{ cs cs.Client }

func (externalAuth) noun() string { return "external auth" }

func (externalAuth) href(clusterHref, id string) string { return cs.ExternalAuthHref(clusterHref, id) }

func (externalAuth) read(ctx context.Context, j *job, href string) (cs.ExternalAuth, error) {
	ea, err := j.reads.externalAuth(ctx, href)
	if err != nil {
		return cs.ExternalAuth{}, fmt.Errorf("reading external auth %s: %w", href, err)
	}
	return ea, nil
}

func (k externalAuth) status(ctx context.Context, j *job, href string) (*state.OperationState, error) {
	ea, err := k.read(ctx, j, href)
	if err != nil {
		return nil, err
	}
	if ea.Status.State == "" { // no word from CS: the delete goes on
		return state.NewOperationState(j.op.Properties.Status, "clusters service reports no state").
			WithSource("clusterServiceExternalAuthStatus"), nil
	}
	j.alive = ea.Status.State == cs.ExternalAuthStateReady
	s, cerr, err := state.ConvertExternalAuthStatus(ea.Status, j.op.Properties.Request, j.op.Properties.Status)
	if err != nil {
		return nil, fmt.Errorf("converting status of external auth %s: %w", href, err)
	}
	return state.FromConversion(s, cerr).WithSource("clusterServiceExternalAuthStatus").
		Working(underWay(j.op.Properties.Request, ea.Status.State)), nil
}

func (k externalAuth) spec(ctx context.Context, j *job, href string) ([]*state.OperationState, error) {
	ea, err := k.read(ctx, j, href)
	if err != nil {
		return nil, err
	}
	differs, err := externalAuthSpecDiffers(j.res, ea)
	if err != nil {
		return nil, err
	}
	return []*state.OperationState{externalAuthExists(ea).WithSource("clusterServiceExternalAuthStatus"),
		specState("clusterServiceExternalAuthSpec", differs)}, nil
}

func (k externalAuth) patch(ctx context.Context, j *job, href string) error {
	iss, err := issuer(j.res)
	if err != nil {
		return err
	}
	_, err = k.cs.PatchExternalAuth(ctx, href, cs.ExternalAuthSpec{IssuerURL: iss.URL, Audiences: iss.Audiences, IssuerCA: iss.CA})
	return err
}

func (k externalAuth) post(ctx context.Context, j *job, clusterHref, id string) error {
	iss, err := issuer(j.res)
	if err != nil {
		return err // CS can never have accepted it, so there is nothing to adopt
	}
	_, err = k.cs.GetExternalAuth(ctx, cs.ExternalAuthHref(clusterHref, id))
	if cs.Classify(err) != cs.Absent {
		return err
	}
	_, err = k.cs.PostExternalAuth(ctx, clusterHref, cs.ExternalAuthSpec{
		ID: id, IssuerURL: iss.URL, Audiences: iss.Audiences, IssuerCA: iss.CA,
	})
	return err
}

func (k externalAuth) remove(ctx context.Context, href string) error {
	return k.cs.DeleteExternalAuth(ctx, href)
}

// issuer is the issuer j.res asks for, refused when CS would refuse it.
func issuer(res *document.Resource) (document.Issuer, error) {
	iss, err := res.Issuer()
	if err != nil {
		return iss, fmt.Errorf("%w: %w", errMalformed, err)
	}
	if iss.URL == "" {
		return iss, invalid("external auth", "properties.issuer.url", `""`, "it is required")
	}
	return iss, nil
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
