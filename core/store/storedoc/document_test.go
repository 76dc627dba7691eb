package storedoc

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store"
)

func TestParseDocumentErrorsNameTheField(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string // in the message
	}{
		{"not an object", `[1]`, "not a JSON object"},
		{"no id", `{"partitionKey":"p"}`, "no field id"},
		{"id not a string", `{"id":7,"partitionKey":"p"}`, "field id is 7"},
		{"empty id", `{"id":"","partitionKey":"p"}`, "id is empty"},
		{"id with slash", `{"id":"a/b","partitionKey":"p"}`, `"a/b"`},
		{"no partitionKey", `{"id":"a"}`, "partitionKey is undefined"},
		{"other partitionKey", `{"id":"a","partitionKey":"q"}`, `partitionKey is "q", want "p"`},
		{"ttl zero", `{"id":"a","partitionKey":"p","ttl":0}`, "ttl is 0"},
		{"ttl fraction", `{"id":"a","partitionKey":"p","ttl":1.5}`, "ttl is 1.5"},
		{"ttl string", `{"id":"a","partitionKey":"p","ttl":"30"}`, `ttl is "30"`},
		{"ttl below -1", `{"id":"a","partitionKey":"p","ttl":-2}`, "ttl is -2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse([]byte(tc.body), "p")
			if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrInvalid mentioning %q", err, tc.want)
			}
		})
	}
}

func TestParseDocumentTTL(t *testing.T) {
	for body, want := range map[string]int64{
		`{"id":"a","partitionKey":"p"}`:              0,
		`{"id":"a","partitionKey":"p","ttl":null}`:   0,
		`{"id":"a","partitionKey":"p","ttl":-1}`:     -1,
		`{"id":"a","partitionKey":"p","ttl":30}`:     30,
		`{"id":"a","partitionKey":"p","ttl":30.0}`:   30,
		`{"id":"a","partitionKey":"p","ttl":604800}`: 604800,
	} {
		_, meta, err := Parse([]byte(body), "p")
		if err != nil || meta.TTL != want {
			t.Errorf("Parse(%s): ttl %d, err %v; want %d", body, meta.TTL, err, want)
		}
	}
}

func TestClassify(t *testing.T) {
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
			_, meta, err := Parse([]byte(tc.body), "p")
			if err != nil {
				t.Fatalf("parseDocument: %v", err)
			}
			if meta.Class != tc.want {
				t.Errorf("class = %d, want %d", meta.Class, tc.want)
			}
		})
	}
}

func TestMarkDeleted(t *testing.T) {
	now := time.Date(2026, 3, 14, 4, 0, 1, 5, time.UTC)
	tests := []struct {
		name    string
		body    string
		want    string
		wantErr string
	}{
		{
			name: "bumps the version and keeps the rest",
			body: `{"id":"a","properties":{"x":1,"cosmosMetadata":{"resourceID":"/r","instanceVersion":4}},"ttl":604800}`,
			want: `{"id":"a","properties":{"x":1,"cosmosMetadata":{"resourceID":"/r","instanceVersion":5}},"ttl":30,"deletionTimestamp":"2026-03-14T04:00:01.000000005Z"}`,
		},
		{
			name: "missing version counts as 1",
			body: `{"id":"a","properties":{"cosmosMetadata":{}}}`,
			want: `{"id":"a","properties":{"cosmosMetadata":{"instanceVersion":2}},"deletionTimestamp":"2026-03-14T04:00:01.000000005Z","ttl":30}`,
		},
		{
			name: "missing properties",
			body: `{"id":"a"}`,
			want: `{"id":"a","properties":{"cosmosMetadata":{"instanceVersion":2}},"deletionTimestamp":"2026-03-14T04:00:01.000000005Z","ttl":30}`,
		},
		{name: "version not a number", body: `{"id":"a","properties":{"cosmosMetadata":{"instanceVersion":"4"}}}`, wantErr: `properties.cosmosMetadata.instanceVersion is "4"`},
		{name: "properties not an object", body: `{"id":"a","properties":[]}`, wantErr: "field properties is []"},
		{name: "cosmosMetadata not an object", body: `{"id":"a","properties":{"cosmosMetadata":1}}`, wantErr: "field properties.cosmosMetadata is 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := ParseObject([]byte(tc.body))
			if err != nil {
				t.Fatalf("parseObject: %v", err)
			}
			err = markDeleted(&obj, now)
			if tc.wantErr != "" {
				if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want ErrInvalid mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("markDeleted: %v", err)
			}
			if got := string(obj.AppendJSON(nil)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestHasPrefixFold(t *testing.T) {
	tests := []struct {
		s, prefix string
		want      bool
	}{
		{"/Subscriptions/S/RG/np", "/subscriptions/s/rg/", true},
		{"/subscriptions/s/rg", "/subscriptions/s/rg/", false},
		{"/subscriptions/s/rg2/x", "/subscriptions/s/rg/", false},
		{"/x/\u212a/y", "/X/k/", true}, // Kelvin sign folds to k
		{"", "/", false},
		{"anything", "", true},
	}
	for _, tc := range tests {
		if got := HasPrefixFold([]byte(tc.s), tc.prefix); got != tc.want {
			t.Errorf("HasPrefixFold(%q, %q) = %v, want %v", tc.s, tc.prefix, got, tc.want)
		}
	}
}
