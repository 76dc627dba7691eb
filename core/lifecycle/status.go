package lifecycle

import (
	"context"
	"fmt"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// status reads the operation named in req and renders it for ARM, applying
// ARO-HCP's visibility rules (data model §3.2). The location in the path
// is ignored, as ARO-HCP ignores it. A request that cannot name an
// operation (bad subscription or UUID) is simply not found.
func (e *Engine) status(ctx context.Context, req StatusRequest) (arm.OperationStatus, error) {
	sub, ok := document.CanonicalUUID(req.SubscriptionID)
	if !ok {
		return arm.OperationStatus{}, fmt.Errorf("%w: subscription %q is not a subscription ID", ErrOperationNotFound, req.SubscriptionID)
	}
	name, ok := document.CanonicalUUID(req.OperationName)
	if !ok {
		return arm.OperationStatus{}, fmt.Errorf("%w: operation name %q is not a UUID", ErrOperationNotFound, req.OperationName)
	}
	req.SubscriptionID, req.OperationName = sub, name
	id := document.CosmosID(document.OperationResourceID(req.SubscriptionID, req.OperationName))
	op, err := e.readOperation(ctx, document.PartitionKey(req.SubscriptionID), id)
	if err != nil {
		return arm.OperationStatus{}, fmt.Errorf("reading status of operation %s: %w", req.OperationName, err)
	}
	if op == nil {
		return arm.OperationStatus{}, fmt.Errorf("%w: %s in subscription %s", ErrOperationNotFound, req.OperationName, req.SubscriptionID)
	}
	if why := invisible(op, req); why != "" {
		withInvocation(ctx, e.log).Debug("operation hidden from caller", "operation_id", req.OperationName, "reason", why)
		return arm.OperationStatus{}, fmt.Errorf("%w: %s", ErrOperationNotVisible, why)
	}
	return op.ToStatus(), nil
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
	if !strings.EqualFold(subscriptionOf(p.OperationID), req.SubscriptionID) {
		return "subscription does not match the operation's"
	}
	return ""
}
