// Package operationstatus is the operationStatus function: ARM's GET on
// .../locations/{location}/hcpOperationStatuses/{operationId}, the poll ARM
// makes until an operation is terminal. The host forwards the request as
// is (enableForwardingHttpRequest); the gates and the identity rule are
// operationResults' too (package operationrequest).
package operationstatus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/armread"
	"github.com/hcpops/hcpops/functions/operationrequest"
	"github.com/hcpops/hcpops/logging"
)

// Name is the function's folder name.
const Name = "operationStatus"

// StatusReader is the part of the read service this function calls
// (*armread.ReadService satisfies it): the request gates, then the read.
type StatusReader interface {
	operationrequest.Admitter
	Status(ctx context.Context, req armread.StatusRequest) (armread.OperationStatus, error)
}

// Function answers operation-status reads; the embedded Endpoint serves
// the route (Register, ServeHTTP).
type Function struct {
	operationrequest.Endpoint
	reader StatusReader
	logger *slog.Logger
}

// New builds the function; logger may be nil.
func New(r StatusReader, logger *slog.Logger) *Function {
	f := &Function{reader: r, logger: logging.Logger(logger)}
	f.Endpoint = operationrequest.Endpoint{Name: Name, Type: arm.OperationStatusesType, Answer: f.answer}
	return f
}

// answer renders a status read behind ARO-HCP's request gates. A
// conflicting identity header hides the operation, like any mismatch.
func (f *Function) answer(ctx context.Context, req operationrequest.Request) operationrequest.Answer {
	req, ans, ok := operationrequest.Gate(ctx, f.reader, f.logger, req)
	switch {
	case !ok:
		return ans
	case req.IdentityConflict:
		return operationrequest.Answer{Status: http.StatusNotFound}
	}
	op, sub := req.OperationID, req.SubscriptionID
	status, err := f.reader.Status(ctx, req.StatusRequest())
	switch {
	case err == nil:
		body, err := status.MarshalIndent()
		if err != nil {
			f.logger.ErrorContext(ctx, "encoding operation status", "operation_id", op, "error", err)
			return operationrequest.InternalError()
		}
		return operationrequest.WithRetryAfter(operationrequest.JSON(http.StatusOK, body), status.RetryAfter)
	case errors.Is(err, armread.ErrOperationNotVisible):
		// ARM's rule: do not even confirm the operation exists.
		return operationrequest.Answer{Status: http.StatusNotFound}
	case errors.Is(err, armread.ErrOperationNotFound):
		return operationrequest.ARMError(http.StatusNotFound, arm.CodeResourceNotFound, "",
			fmt.Sprintf("The operation '%s' was not found in subscription '%s'.", op, sub))
	default:
		f.logger.ErrorContext(ctx, "reading operation status", "operation_id", op, "subscription", sub, "error", err)
		return operationrequest.InternalError()
	}
}
