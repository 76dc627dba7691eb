package document

import (
	"fmt"
	"strings"
)

// SubscriptionState is ARM's registration state of a subscription, as
// ARO-HCP stores it from ARM's subscription lifecycle notifications.
type SubscriptionState string

const (
	SubscriptionRegistered   SubscriptionState = "Registered"
	SubscriptionWarned       SubscriptionState = "Warned"
	SubscriptionSuspended    SubscriptionState = "Suspended"
	SubscriptionUnregistered SubscriptionState = "Unregistered"
	SubscriptionDeleted      SubscriptionState = "Deleted"
)

// Subscription is what the request gates read from ARO-HCP's subscription
// document (written by the frontend's ArmSubscriptionPut): the state and
// the home tenant. Everything else in the document is left alone.
type Subscription struct {
	SubscriptionID string
	State          SubscriptionState
	// TenantID is properties.properties.tenantId; "" when ARM sent none.
	TenantID string
}

// SubscriptionCosmosID is the document id of a subscription: the hashed
// lower-case /subscriptions/{id}, in the subscription's own partition.
func SubscriptionCosmosID(subscriptionID string) string {
	return CosmosID(SubscriptionResourceID(strings.ToLower(subscriptionID)))
}

// ParseSubscription reads a subscription document. A member of the wrong
// type is an error naming the field; an unknown state string is returned
// as is, for the caller to refuse.
func ParseSubscription(raw []byte) (*Subscription, error) {
	doc, err := decodeTree("subscription document", raw)
	if err != nil {
		return nil, err
	}
	for _, f := range []fieldSpec{
		{[]string{"resourceID"}, tString},
		{[]string{"resourceType"}, tString},
		{[]string{"properties"}, tObject},
		{[]string{"properties", "state"}, tString},
		{[]string{"properties", "properties"}, tObject},
		{[]string{"properties", "properties", "tenantId"}, tString},
	} {
		if err := check(doc, f.path, f.typ); err != nil {
			return nil, fmt.Errorf("subscription document: %w", err)
		}
	}
	if rt := getString(doc, []string{"resourceType"}); !strings.EqualFold(rt, SubscriptionResourceType) {
		return nil, fmt.Errorf("subscription document: resourceType: %q is not %s", rt, SubscriptionResourceType)
	}
	if _, ok := lookup(doc, []string{"properties"}); !ok {
		return nil, fmt.Errorf("subscription document: properties: missing")
	}
	return &Subscription{
		SubscriptionID: strings.TrimPrefix(strings.ToLower(getString(doc, []string{"resourceID"})), "/subscriptions/"),
		State:          SubscriptionState(getString(doc, []string{"properties", "state"})),
		TenantID:       getString(doc, []string{"properties", "properties", "tenantId"}),
	}, nil
}
