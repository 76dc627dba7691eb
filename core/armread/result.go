package armread

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
)

var (
	// ErrResultGone: the operation succeeded but what it produced (the
	// resource, the credential) no longer exists; ARM gets a 404.
	ErrResultGone = errors.New("operation result no longer exists")
	// ErrResultUnsupported: the operation's result is served by a part of
	// ARO-HCP that hcpops does not replace.
	ErrResultUnsupported = errors.New("operation result not served by hcpops")
)

// Result is what ARM's Location poll of an operation gets, before it is
// rendered as HTTP: the status decides between "poll again", "failed" and
// the success answer for the request kind.
type Result struct {
	Status  arm.ProvisioningState
	Request document.Request
	// OperationID is the location-qualified operation ID; the Location
	// header of a "poll again" answer is built from it.
	OperationID string
	// Body is the success body: the resource for Create and Update, the
	// credential for RequestCredential; nil otherwise. A credential body
	// holds a secret: hand it to ARM and nowhere else.
	Body []byte
	// Error is the operation's own error once it failed or was canceled
	// (never nil then: see document.ToStatus).
	Error *arm.CloudErrorBody
	// RetryAfter is how long ARM should wait before it asks again while
	// the operation runs; zero once it is terminal.
	RetryAfter time.Duration
}

// String leaves the body out: it may hold a kubeconfig.
func (r Result) String() string {
	return fmt.Sprintf("status=%s request=%s operation=%s body_bytes=%d", r.Status, r.Request, r.OperationID, len(r.Body))
}

// GoString is String, for %#v.
func (r Result) GoString() string { return r.String() }

// LogValue keeps the body out of slog lines.
func (r Result) LogValue() slog.Value {
	return slog.GroupValue(slog.String("status", string(r.Status)), slog.String("request", string(r.Request)),
		slog.String("operation", r.OperationID), slog.Int("body_bytes", len(r.Body)))
}

// Result is ARM's Location poll of an operation: it reads the operation
// as Status does (same visibility rules) and, once it has succeeded, what
// it produced: the resource as stored now, or a break-glass credential
// read live from Clusters Service, never stored. Errors:
// ErrOperationNotFound, ErrOperationNotVisible, ErrResultGone,
// ErrResultUnsupported, or a failure to read.
func (r *ReadService) Result(ctx context.Context, req StatusRequest) (Result, error) {
	op, err := r.visibleOperation(ctx, req)
	if err != nil {
		return Result{}, err
	}
	p := &op.Properties
	res := Result{Status: p.Status, Request: p.Request, OperationID: p.OperationID, RetryAfter: r.retryAfter(op)}
	if p.Status != arm.ProvisioningStateSucceeded {
		res.Error = op.ToStatus().Error
		return res, nil
	}
	switch p.Request {
	case document.RequestDelete, document.RequestRevokeCredentials:
		return res, nil
	case document.RequestRequestCredential:
		res.Body, err = r.credentialResult(ctx, op)
	case document.RequestCreate, document.RequestUpdate:
		res.Body, err = r.resourceResult(ctx, op, req.APIVersion)
	default:
		err = fmt.Errorf("operation %s: %w: request %q has no result", op.Name(), errMalformed, p.Request)
	}
	return res, err
}

// visibleOperation reads the operation named in req, or says why ARM may
// not see it (ErrOperationNotFound, ErrOperationNotVisible).
func (r *ReadService) visibleOperation(ctx context.Context, req StatusRequest) (*document.OperationDocument, error) {
	sub, ok := document.CanonicalUUID(req.SubscriptionID)
	if !ok {
		return nil, fmt.Errorf("%w: subscription %q is not a subscription ID", ErrOperationNotFound, req.SubscriptionID)
	}
	name, ok := document.CanonicalUUID(req.OperationName)
	if !ok {
		return nil, fmt.Errorf("%w: operation name %q is not a UUID", ErrOperationNotFound, req.OperationName)
	}
	req.SubscriptionID, req.OperationName = sub, name
	id := document.CosmosID(document.OperationResourceID(req.SubscriptionID, req.OperationName))
	op, err := read(ctx, r, document.PartitionKey(req.SubscriptionID), id, document.ParseOperation)
	if err != nil {
		return nil, fmt.Errorf("reading operation %s: %w", req.OperationName, err)
	}
	if op == nil {
		return nil, fmt.Errorf("%w: %s in subscription %s", ErrOperationNotFound, req.OperationName, req.SubscriptionID)
	}
	if why := invisible(op, req); why != "" {
		r.log.InfoContext(ctx, "operation hidden from caller", "operation_id", req.OperationName, "reason", why)
		return nil, fmt.Errorf("%w: %s", ErrOperationNotVisible, why)
	}
	return op, nil
}

// resourceResult renders the target resource as it is stored now, with
// the ID ARM asked about (the operation's externalId), as the request's
// api-version shows it.
func (r *ReadService) resourceResult(ctx context.Context, op *document.OperationDocument, apiVersion string) ([]byte, error) {
	ext := op.Properties.ExternalID
	res, err := read(ctx, r, op.PartitionKey, document.CosmosID(ext), document.ParseResource)
	if err != nil {
		return nil, fmt.Errorf("result of operation %s: reading resource %s: %w", op.Name(), ext, err)
	}
	if res == nil {
		return nil, fmt.Errorf("%w: resource %s of operation %s", ErrResultGone, op.Properties.ExternalID, op.Name())
	}
	body, err := res.ARMBodyAt(op.Properties.ExternalID, apiVersion)
	if err != nil {
		return nil, fmt.Errorf("result of operation %s: %w", op.Name(), err)
	}
	return body, nil
}

// credentialResult reads the break-glass credential the operation's
// internalId names from Clusters Service, as ARO-HCP does for api-versions
// before 2026-09-01-preview. The kubeconfig goes to ARM only: it is never
// written to the store, and no log line or error carries it.
func (r *ReadService) credentialResult(ctx context.Context, op *document.OperationDocument) ([]byte, error) {
	p := &op.Properties
	if p.SystemAdminCredentialRequest != nil {
		return nil, fmt.Errorf("%w: operation %s is a certificate-signing credential request (api-version 2026-09-01-preview or later), "+
			"whose credential ARO-HCP's frontend assembles from its own Cosmos documents", ErrResultUnsupported, op.Name())
	}
	if !strings.Contains(p.InternalID, cs.BreakGlassSegment) {
		return nil, fmt.Errorf("operation %s: %w: internalId %q is not a break-glass credential href", op.Name(), errMalformed, p.InternalID)
	}
	cred, err := r.cs.GetBreakGlassCredential(ctx, p.InternalID)
	if cs.Classify(err) == cs.Absent {
		return nil, fmt.Errorf("%w: break-glass credential %s of operation %s", ErrResultGone, p.InternalID, op.Name())
	}
	if err != nil {
		return nil, fmt.Errorf("reading break-glass credential %s of operation %s: %w", p.InternalID, op.Name(), credentialCause(err))
	}
	if cred.Kubeconfig == "" {
		// ARO-HCP hands out what CS returns; say why it is empty.
		r.log.WarnContext(ctx, "credential result has no kubeconfig", "operation_id", op.Name(),
			"credential_href", p.InternalID, "credential_status", cred.Status)
	}
	body, err := json.MarshalIndent(arm.AdminCredential{ExpirationTimestamp: cred.Expires.UTC(), Kubeconfig: cred.Kubeconfig}, "", "    ")
	if err != nil {
		return nil, fmt.Errorf("rendering the credential of operation %s: %w", op.Name(), err)
	}
	return body, nil
}

// credentialCause is err when what it says cannot hold the bytes of the
// answer (a kubeconfig): a CS error status, an answer the client
// described without quoting it, a transport failure or a deadline. Any
// other error, such as a decoder's that quotes the input around a fault,
// is replaced by a fixed description of its type.
func credentialCause(err error) error {
	var status *cs.Error
	var unreadable *cs.UnreadableError
	var transport net.Error
	switch {
	case errors.As(err, &unreadable), errors.As(err, &status), errors.As(err, &transport),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return err
	}
	return fmt.Errorf("the clusters service client failed with a %T, whose message is not shown: it may quote the credential", err)
}
