package document

import (
	"encoding/json/jsontext"
	"fmt"
	"strings"
)

// Sniff tells what a raw document is from its resourceType (any casing):
// an operation, a cluster, a node pool, an external auth, or KindOther for
// anything else (including no resourceType). Only JSON that is not an
// object, or a resourceType that is not a string, is an error.
func Sniff(raw []byte) (Kind, error) {
	var val [1]jsontext.Value
	var rd reader
	if err := rd.readMembers("document", raw, sniffKeys, val[:], nil); err != nil {
		return KindOther, err
	}
	var s string
	if err := takeValue("", "resourceType", val[0], &s); err != nil {
		return KindOther, err
	}
	return kindOfType(s), nil
}

var sniffKeys = keysOf("resourceType")

// SubscriptionResourceType is the resourceType of a subscription document.
const SubscriptionResourceType = "Microsoft.Resources/subscriptions"

// SubscriptionTenantID reads properties.properties.tenantId from a
// subscription document; "" when the document does not carry one.
func SubscriptionTenantID(raw []byte) (string, error) {
	doc, err := decodeTree("subscription document", raw)
	if err != nil {
		return "", err
	}
	if err := check(doc, []string{"resourceType"}, tString); err != nil {
		return "", err
	}
	if rt := getString(doc, []string{"resourceType"}); !strings.EqualFold(rt, SubscriptionResourceType) {
		return "", fmt.Errorf("resourceType: %q is not %s", rt, SubscriptionResourceType)
	}
	path := []string{"properties", "properties", "tenantId"}
	for _, f := range []fieldSpec{{path[:1], tObject}, {path[:2], tObject}, {path, tString}} {
		if err := check(doc, f.path, f.typ); err != nil {
			return "", err
		}
	}
	return getString(doc, path), nil
}
