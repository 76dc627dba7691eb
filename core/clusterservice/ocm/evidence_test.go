package ocm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// ocmBody is CS's own error for status, as Clusters Service words it.
func ocmBody(status int, reason string) string {
	return fmt.Sprintf(`{"kind":"Error","id":"%d","href":"/api/clusters_mgmt/v1/errors/%d","code":"CLUSTERS-MGMT-%d","reason":%q,"operation_id":"7f6e"}`,
		status, status, status, reason)
}

// TestEvidenceTable is docs/failures.md's table, "what counts as CS's
// word": every status × body shape through the real client over a
// loopback socket, for a read, a create and a delete. Only CS's own error
// body makes an answer absent, exists or refused; the rest is no evidence.
func TestEvidenceTable(t *testing.T) {
	const json, html, text = "application/json", "text/html", "text/plain"
	gateway404 := `{"statusCode":404,"message":"Resource not found"}`
	tests := []struct {
		name   string
		status int
		ctype  string
		body   string
		want   cs.Class
	}{
		{"CS's 404", 404, json, ocmBody(404, "Cluster 'x' not found"), cs.Absent},
		{"CS's 404, charset", 404, json + "; charset=utf-8", ocmBody(404, "Cluster 'x' not found"), cs.Absent},
		{"gateway 404", 404, json, gateway404, cs.Unrecognized},
		{"empty JSON 404", 404, json, "", cs.Unrecognized},
		{"{} 404", 404, json, "{}", cs.Unrecognized},
		{"HTML 404", 404, html, "<html><body>Not Found</body></html>", cs.Unrecognized},
		{"text 404", 404, text, "404 page not found", cs.Unrecognized},
		{"OCM 404 with the wrong id", 404, json, strings.Replace(ocmBody(404, "x"), `"id":"404"`, `"id":"500"`, 1), cs.Unrecognized},
		{"OCM 404 without a code", 404, json, `{"kind":"Error","id":"404","reason":"Cluster 'x' not found"}`, cs.Unrecognized},
		{"OCM 404 without a reason", 404, json, `{"kind":"Error","id":"404","code":"CLUSTERS-MGMT-404"}`, cs.Unrecognized},
		{"CS's 409", 409, json, ocmBody(409, "Cluster with identifier 'x' already exists"), cs.Exists},
		{"gateway 409", 409, json, `{"error":"conflict"}`, cs.Unrecognized},
		{"CS's 400 refusal", 400, json, ocmBody(400, "Attribute 'name' is required"), cs.Refused},
		{"CS's 400 with 'not now' words", 400, json, ocmBody(400, "Cluster 'x' is in state 'installing', can't update"), cs.Refused}, // words are never read
		{"empty 400", 400, json, "", cs.Unrecognized},
		{"{} 400", 400, json, "{}", cs.Unrecognized},
		{"gateway 400", 400, json, `{"statusCode":400,"message":"Bad Request"}`, cs.Unrecognized},
		{"OCM 400 without a reason", 400, json, `{"kind":"Error","id":"400","code":"CLUSTERS-MGMT-400","reason":""}`, cs.Unrecognized},
		{"CS's 422", 422, json, ocmBody(422, "unprocessable"), cs.Refused},
		{"421 with CS's body", 421, json, ocmBody(421, "misdirected"), cs.NotNow},
		{"421 empty", 421, json, "", cs.NotNow},
		{"423", 423, json, ocmBody(423, "locked"), cs.NotNow},
		{"425", 425, json, "", cs.NotNow},
		{"408", 408, text, "timeout", cs.NotNow},
		{"429", 429, json, "", cs.Unavailable},
		{"503 gateway", 503, html, "<html>busy</html>", cs.Unavailable},
		{"500", 500, json, ocmBody(500, "boom"), cs.Failed},
		{"401 gateway", 401, json, `{"message":"no token"}`, cs.Denied},
	}
	calls := []struct {
		name string
		do   func(*Client) error
	}{
		{"GET", func(c *Client) error {
			_, err := c.GetCluster(context.Background(), cs.ClusterHref(clusterID(1)))
			return err
		}},
		{"POST", func(c *Client) error {
			_, err := c.PostCluster(context.Background(), cs.ClusterSpec{ID: clusterID(1), Name: "c1",
				Azure: cs.AzureRef{SubscriptionID: "s", ResourceGroupName: "g", ResourceName: "c1"}})
			return err
		}},
		{"DELETE", func(c *Client) error { return c.DeleteCluster(context.Background(), cs.ClusterHref(clusterID(1))) }},
	}
	for _, tc := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", tc.ctype)
			w.WriteHeader(tc.status)
			fmt.Fprint(w, tc.body)
		}))
		c := connect(t, Config{URL: srv.URL})
		for _, call := range calls {
			t.Run(tc.name+"/"+call.name, func(t *testing.T) {
				err := call.do(c)
				if got := cs.Classify(err); got != tc.want {
					t.Fatalf("Classify = %s, want %s (err: %v)", got, tc.want, err)
				}
				var u *cs.UnrecognizedAnswer
				if errors.As(err, &u) && u.Method != "" { // described by the transport, not the SDK's empty body
					if u.Status != tc.status || u.Bytes != len(tc.body) || u.ContentType != tc.ctype {
						t.Errorf("answer described as %+v; want status %d, %d bytes, %q", u, tc.status, len(tc.body), tc.ctype)
					}
				}
				if tc.body != "" && err != nil && strings.Contains(err.Error(), tc.body) {
					t.Errorf("error quotes the body: %v", err)
				}
			})
		}
		srv.Close()
	}
}
