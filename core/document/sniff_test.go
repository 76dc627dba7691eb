package document

import (
	"strings"
	"testing"
)

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want Kind
	}{
		{string(mustRead(t, "operation.json")), KindOperation},
		{string(mustRead(t, "cluster.json")), KindCluster},
		{string(mustRead(t, "nodepool.json")), KindNodePool},
		{string(mustRead(t, "externalauth.json")), KindExternalAuth},
		{`{"resourceType":"MICROSOFT.REDHATOPENSHIFT/HCPOPERATIONSTATUSES"}`, KindOperation},
		{`{"resourceType":"microsoft.redhatopenshift/hcpopenshiftclusters/nodepools"}`, KindNodePool},
		{`{"resourceType":"Microsoft.Resources/subscriptions"}`, KindOther},
		{`{"resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters/hcpOpenShiftControllers"}`, KindOther},
		{`{"resourceType":null}`, KindOther},
		{`{}`, KindOther},
		{`{"resourcetype":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters"}`, KindOther}, // member names are exact
	} {
		got, err := Sniff([]byte(tc.raw))
		if err != nil || got != tc.want {
			t.Errorf("Sniff(%.60s) = %v, %v; want %v", tc.raw, got, err, tc.want)
		}
	}
	for _, bad := range []string{``, `{`, `[]`, `null`, `"x"`, `{"resourceType":5}`} {
		if _, err := Sniff([]byte(bad)); err == nil {
			t.Errorf("Sniff(%q) accepted", bad)
		}
	}
	if _, err := Sniff([]byte(`{"resourceType":5}`)); err == nil || !strings.Contains(err.Error(), "resourceType") {
		t.Errorf("error does not name resourceType: %v", err)
	}
}

func mustRead(t *testing.T, name string) []byte { return readTestdata(t, name) }

func TestSubscriptionTenantID(t *testing.T) {
	sub := `{"id":"x","partitionKey":"` + refSub + `","resourceID":"/subscriptions/` + refSub + `","resourceType":"Microsoft.Resources/subscriptions",
	  "properties":{"cosmosMetadata":{},"state":"Registered","registrationDate":"Thu, 14 Mar 2026 01:00:00 GMT",
	  "properties":{"tenantId":"72f988bf-86f1-41af-91ab-2d7cd011db47","registeredFeatures":[]}}}`
	if got, err := SubscriptionTenantID([]byte(sub)); err != nil || got != "72f988bf-86f1-41af-91ab-2d7cd011db47" {
		t.Errorf("tenant = %q, %v", got, err)
	}
	noTenant := `{"resourceType":"microsoft.resources/SUBSCRIPTIONS","properties":{"state":"Registered","properties":null}}`
	if got, err := SubscriptionTenantID([]byte(noTenant)); err != nil || got != "" {
		t.Errorf("absent tenant = %q, %v", got, err)
	}
	for _, bad := range []string{`{`, string(mustRead(t, "cluster.json")), `{"resourceType":"Microsoft.Resources/subscriptions","properties":{"properties":{"tenantId":1}}}`} {
		if _, err := SubscriptionTenantID([]byte(bad)); err == nil {
			t.Errorf("accepted %.50s", bad)
		}
	}
}
