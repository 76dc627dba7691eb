package armread

import (
	"context"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// OperationStatus is a status read: ARM's body and, while the operation
// runs, how long ARM should wait before it asks again (its Retry-After).
type OperationStatus struct {
	arm.OperationStatus
	// RetryAfter is zero once the operation is terminal.
	RetryAfter time.Duration `json:"-"`
}

// Status reads the operation named in req and renders it for ARM,
// applying the visibility rules of ARO-HCP's frontend. The location in
// the path is ignored, as ARO-HCP ignores it. A request that cannot name
// an operation (bad subscription or UUID) is simply not found.
func (r *ReadService) Status(ctx context.Context, req StatusRequest) (OperationStatus, error) {
	op, err := r.visibleOperation(ctx, req)
	if err != nil {
		return OperationStatus{}, err
	}
	return OperationStatus{OperationStatus: op.ToStatus(), RetryAfter: r.retryAfter(op)}, nil
}

// invisible says why ARM must not show op to this caller ("" when it may):
// the operation needs an operationId; a stored tenant or client must match
// the caller's; and the path subscription must be the operation's.
func invisible(op *document.OperationDocument, req StatusRequest) string {
	p := &op.Properties
	if p.OperationID == "" {
		return "operation has no operationId"
	}
	if p.TenantID != "" && !strings.EqualFold(p.TenantID, req.HomeTenantID) {
		return "home tenant does not match"
	}
	if p.ClientID != "" && !strings.EqualFold(p.ClientID, req.ClientObjectID) {
		return "client object ID does not match"
	}
	if !strings.EqualFold(document.SubscriptionOf(p.OperationID), req.SubscriptionID) {
		return "subscription does not match the operation's"
	}
	return ""
}
