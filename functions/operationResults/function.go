// Package operationresults is the operationResults function: ARM's GET on
// the Location URL of a PATCH, DELETE or POST,
// .../locations/{location}/hcpOperationResults/{operationId}. It answers as
// ARM's async contract asks: 202 with Retry-After while the operation
// runs, and once it is done what a synchronous request would have
// returned — the resource, a credential or no content; for a failed or
// canceled operation its own error with a 4xx or 5xx (ARO-HCP's frontend
// answers a generic 500; docs/arm.md says why hcpops does not).
package operationresults

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/armread"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/functions/operationrequest"
	"github.com/hcpops/hcpops/logging"
)

// Name is the function's folder name.
const Name = "operationResults"

// ResultReader is the part of the read service this function calls
// (*armread.ReadService satisfies it).
type ResultReader interface {
	operationrequest.Admitter
	Result(ctx context.Context, req armread.StatusRequest) (armread.Result, error)
}

// Function answers operation-result reads; the embedded Endpoint serves
// the route (Register, ServeHTTP).
type Function struct {
	operationrequest.Endpoint
	reader ResultReader
	logger *slog.Logger
}

// New builds the function; logger may be nil.
func New(r ResultReader, logger *slog.Logger) *Function {
	f := &Function{reader: r, logger: logging.Logger(logger)}
	f.Endpoint = operationrequest.Endpoint{Name: Name, Type: arm.OperationResultsType, Answer: f.answer}
	return f
}

// answer reads a result behind ARO-HCP's request gates; an operation the
// caller may not see reads as a missing one.
func (f *Function) answer(ctx context.Context, req operationrequest.Request) operationrequest.Answer {
	req, ans, ok := operationrequest.Gate(ctx, f.reader, f.logger, req)
	if !ok {
		return ans
	}
	op, sub := req.OperationID, req.SubscriptionID
	notFound := operationrequest.ARMError(http.StatusNotFound, arm.CodeResourceNotFound, "",
		fmt.Sprintf("The operation '%s' was not found in subscription '%s'.", op, sub))
	if req.IdentityConflict {
		return notFound
	}
	res, err := f.reader.Result(ctx, req.StatusRequest())
	switch {
	case err == nil:
	case errors.Is(err, armread.ErrOperationNotFound), errors.Is(err, armread.ErrOperationNotVisible):
		return notFound
	case errors.Is(err, armread.ErrResultGone):
		f.logger.InfoContext(ctx, "operation result no longer exists", "operation_id", op, "error", err)
		return operationrequest.ARMError(http.StatusNotFound, arm.CodeResourceNotFound, "",
			fmt.Sprintf("The result of operation '%s' no longer exists.", op))
	default:
		f.logger.ErrorContext(ctx, "reading operation result", "operation_id", op, "subscription", sub, "error", err)
		return operationrequest.InternalError()
	}
	return f.render(ctx, req, res)
}

// render maps the read service's result onto ARM's status codes.
func (f *Function) render(ctx context.Context, req operationrequest.Request, res armread.Result) operationrequest.Answer {
	switch res.Status {
	case arm.ProvisioningStateSucceeded:
	case arm.ProvisioningStateFailed, arm.ProvisioningStateCanceled:
		return f.failure(ctx, req, res)
	default:
		loc, err := location(req, res.OperationID)
		if err != nil {
			f.logger.ErrorContext(ctx, "building the Location header", "operation_id", req.OperationID, "error", err)
			return operationrequest.InternalError()
		}
		ans := operationrequest.Answer{Status: http.StatusAccepted, Header: http.Header{"Location": {loc}}}
		return operationrequest.WithRetryAfter(ans, res.RetryAfter)
	}
	switch res.Request {
	case document.RequestCreate:
		return operationrequest.JSON(http.StatusCreated, res.Body)
	case document.RequestUpdate, document.RequestRequestCredential:
		return operationrequest.JSON(http.StatusOK, res.Body)
	case document.RequestDelete, document.RequestRevokeCredentials:
		return operationrequest.Answer{Status: http.StatusNoContent}
	}
	f.logger.ErrorContext(ctx, "operation has an unknown request", "operation_id", req.OperationID, "request", res.Request)
	return operationrequest.InternalError()
}

// failure answers what the synchronous request would have: the
// operation's own error, with the status arm.FailureStatus gives it. It is
// an expected answer, logged at Info.
func (f *Function) failure(ctx context.Context, req operationrequest.Request, res armread.Result) operationrequest.Answer {
	e := res.Error
	if e == nil { // the read service fills one in; never answer an empty error
		code := arm.CodeInternalServerError
		if res.Status == arm.ProvisioningStateCanceled {
			code = arm.CodeCanceled
		}
		e = &arm.CloudErrorBody{Code: code, Message: fmt.Sprintf("The operation ended in state '%s'.", res.Status)}
	}
	status := arm.FailureStatus(res.Status, e.Code)
	f.logger.InfoContext(ctx, "operation ended without a result", "operation_id", req.OperationID,
		"operation_status", string(res.Status), "error_code", e.Code, "http_status", status)
	ans := operationrequest.CloudError(status, *e)
	ans.Expected = true
	return ans
}

// location is the Location header of a running operation: this endpoint
// for the operation, on the scheme and host ARM used (the Referer, as
// ARO-HCP's middleware ensures; else this request's host), carrying the
// caller's api-version.
func location(req operationrequest.Request, operationID string) (string, error) {
	id, err := document.ParseResourceID("operationId", operationID)
	if err != nil {
		return "", err
	}
	if types := id.ResourceType.Types; id.Location == "" || !strings.EqualFold(types[len(types)-1], arm.OperationStatusesType) {
		return "", fmt.Errorf("operationId %q is not a location-qualified operation ID", operationID)
	}
	sub, loc, name := id.SubscriptionID, id.Location, id.Name
	u, err := url.ParseRequestURI(req.Referer)
	if err != nil || u.Host == "" {
		u = &url.URL{Scheme: "https", Host: req.Host}
	}
	u.Path = document.OperationResultID(sub, loc, name)
	u.RawPath = ""
	q := u.Query()
	if req.APIVersion != "" {
		q.Set(operationrequest.APIVersionParameter, req.APIVersion)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}
