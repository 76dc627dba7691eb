// Package operationresults is the operationResults function: ARM's GET on
// the Location URL of a PATCH, DELETE or POST,
// .../locations/{location}/hcpOperationResults/{operationId}. It answers as
// ARO-HCP's frontend does: 202 while the operation runs, 500 once it failed
// or was canceled, and on success what a synchronous request would have
// returned (the resource, a credential, or no content).
package operationresults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/hcpops/hcpops/core/admission"
	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/handlers"
)

// Name is the function's folder name.
const Name = "operationResults"

// Route is the function.json route (host.json sets the route prefix to "").
const Route = "subscriptions/{subscriptionId}/providers/" + arm.ProviderNamespace +
	"/locations/{location}/" + arm.OperationResultsType + "/{operationId}"

// Headers ARM sets.
const (
	HeaderHomeTenantID   = "X-Ms-Home-Tenant-Id"
	HeaderClientObjectID = "X-Ms-Client-Object-Id"
	APIVersionParameter  = "api-version"
)

// ResultReader is the part of the lifecycle this function calls
// (*lifecycle.Engine satisfies it).
type ResultReader interface {
	Admit(ctx context.Context, req lifecycle.AdmitRequest) (string, error)
	Result(ctx context.Context, req lifecycle.StatusRequest) (lifecycle.Result, error)
}

// Function answers operation-result reads.
type Function struct {
	reader ResultReader
	logger *slog.Logger
}

// New builds the function; logger may be nil.
func New(r ResultReader, logger *slog.Logger) *Function {
	return &Function{reader: r, logger: handlers.Logger(logger)}
}

// Register serves the forwarded route and the envelope form (POST /operationResults).
func (f *Function) Register(s *handlers.Server) error {
	if err := s.Route(Name, http.MethodGet, chiPattern(), f); err != nil {
		return fmt.Errorf("registering %s: %w", Name, err)
	}
	if err := s.Handle(Name, f.Invoke); err != nil {
		return fmt.Errorf("registering %s: %w", Name, err)
	}
	return nil
}

// chiPattern is Route with the fixed words matched regardless of case, as
// ARM and the host match them.
func chiPattern() string {
	word := func(param, w string) string {
		return "{" + param + ":(?i)" + strings.ReplaceAll(w, ".", `\.`) + "}"
	}
	return "/" + word("s", "subscriptions") + "/{subscriptionId}/" + word("p", "providers") + "/" +
		word("ns", arm.ProviderNamespace) + "/" + word("l", "locations") + "/{location}/" +
		word("t", arm.OperationResultsType) + "/{operationId}"
}

// request is what an answer depends on, from either form.
type request struct {
	subscription, location, operation string
	apiVersion                        string
	tenant, client                    string
	// identityConflict: an identity header came with disagreeing values,
	// so the caller cannot be told apart and sees nothing.
	identityConflict bool
	referer, host    string
}

// answer is the HTTP response; a nil body means none.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// ServeHTTP answers a forwarded request.
func (f *Function) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tenant := r.Header.Values(HeaderHomeTenantID)
	client := r.Header.Values(HeaderClientObjectID)
	ans := f.answer(r.Context(), request{
		subscription:     chi.URLParam(r, "subscriptionId"),
		location:         chi.URLParam(r, "location"),
		operation:        chi.URLParam(r, "operationId"),
		apiVersion:       r.URL.Query().Get(APIVersionParameter),
		tenant:           first(tenant),
		client:           first(client),
		identityConflict: disagree(tenant) || disagree(client),
		referer:          r.Referer(),
		host:             r.Host,
	})
	for k, vs := range ans.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(ans.status)
	_, _ = w.Write(ans.body)
}

func (f *Function) answer(ctx context.Context, req request) answer {
	sub, ok := document.CanonicalUUID(req.subscription)
	if !ok {
		return armError(http.StatusBadRequest, "InvalidSubscriptionId", "subscriptionId",
			fmt.Sprintf("The subscription id '%s' in the path is not a valid UUID.", req.subscription))
	}
	op, ok := document.CanonicalUUID(req.operation)
	if !ok {
		return armError(http.StatusBadRequest, "InvalidResourceName", "operationId",
			fmt.Sprintf("The operation id '%s' in the path is not a valid UUID.", req.operation))
	}
	if req.location == "" {
		return armError(http.StatusBadRequest, arm.CodeInvalidRequestContent, "location", "The location in the path is empty.")
	}
	notFound := armError(http.StatusNotFound, arm.CodeResourceNotFound, "",
		fmt.Sprintf("The operation '%s' was not found in subscription '%s'.", op, sub))
	tenant, err := f.reader.Admit(ctx, lifecycle.AdmitRequest{
		Method: http.MethodGet, SubscriptionID: sub, APIVersion: req.apiVersion, HomeTenantID: req.tenant,
	})
	var rej *admission.Rejection
	switch {
	case errors.As(err, &rej):
		return armError(rej.Status, rej.Code, rej.Target, rej.Message)
	case err != nil:
		f.logger.ErrorContext(ctx, "admitting an operation result request", "operation_id", op, "subscription", sub, "error", err)
		return internalError()
	case req.identityConflict:
		return notFound
	}
	res, err := f.reader.Result(ctx, lifecycle.StatusRequest{
		SubscriptionID: sub, Location: req.location, OperationName: op, HomeTenantID: tenant, ClientObjectID: req.client,
	})
	switch {
	case err == nil:
	case errors.Is(err, lifecycle.ErrOperationNotFound), errors.Is(err, lifecycle.ErrOperationNotVisible):
		return notFound
	case errors.Is(err, lifecycle.ErrResultGone):
		f.logger.InfoContext(ctx, "operation result no longer exists", "operation_id", op, "error", err)
		return armError(http.StatusNotFound, arm.CodeResourceNotFound, "",
			fmt.Sprintf("The result of operation '%s' no longer exists.", op))
	default:
		f.logger.ErrorContext(ctx, "reading operation result", "operation_id", op, "subscription", sub, "error", err)
		return internalError()
	}
	return f.render(ctx, req, res)
}

// render maps the lifecycle's result onto ARM's status codes.
func (f *Function) render(ctx context.Context, req request, res lifecycle.Result) answer {
	switch res.Status {
	case arm.ProvisioningStateSucceeded:
	case arm.ProvisioningStateFailed, arm.ProvisioningStateCanceled:
		// ARM reads the error from the status endpoint; this one only says
		// there is no result.
		return armError(http.StatusInternalServerError, arm.CodeInternalServerError, "",
			fmt.Sprintf("The operation ended in state '%s'; its status holds the error.", res.Status))
	default:
		loc, err := location(req, res.OperationID)
		if err != nil {
			f.logger.ErrorContext(ctx, "building the Location header", "operation_id", req.operation, "error", err)
			return internalError()
		}
		return answer{status: http.StatusAccepted, header: http.Header{"Location": {loc}}}
	}
	switch res.Request {
	case document.RequestCreate:
		return jsonAnswer(http.StatusCreated, res.Body)
	case document.RequestUpdate, document.RequestRequestCredential:
		return jsonAnswer(http.StatusOK, res.Body)
	case document.RequestDelete, document.RequestRevokeCredentials:
		return answer{status: http.StatusNoContent}
	}
	f.logger.ErrorContext(ctx, "operation has an unknown request", "operation_id", req.operation, "request", res.Request)
	return internalError()
}

// location is the Location header of a running operation: this endpoint
// for the operation, on the scheme and host ARM used (the Referer, as
// ARO-HCP's middleware ensures; else this request's host), carrying the
// caller's api-version.
func location(req request, operationID string) (string, error) {
	sub, loc, name, err := splitOperationID(operationID)
	if err != nil {
		return "", err
	}
	u, err := url.ParseRequestURI(req.referer)
	if err != nil || u.Host == "" {
		u = &url.URL{Scheme: "https", Host: req.host}
	}
	u.Path = document.OperationResultID(sub, loc, name)
	u.RawPath = ""
	q := u.Query()
	if req.apiVersion != "" {
		q.Set(APIVersionParameter, req.apiVersion)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// splitOperationID takes subscription, location and name from
// /subscriptions/{s}/providers/{ns}/locations/{l}/hcpOperationStatuses/{n}.
func splitOperationID(id string) (sub, loc, name string, err error) {
	s := strings.Split(strings.Trim(id, "/"), "/")
	if len(s) != 8 || !strings.EqualFold(s[0], "subscriptions") || !strings.EqualFold(s[4], "locations") {
		return "", "", "", fmt.Errorf("operationId %q is not a location-qualified operation ID", id)
	}
	return s[1], s[5], s[7], nil
}

func jsonAnswer(status int, body []byte) answer {
	return answer{status: status, header: http.Header{"Content-Type": {"application/json"}}, body: body}
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// disagree reports values of one identity header that differ (IDs
// compare case-insensitively).
func disagree(vs []string) bool {
	for _, v := range vs {
		if !strings.EqualFold(v, vs[0]) {
			return true
		}
	}
	return false
}

func armError(status int, code, target, msg string) answer {
	body, _ := json.MarshalIndent(struct {
		Error arm.CloudErrorBody `json:"error"`
	}{arm.CloudErrorBody{Code: code, Message: msg, Target: target}}, "", "    ")
	return jsonAnswer(status, body)
}

func internalError() answer {
	return armError(http.StatusInternalServerError, arm.CodeInternalServerError, "", "An internal error occurred; retry the request.")
}
