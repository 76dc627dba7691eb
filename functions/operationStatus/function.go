// Package operationstatus is the operationStatus function: ARM's GET on
// .../locations/{location}/hcpOperationStatuses/{operationId}. The host
// forwards the request as is (enableForwardingHttpRequest); with forwarding
// off it arrives as an invocation envelope and is answered through
// Outputs.res. Both forms share one answer.
package operationstatus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/hcpops/hcpops/core/admission"
	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/handlers"
)

// Name is the function's folder name.
const Name = "operationStatus"

// Route is the function.json route: ARM's own path (host.json sets the
// route prefix to "").
const Route = "subscriptions/{subscriptionId}/providers/" + arm.ProviderNamespace +
	"/locations/{location}/" + arm.OperationStatusesType + "/{operationId}"

// Headers ARM sets with the caller's identity; the visibility rules use them.
const (
	HeaderHomeTenantID   = "X-Ms-Home-Tenant-Id"
	HeaderClientObjectID = "X-Ms-Client-Object-Id"
)

// ARM error codes for a malformed path.
const (
	CodeInvalidSubscriptionID = "InvalidSubscriptionId"
	CodeInvalidResourceName   = "InvalidResourceName"
)

// StatusReader is the part of the lifecycle this function calls
// (*lifecycle.Engine satisfies it): the request gates, then the read.
type StatusReader interface {
	Admit(ctx context.Context, req lifecycle.AdmitRequest) (string, error)
	Status(ctx context.Context, req lifecycle.StatusRequest) (arm.OperationStatus, error)
}

// APIVersionParameter is the query parameter ARM sends on every request.
const APIVersionParameter = "api-version"

// Function answers operation-status reads.
type Function struct {
	reader StatusReader
	logger *slog.Logger
}

// New builds the function; logger may be nil.
func New(r StatusReader, logger *slog.Logger) *Function {
	return &Function{reader: r, logger: handlers.Logger(logger)}
}

// Register serves the forwarded route and the envelope form (POST /operationStatus).
func (f *Function) Register(s *handlers.Server) error {
	if err := s.Route(Name, http.MethodGet, chiPattern(), f); err != nil {
		return fmt.Errorf("registering %s: %w", Name, err)
	}
	if err := s.Handle(Name, f.Invoke); err != nil {
		return fmt.Errorf("registering %s: %w", Name, err)
	}
	return nil
}

// chiPattern is Route for chi, with the fixed words matched regardless of
// case: ARM paths are case-insensitive and the host's router is too.
func chiPattern() string {
	word := func(param, w string) string {
		return "{" + param + ":(?i)" + strings.ReplaceAll(w, ".", `\.`) + "}"
	}
	return "/" + word("s", "subscriptions") + "/{subscriptionId}/" + word("p", "providers") + "/" +
		word("ns", arm.ProviderNamespace) + "/" + word("l", "locations") + "/{location}/" +
		word("t", arm.OperationStatusesType) + "/{operationId}"
}

// ServeHTTP answers a forwarded request.
func (f *Function) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ans := f.answer(r.Context(), lifecycle.StatusRequest{
		SubscriptionID: chi.URLParam(r, "subscriptionId"),
		Location:       chi.URLParam(r, "location"),
		OperationName:  chi.URLParam(r, "operationId"),
	}, func(name string) (string, bool) { return oneValue(r.Header.Values(name)) }, r.URL.Query().Get(APIVersionParameter))
	if ans.body != nil {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(ans.status)
	_, _ = w.Write(ans.body)
}

// answer is the HTTP response for a status read; a nil body means none.
type answer struct {
	status int
	body   []byte
}

// headerFunc reads one identity header; false means its values conflict.
type headerFunc func(name string) (string, bool)

// oneValue is the single value of a header sent zero or more times; values
// that differ (tenant and object IDs compare case-insensitively) are no
// value at all.
func oneValue(vals []string) (string, bool) {
	for _, v := range vals {
		if !strings.EqualFold(v, vals[0]) {
			return "", false
		}
	}
	if len(vals) == 0 {
		return "", true
	}
	return vals[0], true
}

// answer renders a status read behind ARO-HCP's request gates. The
// caller's identity comes from header; a conflicting identity header hides
// the operation, like any mismatch.
func (f *Function) answer(ctx context.Context, req lifecycle.StatusRequest, header headerFunc, apiVersion string) answer {
	sub, ok := document.CanonicalUUID(req.SubscriptionID)
	if !ok {
		return armError(http.StatusBadRequest, CodeInvalidSubscriptionID, "subscriptionId",
			fmt.Sprintf("The subscription id '%s' in the path is not a valid UUID.", req.SubscriptionID))
	}
	op, ok := document.CanonicalUUID(req.OperationName)
	if !ok {
		return armError(http.StatusBadRequest, CodeInvalidResourceName, "operationId",
			fmt.Sprintf("The operation id '%s' in the path is not a valid UUID.", req.OperationName))
	}
	if req.Location == "" {
		return armError(http.StatusBadRequest, arm.CodeInvalidRequestContent, "location", "The location in the path is empty.")
	}
	req.SubscriptionID, req.OperationName = sub, op
	tenantOK, clientOK := false, false
	req.HomeTenantID, tenantOK = header(HeaderHomeTenantID)
	req.ClientObjectID, clientOK = header(HeaderClientObjectID)
	// ARO-HCP's api-version and subscription middleware run first; an
	// empty home-tenant header is filled from the subscription.
	tenant, err := f.reader.Admit(ctx, lifecycle.AdmitRequest{
		Method: http.MethodGet, SubscriptionID: sub, APIVersion: apiVersion, HomeTenantID: req.HomeTenantID,
	})
	var rej *admission.Rejection
	switch {
	case errors.As(err, &rej):
		return armError(rej.Status, rej.Code, rej.Target, rej.Message)
	case err != nil:
		f.logger.ErrorContext(ctx, "admitting an operation status request", "operation", op, "subscription", sub, "error", err)
		return internalError()
	}
	if !tenantOK || !clientOK {
		f.logger.InfoContext(ctx, "operation hidden: conflicting identity headers", "operation_id", op,
			"subscription_id", sub, "home_tenant_conflict", !tenantOK, "client_object_conflict", !clientOK)
		return answer{status: http.StatusNotFound}
	}
	req.HomeTenantID = tenant
	status, err := f.reader.Status(ctx, req)
	switch {
	case err == nil:
		body, err := status.MarshalIndent()
		if err != nil {
			f.logger.ErrorContext(ctx, "encoding operation status", "operation", op, "error", err)
			return internalError()
		}
		return answer{status: http.StatusOK, body: body}
	case errors.Is(err, lifecycle.ErrOperationNotVisible):
		// ARM's rule: do not even confirm the operation exists.
		return answer{status: http.StatusNotFound}
	case errors.Is(err, lifecycle.ErrOperationNotFound):
		return armError(http.StatusNotFound, arm.CodeResourceNotFound, "",
			fmt.Sprintf("The operation '%s' was not found in subscription '%s'.", op, sub))
	default:
		f.logger.ErrorContext(ctx, "reading operation status", "operation", op, "subscription", sub, "error", err)
		return internalError()
	}
}

func armError(status int, code, target, msg string) answer {
	body, _ := json.MarshalIndent(struct {
		Error arm.CloudErrorBody `json:"error"`
	}{arm.CloudErrorBody{Code: code, Message: msg, Target: target}}, "", "    ")
	return answer{status: status, body: body}
}

func internalError() answer {
	return armError(http.StatusInternalServerError, arm.CodeInternalServerError, "", "An internal error occurred; retry the request.")
}
