package document

import (
	"strings"
	"testing"
)

func TestClassifyObject(t *testing.T) {
	op := func(extra string) string {
		return `{"id":"a","partitionKey":"p","resourceID":"/subscriptions/p/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/u",` +
			`"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses"` + extra + `}`
	}
	tests := []struct {
		name string
		body string
		want Class
	}{
		{"accepted", op(`,"properties":{"status":"Accepted"}`), ClassActive},
		{"succeeded", op(`,"properties":{"status":"Succeeded"}`), ClassNone},
		{"failed", op(`,"properties":{"status":"Failed"}`), ClassNone},
		{"canceled", op(`,"properties":{"status":"Canceled"}`), ClassNone},
		// ARRAYCONTAINS compares exactly, so odd casing is not terminal.
		{"lower-case succeeded", op(`,"properties":{"status":"succeeded"}`), ClassActive},
		// Missing, null or non-string status is not in the terminal array.
		{"missing status", op(`,"properties":{}`), ClassActive},
		{"null status", op(`,"properties":{"status":null}`), ClassActive},
		{"numeric status", op(`,"properties":{"status":3}`), ClassActive},
		{"no properties", op(``), ClassActive},
		{"properties not an object", op(`,"properties":"x"`), ClassActive},
		{"terminal, pending notification", op(`,"properties":{"status":"Failed","notificationUri":"https://arm/x"}`), ClassPending},
		{"terminal, notification sent", op(`,"properties":{"status":"Failed","notificationUri":""}`), ClassNone},
		{"terminal, notificationUri not a string", op(`,"properties":{"status":"Failed","notificationUri":5}`), ClassNone},
		{"soft-deleted", op(`,"deletionTimestamp":"2026-03-14T02:00:00Z","properties":{"status":"Accepted"}`), ClassNone},
		{"null deletionTimestamp is still defined", op(`,"deletionTimestamp":null,"properties":{"status":"Accepted"}`), ClassNone},
		{"cluster", `{"id":"a","partitionKey":"p","resourceID":"/x","resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters"}`, ClassNone},
		{"empty resourceID", `{"id":"a","partitionKey":"p","resourceID":"","resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses"}`, ClassNone},
		{"resourceID not a string", `{"id":"a","partitionKey":"p","resourceID":1,"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses"}`, ClassNone},
		{"lower-case type", `{"id":"a","partitionKey":"p","resourceID":"/x","resourceType":"microsoft.redhatopenshift/hcpoperationstatuses"}`, ClassActive},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := ParseObject([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := ClassifyObject(obj); got != tc.want {
				t.Errorf("class = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestClassListed(t *testing.T) {
	for _, tc := range []struct {
		c                  Class
		plain, withPending bool
	}{
		{ClassNone, false, false},
		{ClassActive, true, true},
		{ClassPending, false, true},
	} {
		if got := tc.c.Listed(false); got != tc.plain {
			t.Errorf("%d.Listed(false) = %v", tc.c, got)
		}
		if got := tc.c.Listed(true); got != tc.withPending {
			t.Errorf("%d.Listed(true) = %v", tc.c, got)
		}
	}
}

// TestActiveQueriesSayWhatClassifyDoes: the Cosmos SQL and Classify are
// one rule; a change to one of them must be made to both.
func TestActiveQueriesSayWhatClassifyDoes(t *testing.T) {
	for _, want := range []string{
		"STRINGEQUALS(c.resourceType, @type, true)", "LENGTH(c.resourceID) > 0", "NOT IS_DEFINED(c.deletionTimestamp)",
		`NOT ARRAYCONTAINS(["Succeeded","Failed","Canceled"], c.properties.status)`,
	} {
		if !strings.Contains(ActiveOperationsQuery, want) || !strings.Contains(ActiveOrPendingQuery, want) {
			t.Errorf("the active-operations queries do not say %s", want)
		}
	}
	if strings.Contains(ActiveOperationsQuery, "notificationUri") || !strings.Contains(ActiveOrPendingQuery,
		"(IS_STRING(c.properties.notificationUri) AND LENGTH(c.properties.notificationUri) > 0)") {
		t.Errorf("only ActiveOrPendingQuery lists pending notifications:\n%s\n%s", ActiveOperationsQuery, ActiveOrPendingQuery)
	}
	if !strings.Contains(ActiveOperationsQuery, ActiveOperationsTypeParameter) {
		t.Errorf("the queries do not use %s", ActiveOperationsTypeParameter)
	}
}
