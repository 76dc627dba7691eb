package lifecycle

import (
	"context"
	"fmt"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
)

// externalAuthAdapter is the external auth's part of the request handlers.
// CS has no external auth status endpoint; the object carries its status.
func (e *Engine) externalAuthAdapter() *adapter {
	get := func(ctx context.Context, j *job, href string) (observed, error) {
		ea, err := e.cs.GetExternalAuth(ctx, href)
		if err != nil {
			return observed{}, fmt.Errorf("reading external auth %s: %w", href, err)
		}
		r, err := convertExternalAuth(j, href, ea.Status)
		if err != nil {
			return observed{}, err
		}
		matches, err := externalAuthSpecMatches(j.res, ea)
		return observed{pollResult: r, matches: matches}, err
	}
	return &adapter{
		kind: document.KindExternalAuth,
		noun: "external auth",
		create: func(ctx context.Context, j *job) (outcome, error) {
			return e.createChild(ctx, j, cs.ExternalAuthHref, e.postExternalAuth)
		},
		status: func(ctx context.Context, j *job, href string) (pollResult, error) {
			ea, err := e.cs.GetExternalAuth(ctx, href)
			if err != nil {
				return pollResult{}, fmt.Errorf("reading external auth %s: %w", href, err)
			}
			return convertExternalAuth(j, href, ea.Status)
		},
		get: get,
		patch: func(ctx context.Context, j *job, href string) error {
			iss, err := j.res.Issuer()
			if err != nil {
				return fmt.Errorf("%w: %w", errMalformed, err)
			}
			_, err = e.cs.PatchExternalAuth(ctx, href, cs.ExternalAuthSpec{IssuerURL: iss.URL, Audiences: iss.Audiences, IssuerCA: iss.CA})
			return err
		},
		delete:      e.cs.DeleteExternalAuth,
		uncommitted: noUncommitted,
	}
}

// postExternalAuth creates the external auth of j.res under its cluster
// with the caller-chosen id, unless a GET finds it there already.
func (e *Engine) postExternalAuth(ctx context.Context, j *job, clusterHref, id string) error {
	_, err := e.cs.GetExternalAuth(ctx, cs.ExternalAuthHref(clusterHref, id))
	if !cs.IsNotFound(err) {
		return err
	}
	iss, err := j.res.Issuer()
	if err != nil {
		return fmt.Errorf("%w: %w", errMalformed, err)
	}
	_, err = e.cs.PostExternalAuth(ctx, clusterHref, cs.ExternalAuthSpec{
		ID: id, IssuerURL: iss.URL, Audiences: iss.Audiences, IssuerCA: iss.CA,
	})
	return err
}

// externalAuthSpecMatches reports whether CS carries the issuer an update
// sends.
func externalAuthSpecMatches(res *document.Resource, ea cs.ExternalAuth) (bool, error) {
	iss, err := res.Issuer()
	if err != nil {
		return false, fmt.Errorf("%w: %w", errMalformed, err)
	}
	return ea.IssuerURL == iss.URL && sameSet(ea.Audiences, iss.Audiences), nil
}

func convertExternalAuth(j *job, href string, st cs.ExternalAuthStatus) (pollResult, error) {
	s, cerr, err := state.ConvertExternalAuthStatus(st, j.op.Properties.Request, j.op.Properties.Status)
	if err != nil {
		return pollResult{}, fmt.Errorf("converting status of external auth %s: %w", href, err)
	}
	return pollResult{status: s, err: cerr}, nil
}
