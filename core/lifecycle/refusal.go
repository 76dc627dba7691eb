package lifecycle

import (
	"context"
	"errors"
	"fmt"
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

// conflict is the refusal of a create whose name CS holds for another
// object: CS's own 409 (cause), checked against what CS has at the ID
// hcpops chose. The customer must pick another name or delete the other.
func conflict(noun, name, why string, cause error) *refusal {
	return &refusal{body: arm.CloudErrorBody{
		Code:   arm.CodeConflict,
		Target: "name",
		Message: fmt.Sprintf("Clusters Service refused to create the %s: the name %q is in use by another object (%s).",
			noun, name, why),
	}, cause: cause}
}

// failRefused WRITES Failed with the refusal's error, and logs why once.
func (r *run) failRefused(ctx context.Context, j *job, why *refusal) error {
	j.log.WarnContext(ctx, "dispatch refused; operation failed", append(cs.CallAttrs(why.cause), "reason", why.body.Message)...)
	_, err := r.updateOperationStatus(ctx, j, arm.ProvisioningStateFailed, &why.body)
	return err
}

// checkChildName refuses an ARM name CS cannot take as the child's ID
// (the lower-cased name).
func checkChildName(noun string, res *document.Resource) error {
	if id := strings.ToLower(res.Name()); !cs.ValidChildID(id) {
		return invalid(noun, "name", fmt.Sprintf("%q", res.Name()),
			"it must be 1 to 63 letters, digits or dashes, starting and ending with a letter or digit")
	}
	return nil
}
