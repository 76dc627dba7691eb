// Package operationrequest is the request ARM sends to read an operation,
// GET .../locations/{location}/{type}/{operationId}, as the operationStatus
// and operationResults functions share it: read from the forwarded
// request, its path checked and its caller admitted by ARO-HCP's gates
// before either function reads anything. One copy keeps the
// identity-header rule the same for both.
package operationrequest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/hcpops/hcpops/core/admission"
	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/armread"
	"github.com/hcpops/hcpops/core/document"
)

// Headers ARM sets with the caller's identity; the visibility rules use them.
const (
	HeaderHomeTenantID   = "X-Ms-Home-Tenant-Id"
	HeaderClientObjectID = "X-Ms-Client-Object-Id"
)

// APIVersionParameter is the query parameter ARM sends on every request.
const APIVersionParameter = "api-version"

// ARM error codes for a malformed path.
const (
	CodeInvalidSubscriptionID = "InvalidSubscriptionId"
	CodeInvalidResourceName   = "InvalidResourceName"
)

// Request is what an answer depends on, from either form.
type Request struct {
	SubscriptionID, Location, OperationID string
	APIVersion                            string
	// APIVersions is how many times api-version was given; ARM sends it
	// once, and more than once is refused rather than answered by a pick.
	APIVersions                  int
	HomeTenantID, ClientObjectID string
	// IdentityConflict: an identity header came with disagreeing (or
	// unreadable) values, so the caller cannot be told apart and sees
	// nothing.
	IdentityConflict bool
	Referer, Host    string
}

// StatusRequest is the read service's view of the request.
func (r Request) StatusRequest() armread.StatusRequest {
	return armread.StatusRequest{
		SubscriptionID: r.SubscriptionID, Location: r.Location, OperationName: r.OperationID,
		HomeTenantID: r.HomeTenantID, ClientObjectID: r.ClientObjectID, APIVersion: r.APIVersion,
	}
}

// fromHTTP reads a forwarded request routed by ChiPattern.
func fromHTTP(r *http.Request) Request {
	tenant, c1 := oneValue(r.Header.Values(HeaderHomeTenantID))
	client, c2 := oneValue(r.Header.Values(HeaderClientObjectID))
	return Request{
		SubscriptionID: chi.URLParam(r, "subscriptionId"),
		Location:       chi.URLParam(r, "location"),
		OperationID:    chi.URLParam(r, "operationId"),
		APIVersion:     r.URL.Query().Get(APIVersionParameter),
		APIVersions:    len(r.URL.Query()[APIVersionParameter]),
		HomeTenantID:   tenant, ClientObjectID: client,
		IdentityConflict: c1 || c2,
		Referer:          r.Referer(),
		Host:             r.Host,
	}
}

// oneValue is the single value of a header sent zero or more times;
// values that differ (tenant and object IDs compare case-insensitively)
// are a conflict, never a pick.
func oneValue(vals []string) (value string, conflict bool) {
	for _, v := range vals {
		if !strings.EqualFold(v, vals[0]) {
			return "", true
		}
	}
	if len(vals) == 0 {
		return "", false
	}
	return vals[0], false
}

// Gate checks the path and runs ARO-HCP's api-version and subscription
// gates, as its middleware does before any handler. On success req holds
// canonical IDs and the home tenant the gate settled (an empty header is
// filled from the subscription); otherwise the Answer is the reply. A
// request with an identity conflict passes the gate: the caller decides
// how "not visible" reads for its endpoint.
func Gate(ctx context.Context, a Admitter, logger *slog.Logger, req Request) (Request, Answer, bool) {
	if req.APIVersions > 1 {
		return req, ARMError(http.StatusBadRequest, arm.CodeInvalidParameter, APIVersionParameter,
			fmt.Sprintf("The query parameter '%s' was given %d times; give it once.", APIVersionParameter, req.APIVersions)), false
	}
	badSubscription := ARMError(http.StatusBadRequest, CodeInvalidSubscriptionID, "subscriptionId",
		fmt.Sprintf("The subscription id '%s' in the path is not a valid UUID.", req.SubscriptionID))
	if req.SubscriptionID == "" && req.OperationID != "" {
		// An operation path without its subscription: ARO-HCP's gates
		// answer that before any handler reads the rest of the path.
		if _, err := a.Admit(ctx, armread.AdmitRequest{Method: http.MethodGet, APIVersion: req.APIVersion}); err != nil {
			return req, admitAnswer(ctx, logger, req, err), false
		}
		return req, badSubscription, false
	}
	sub, ok := document.CanonicalUUID(req.SubscriptionID)
	if !ok {
		return req, badSubscription, false
	}
	op, ok := document.CanonicalUUID(req.OperationID)
	if !ok {
		return req, ARMError(http.StatusBadRequest, CodeInvalidResourceName, "operationId",
			fmt.Sprintf("The operation id '%s' in the path is not a valid UUID.", req.OperationID)), false
	}
	if req.Location == "" {
		return req, ARMError(http.StatusBadRequest, arm.CodeInvalidRequestContent, "location", "The location in the path is empty."), false
	}
	req.SubscriptionID, req.OperationID = sub, op
	tenant, err := a.Admit(ctx, armread.AdmitRequest{
		Method: http.MethodGet, SubscriptionID: sub, APIVersion: req.APIVersion, HomeTenantID: req.HomeTenantID,
	})
	if err != nil {
		return req, admitAnswer(ctx, logger, req, err), false
	}
	if req.IdentityConflict {
		logger.InfoContext(ctx, "operation hidden: conflicting identity headers", "operation_id", op, "subscription_id", sub)
	}
	req.HomeTenantID = tenant
	return req, Answer{}, true
}

// admitAnswer is the reply to a request the gates refused (err wraps a
// *admission.Rejection) or could not judge (logged, 500).
func admitAnswer(ctx context.Context, logger *slog.Logger, req Request, err error) Answer {
	var rej *admission.Rejection
	if errors.As(err, &rej) {
		return ARMError(rej.Status, rej.Code, rej.Target, rej.Message)
	}
	logger.ErrorContext(ctx, "admitting an operation request", "operation_id", req.OperationID, "subscription", req.SubscriptionID, "error", err)
	return InternalError()
}

// Admitter is the read service's request gate (*armread.ReadService satisfies it).
type Admitter interface {
	Admit(ctx context.Context, req armread.AdmitRequest) (string, error)
}
