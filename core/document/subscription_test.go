package document

import (
	"strings"
	"testing"
)

func TestParseSubscription(t *testing.T) {
	s, err := ParseSubscription(readTestdata(t, "subscription.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.State != SubscriptionRegistered || s.TenantID != "72f988bf-86f1-41af-91ab-2d7cd011db47" ||
		s.SubscriptionID != "1d3378d3-5a3f-4712-85a1-2485495dfc4b" {
		t.Errorf("parsed %+v", s)
	}
	if got, want := SubscriptionCosmosID("1D3378D3-5A3F-4712-85A1-2485495DFC4B"), getString(decodeAny(t, readTestdata(t, "subscription.json")).(tree), []string{"id"}); got != want {
		t.Errorf("SubscriptionCosmosID = %s, want the fixture's id %s", got, want)
	}
}

func TestParseSubscriptionRejects(t *testing.T) {
	for _, tc := range []struct{ name, doc, field string }{
		{"not json", `{`, "not valid JSON"},
		{"other type", `{"resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters","properties":{}}`, "resourceType"},
		{"no properties", `{"resourceType":"Microsoft.Resources/subscriptions"}`, "properties"},
		{"state a number", `{"resourceType":"Microsoft.Resources/subscriptions","properties":{"state":3}}`, "properties.state"},
		{"tenant an object", `{"resourceType":"microsoft.resources/subscriptions","properties":{"state":"Registered","properties":{"tenantId":{}}}}`, "properties.properties.tenantId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSubscription([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error = %v, want one naming %s", err, tc.field)
			}
		})
	}
}
