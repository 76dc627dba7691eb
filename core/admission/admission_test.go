package admission

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/document"
)

const sub = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"

func TestCheckAPIVersion(t *testing.T) {
	custom := Config{APIVersions: []string{"2099-01-01"}}
	for _, tc := range []struct {
		name    string
		cfg     Config
		version string
		status  int // 0: admitted
		code    string
		message string
	}{
		{"missing", Config{}, "", 400, "InvalidParameter", "The request is missing required parameter 'api-version'."},
		{"unknown", Config{}, "2023-01-01", 400, "InvalidResourceType",
			"The resource type 'Microsoft.RedHatOpenShift/hcpOpenShiftClusters' could not be found API version '2023-01-01'."},
		{"case differs", Config{}, "2024-06-10-PREVIEW", 400, "InvalidResourceType", ""},
		{"each default 1", Config{}, "2024-06-10-preview", 0, "", ""},
		{"each default 2", Config{}, "2025-12-23-preview", 0, "", ""},
		{"each default 3", Config{}, "2026-06-30-preview", 0, "", ""},
		{"each default 4", Config{}, "2026-09-01-preview", 0, "", ""},
		{"configured", custom, "2099-01-01", 0, "", ""},
		{"default not configured", custom, "2024-06-10-preview", 400, "InvalidResourceType", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.cfg.CheckAPIVersion(tc.version)
			if tc.status == 0 {
				if r != nil {
					t.Fatalf("refused: %v", r)
				}
				return
			}
			if r == nil || r.Status != tc.status || r.Code != tc.code || (tc.message != "" && r.Message != tc.message) {
				t.Fatalf("rejection = %+v, want %d %s %q", r, tc.status, tc.code, tc.message)
			}
		})
	}
}

func TestCheckSubscription(t *testing.T) {
	doc := func(s document.SubscriptionState) *document.Subscription {
		return &document.Subscription{SubscriptionID: sub, State: s}
	}
	unregistered := "Request is not allowed in unregistered subscription '" + sub + "'."
	for _, tc := range []struct {
		name    string
		cfg     Config
		sub     *document.Subscription
		method  string
		status  int
		message string
	}{
		{"registered GET", Config{}, doc("Registered"), "GET", 0, ""},
		{"registered PUT", Config{}, doc("Registered"), "PUT", 0, ""},
		{"warned GET", Config{}, doc("Warned"), "GET", 0, ""},
		{"suspended GET", Config{}, doc("Suspended"), "GET", 0, ""},
		{"suspended DELETE", Config{}, doc("Suspended"), "DELETE", 0, ""},
		{"warned PUT", Config{}, doc("Warned"), "PUT", 409, "Request is not allowed in subscription in state 'Warned'."},
		{"suspended POST", Config{}, doc("Suspended"), "POST", 409, "Request is not allowed in subscription in state 'Suspended'."},
		{"unregistered GET", Config{}, doc("Unregistered"), "GET", 400, unregistered},
		{"deleted GET", Config{}, doc("Deleted"), "GET", 400, "Request is not allowed in subscription in state 'Deleted'."},
		{"no document, optional", Config{}, nil, "GET", 0, ""},
		{"no document, required", Config{RequireSubscriptionDocument: true}, nil, "GET", 400, unregistered},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.cfg.CheckSubscription(sub, tc.sub, tc.method)
			if err != nil {
				t.Fatal(err)
			}
			if tc.status == 0 {
				if r != nil {
					t.Fatalf("refused: %v", r)
				}
				return
			}
			if r == nil || r.Status != tc.status || r.Code != "InvalidSubscriptionState" || r.Message != tc.message {
				t.Fatalf("rejection = %+v, want %d InvalidSubscriptionState %q", r, tc.status, tc.message)
			}
		})
	}
	if _, err := (Config{}).CheckSubscription(sub, doc("Frozen"), "GET"); err == nil || !strings.Contains(err.Error(), `"Frozen"`) {
		t.Errorf("unknown state: error = %v, want one naming the state", err)
	}
	if r, _ := (Config{}).CheckSubscription("", nil, "GET"); r == nil || r.Status != http.StatusBadRequest || r.Code != "InvalidParameter" ||
		r.Message != "The request is missing required parameter 'subscriptionid'." || r.Target != "" {
		t.Errorf("no subscription: %+v, want ARO-HCP's 400 InvalidParameter naming 'subscriptionid', no target", r)
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := ConfigFromEnv(env(map[string]string{EnvAPIVersions: " 2099-01-01 , 2099-02-01", EnvSubscriptionDocument: "Required"}))
	if err != nil || len(c.APIVersions) != 2 || c.APIVersions[1] != "2099-02-01" || !c.RequireSubscriptionDocument {
		t.Fatalf("ConfigFromEnv = %+v, %v", c, err)
	}
	if c, err := ConfigFromEnv(env(nil)); err != nil || c.APIVersions != nil || c.RequireSubscriptionDocument {
		t.Fatalf("defaults = %+v, %v", c, err)
	}
	for k, v := range map[string]string{EnvAPIVersions: "2024-06-10-preview,,x", EnvSubscriptionDocument: "sometimes"} {
		if _, err := ConfigFromEnv(env(map[string]string{k: v})); err == nil || !strings.Contains(err.Error(), k) || !strings.Contains(err.Error(), v) {
			t.Errorf("%s=%q: error = %v, want one naming setting and value", k, v, err)
		}
	}
}
