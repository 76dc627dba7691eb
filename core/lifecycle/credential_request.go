package lifecycle

import (
	"context"
	"fmt"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
)

// Break-glass credential operations target the cluster but never own its
// activeOperationId, so their status writes leave the cluster alone.

// credentialRequest asks CS for a break-glass credential and records its
// href as the operation's internalId, the marker that it was requested. A
// certificate-signing request is never dispatched as break-glass (an
// earlier hcpops did so): its dispatch refuses it.
type credentialRequest struct{ e *Engine }

func (credentialRequest) dispatched(j *job) bool {
	return j.op.Properties.InternalID != "" && j.op.Properties.SystemAdminCredentialRequest == nil
}

func (credentialRequest) failure() (string, state.FailureMessage) {
	return arm.CodeInternalServerError, state.Bare
}

// dispatch asks for the credential. A revocation in progress cancels the
// request, as ARO-HCP does. If recording the href fails, a retry creates
// a second credential; the first is never handed out and expires
// (ARO-HCP accepts the same).
func (h credentialRequest) dispatch(ctx context.Context, r *run, j *job) (outcome, error) {
	if j.op.Properties.SystemAdminCredentialRequest != nil {
		return outcomeSkipped, csrUnsupported()
	}
	if id := j.res.RevokeCredentialsOperationID(); id != "" {
		j.log.InfoContext(ctx, "a credential revocation is running; canceling the request", "revoke_operation_id", id)
		changed, err := r.updateOperationStatus(ctx, j, arm.ProvisioningStateCanceled, supersededError())
		if changed {
			r.count.canceled.Add(1)
		}
		return outcomeSkipped, err
	}
	clusterHref := j.res.ClusterServiceID()
	if clusterHref == "" {
		return outcomeSkipped, retryLater("cluster %s is not in clusters service yet", j.res.ResourceID())
	}
	cred, err := h.e.cs.PostBreakGlassCredential(ctx, clusterHref)
	if err != nil {
		return outcomeSkipped, fmt.Errorf("requesting a break-glass credential of %s: %w", clusterHref,
			h.e.refusedAbout(ctx, clusterHref, err, "break-glass credential", "create"))
	}
	if cred.Href == "" {
		return outcomeSkipped, fmt.Errorf("requesting a break-glass credential of %s: clusters service returned no href", clusterHref)
	}
	return h.recordInternalID(ctx, j, cred.Href)
}

func (h credentialRequest) poll(ctx context.Context, j *job) (pollResult, error) {
	href := j.op.Properties.InternalID
	cred, err := h.e.cs.GetBreakGlassCredential(ctx, href)
	if err != nil {
		return pollResult{}, fmt.Errorf("reading break-glass credential %s: %w", href, err)
	}
	s, cerr, err := state.ConvertCredentialStatus(cred.Status, j.op.Properties.Status)
	if err != nil {
		return pollResult{}, fmt.Errorf("converting break-glass credential %s: %w", href, err)
	}
	return polledStates(state.FromConversion(s, cerr).WithSource("clusterServiceBreakGlassCredential")), nil
}

// recordInternalID stores href as the operation's internalId (the one
// place ARO-HCP's backend writes an internalId).
func (h credentialRequest) recordInternalID(ctx context.Context, j *job, href string) (outcome, error) {
	op, _, err := h.e.mutateOperation(ctx, j.log, j.op, func(o *document.OperationDocument) (bool, error) {
		if o.Properties.InternalID != "" || o.Properties.Status.IsTerminal() {
			return false, nil
		}
		o.Properties.InternalID = href
		return true, nil
	})
	if err != nil {
		return outcomeSkipped, fmt.Errorf("recording internal ID %s: %w", href, err)
	}
	if op != nil {
		j.op = op
	}
	return outcomeDispatched, nil
}

// csrUnsupported is the refusal of a certificate-signing credential request.
// Upstream's frontend (api-version 2026-09-01-preview and later) stores the
// customer's CSR and its backend has the management cluster's signer issue
// the certificate, recording a SystemAdminCredentialRequest document the
// results endpoint reads. Clusters Service's break-glass API (ocm-sdk-go
// v0.1.509 / ocm-api-model v0.0.464) takes no CSR: it mints a key and a
// kubeconfig of its own. Answering with that would hand out a credential
// nobody asked for, so the request fails.
func csrUnsupported() *refusal {
	return &refusal{body: arm.CloudErrorBody{
		Code:   arm.CodeInvalidRequestContent,
		Target: "systemAdminCredentialRequest.certificateSigningRequest",
		Message: "Certificate-signing credential requests need the management-cluster signer and are not " +
			"supported by this backend; request a break-glass credential with an api-version before 2026-09-01-preview.",
	}}
}
