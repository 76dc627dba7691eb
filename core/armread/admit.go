package armread

import (
	"context"
	"fmt"

	"github.com/hcpops/hcpops/core/document"
)

// AdmitRequest is what the request gates look at.
type AdmitRequest struct {
	Method         string
	SubscriptionID string
	APIVersion     string
	HomeTenantID   string // X-Ms-Home-Tenant-Id as sent
}

// Admit applies ARO-HCP's api-version and subscription-state middleware
// (admission.Config), the gates its frontend puts in front of every ARM
// request, and returns the home tenant the visibility rules use: the
// header, or, when it is empty, the subscription document's tenant. A
// refused request is an error wrapping *admission.Rejection.
func (r *ReadService) Admit(ctx context.Context, req AdmitRequest) (string, error) {
	if rej := r.cfg.Admission.CheckAPIVersion(req.APIVersion); rej != nil {
		return "", rej
	}
	sub, err := r.readSubscription(ctx, req.SubscriptionID)
	if err != nil {
		return "", err
	}
	rej, err := r.cfg.Admission.CheckSubscription(req.SubscriptionID, sub, req.Method)
	if err != nil {
		return "", err
	}
	if rej != nil {
		return "", rej
	}
	if req.HomeTenantID == "" && sub != nil {
		return sub.TenantID, nil
	}
	return req.HomeTenantID, nil
}

// readSubscription reads the subscription document; nil when the store has
// none.
func (r *ReadService) readSubscription(ctx context.Context, subscriptionID string) (*document.Subscription, error) {
	if subscriptionID == "" {
		return nil, nil
	}
	sub, err := read(ctx, r, document.PartitionKey(subscriptionID), document.SubscriptionCosmosID(subscriptionID), document.ParseSubscription)
	if err != nil {
		return nil, fmt.Errorf("reading subscription %s: %w", subscriptionID, err)
	}
	return sub, nil
}
