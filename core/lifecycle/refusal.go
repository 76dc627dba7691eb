package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
)

// refusal is a dispatch that can never succeed as asked: Clusters Service
// refused the request itself (a client error), or hcpops's own validation
// did, or this backend cannot do the work. Retrying would only hold the
// operation until its deadline, so it fails at once with body.
type refusal struct {
	body arm.CloudErrorBody
	// cause is the CS error behind it, nil for hcpops's own.
	cause error
}

func (r *refusal) Error() string {
	if r.cause != nil {
		return fmt.Sprintf("%s: %v", r.body.Message, r.cause)
	}
	return r.body.Message
}

func (r *refusal) Unwrap() error { return r.cause }

// invalid is hcpops's own refusal of a value in the resource document;
// field is its path in the ARM resource ("properties.replicas").
func invalid(noun, field string, value any, want string) *refusal {
	return &refusal{body: arm.CloudErrorBody{
		Code:    arm.CodeInvalidRequestContent,
		Target:  field,
		Message: fmt.Sprintf("The %s's %s is %v; %s.", noun, field, value, want),
	}}
}

// refusedBy wraps err as a refusal when Clusters Service answered it with
// a client error: what the call sent can never be accepted. Anything else
// (a 5xx, a timeout, CS busy) is returned as it came and keeps its backoff.
func refusedBy(err error, noun, verb string) error {
	var ce *cs.Error
	if cs.Classify(err) != cs.Refused || !errors.As(err, &ce) {
		return err
	}
	body := arm.CloudErrorBody{
		Code:    arm.CodeInvalidRequestContent,
		Message: fmt.Sprintf("Clusters Service refused to %s the %s: %s", verb, noun, ce.Reason),
	}
	if ce.Code != "" {
		body.Message += fmt.Sprintf(" (%s)", ce.Code)
		body.Details = []arm.CloudErrorBody{{Code: ce.Code, Message: ce.Reason}}
	}
	return &refusal{body: body, cause: err}
}

// failRefused WRITES Failed with the refusal's error, and logs why once.
func (e *Engine) failRefused(ctx context.Context, j *job, r *refusal, t *tally) error {
	j.log.Warn("dispatch refused; operation failed", append(cs.CallAttrs(r.cause), "reason", r.body.Message)...)
	changed, err := e.updateOperationStatus(ctx, j, arm.ProvisioningStateFailed, &r.body, t)
	if changed {
		t.changed.Add(1)
	}
	return err
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

// childNameRE is what Clusters Service accepts as a node pool or external
// auth ID: the lower-cased ARM name.
var childNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// checkChildName refuses an ARM name CS cannot take as the child's ID.
func checkChildName(j *job) error {
	if id := strings.ToLower(j.res.Name()); !childNameRE.MatchString(id) {
		return invalid(j.a.noun, "name", fmt.Sprintf("%q", j.res.Name()),
			"it must be 1 to 63 letters, digits or dashes, starting and ending with a letter or digit")
	}
	return nil
}

// checkNodePool refuses node pool values CS would refuse.
func checkNodePool(spec document.NodePoolSpec) error {
	if spec.Replicas < 0 {
		return invalid("node pool", "properties.replicas", spec.Replicas, "it must not be negative")
	}
	return nil
}

// checkIssuer refuses an external auth issuer CS would refuse.
func checkIssuer(iss document.Issuer) error {
	if iss.URL == "" {
		return invalid("external auth", "properties.issuer.url", `""`, "it is required")
	}
	return nil
}

// checkClusterPatch refuses cluster values CS would refuse.
func checkClusterPatch(res *document.Resource) error {
	if m, ok := res.NodeDrainTimeoutMinutes(); ok && m < 0 {
		return invalid("cluster", "properties.nodeDrainTimeoutMinutes", m, "it must not be negative")
	}
	return nil
}
