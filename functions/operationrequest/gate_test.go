package operationrequest

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/armread"
	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/harness/store/embedded/embeddedtest"
)

// TestGateAsUpstream: the gates answer an operation path as ARO-HCP's
// middleware does, api-version first, then the subscription, before the
// rest of the path is read.
func TestGateAsUpstream(t *testing.T) {
	eng, err := armread.NewReadService(armread.ReadDeps{
		Store:          embeddedtest.Open(t),
		ClusterService: unusedCS{},
	}, armread.ReadConfig{})
	if err != nil {
		t.Fatal(err)
	}
	const op = "0b7e6f4e-3a59-4c7e-a1b0-6f1f3f6f2a10"
	for _, tc := range []struct {
		name                  string
		req                   Request
		status                int
		code, message, target string
	}{
		{"no subscription", Request{Location: "eastus", OperationID: op, APIVersion: "2024-06-10-preview"},
			http.StatusBadRequest, arm.CodeInvalidParameter, "The request is missing required parameter 'subscriptionid'.", ""},
		{"no subscription, no api-version", Request{Location: "eastus", OperationID: op},
			http.StatusBadRequest, arm.CodeInvalidParameter, "The request is missing required parameter 'api-version'.", "api-version"},
		{"api-version twice", Request{Location: "eastus", OperationID: op, SubscriptionID: "1d3378d3-5a3f-4712-85a1-2485495dfc4b",
			APIVersion: "2024-06-10-preview", APIVersions: 2},
			http.StatusBadRequest, arm.CodeInvalidParameter, "The query parameter 'api-version' was given 2 times; give it once.", "api-version"},
		{"not an operation path", Request{}, http.StatusBadRequest, CodeInvalidSubscriptionID,
			"The subscription id '' in the path is not a valid UUID.", "subscriptionId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ans, ok := Gate(context.Background(), eng, slog.New(slog.DiscardHandler), tc.req)
			if ok {
				t.Fatal("the gate let the request through")
			}
			var body struct{ Error arm.CloudErrorBody }
			if err := json.Unmarshal(ans.Body, &body); err != nil {
				t.Fatal(err)
			}
			if ans.Status != tc.status || body.Error.Code != tc.code || body.Error.Message != tc.message || body.Error.Target != tc.target {
				t.Errorf("answer = %d %+v, want %d %s %q target %q", ans.Status, body.Error, tc.status, tc.code, tc.message, tc.target)
			}
		})
	}
}

// unusedCS is a Clusters Service the gates never call.
type unusedCS struct{ clusterservice.Client }
