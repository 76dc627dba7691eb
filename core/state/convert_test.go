package state

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
)

const (
	accepted     = arm.ProvisioningStateAccepted
	provisioning = arm.ProvisioningStateProvisioning
	updating     = arm.ProvisioningStateUpdating
	deleting     = arm.ProvisioningStateDeleting
	succeeded    = arm.ProvisioningStateSucceeded
	failed       = arm.ProvisioningStateFailed
	canceled     = arm.ProvisioningStateCanceled
	awaiting     = arm.ProvisioningStateAwaitingSecret
)

var allStates = []arm.ProvisioningState{accepted, provisioning, updating, deleting, awaiting, succeeded, failed, canceled}

var allRequests = []document.Request{"", document.RequestCreate, document.RequestUpdate, document.RequestDelete,
	document.RequestRequestCredential, document.RequestRevokeCredentials, "unexpected"}

// TestConvertClusterStatusAROHCPTable is ARO-HCP's TestConvertClusterStatus
// (its operationutils tests) row for row: "–" is an empty request.
func TestConvertClusterStatusAROHCPTable(t *testing.T) {
	type row struct {
		state     string
		request   document.Request
		current   arm.ProvisioningState
		want      arm.ProvisioningState
		cloudErr  bool
		convError bool
	}
	rows := []row{
		{"error", "", accepted, failed, true, false},
		{"installing", "", accepted, provisioning, false, false},
		{"ready", "", accepted, succeeded, false, false},
		{"updating", "", accepted, updating, false, false},
		{"uninstalling", "", accepted, deleting, false, false},
	}
	for _, s := range []string{"hibernating", "powering_down", "resuming", "unknown", "waiting", "unexpected cluster state"} {
		rows = append(rows, row{s, "", accepted, accepted, false, true})
	}
	for _, s := range []string{"pending", "validating"} {
		rows = append(rows,
			row{s, document.RequestCreate, accepted, accepted, false, false},
			row{s, document.RequestCreate, provisioning, provisioning, false, false},
			row{s, document.RequestCreate, failed, failed, false, true},
			row{s, document.RequestUpdate, accepted, accepted, false, false},
			row{s, document.RequestUpdate, updating, updating, false, false},
			row{s, document.RequestUpdate, provisioning, provisioning, false, true},
			row{s, document.RequestDelete, deleting, deleting, false, false},
			row{s, document.RequestDelete, accepted, accepted, false, true},
			row{s, "unexpected", accepted, accepted, false, true},
		)
	}
	for _, r := range rows {
		name := fmt.Sprintf("%s/%s/%s", r.state, r.request, r.current)
		got, cerr, err := ConvertClusterStatus(context.Background(), nil, "/api/aro_hcp/v1alpha1/clusters/c1",
			clusterservice.ClusterStatus{State: r.state}, r.request, r.current)
		if got != r.want || (cerr != nil) != r.cloudErr || (err != nil) != r.convError {
			t.Errorf("%s: got (%s, %+v, %v), want (%s, cloud error %v, conversion error %v)",
				name, got, cerr, err, r.want, r.cloudErr, r.convError)
		}
	}
}

// fakeInflight is an in-memory inflight-check reader.
type fakeInflight struct {
	checks []clusterservice.InflightCheck
	err    error
	asked  []string
}

func (f *fakeInflight) GetInflightChecks(_ context.Context, href string) ([]clusterservice.InflightCheck, error) {
	f.asked = append(f.asked, href)
	return f.checks, f.err
}

func check(name, state string, details map[string]any) clusterservice.InflightCheck {
	return clusterservice.InflightCheck{ID: name, Name: name, State: state, Details: details}
}

func TestConvertClusterStatusOCM4001(t *testing.T) {
	const href = "/api/aro_hcp/v1alpha1/clusters/c1"
	status := clusterservice.ClusterStatus{State: "error", ProvisionErrorCode: "OCM4001", ProvisionErrorMessage: "inflight checks failed"}
	passed := check("dns", clusterservice.InflightCheckPassed, map[string]any{"error": "ignored"})
	for _, tc := range []struct {
		name   string
		checks []clusterservice.InflightCheck
		want   *arm.CloudErrorBody
	}{
		{"no failed check", []clusterservice.InflightCheck{passed},
			&arm.CloudErrorBody{Code: "InternalServerError"}},
		{"one failed check", []clusterservice.InflightCheck{passed, check("egress", "failed", map[string]any{"error": "egress blocked"})},
			&arm.CloudErrorBody{Code: "InternalServerError", Message: "egress blocked"}},
		{"three failed checks", []clusterservice.InflightCheck{
			check("a", "failed", map[string]any{"error": "a broke"}),
			passed,
			check("b", "failed", map[string]any{"error": "b broke", "other": 1}),
			check("c", "failed", map[string]any{"error": 42}), // not a string: no message
		}, &arm.CloudErrorBody{Code: "MultipleErrorsOccurred", Message: "Cluster provisioning failed due to multiple errors",
			Details: []arm.CloudErrorBody{
				{Code: "InternalServerError", Message: "a broke"},
				{Code: "InternalServerError", Message: "b broke"},
				{Code: "InternalServerError"},
			}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &fakeInflight{checks: tc.checks}
			got, cerr, err := ConvertClusterStatus(context.Background(), r, href, status, document.RequestCreate, provisioning)
			if err != nil || got != failed || !cerr.Equal(tc.want) {
				t.Errorf("got (%s, %+v, %v), want (Failed, %+v)", got, cerr, err, tc.want)
			}
			if len(r.asked) != 1 || r.asked[0] != href {
				t.Errorf("inflight checks read for %v", r.asked)
			}
		})
	}

	// A failed read is a conversion error: keep the current state.
	boom := errors.New("cs down")
	got, cerr, err := ConvertClusterStatus(context.Background(), &fakeInflight{err: boom}, href, status, document.RequestCreate, provisioning)
	if !errors.Is(err, boom) || got != provisioning || cerr != nil {
		t.Errorf("read failure: (%s, %+v, %v)", got, cerr, err)
	}
	// No reader at all must not panic.
	if _, _, err := ConvertClusterStatus(context.Background(), nil, href, status, document.RequestCreate, provisioning); err == nil {
		t.Error("OCM4001 without a reader accepted")
	}
}

func TestConvertClusterStatusErrorBody(t *testing.T) {
	for _, tc := range []struct {
		status clusterservice.ClusterStatus
		want   arm.CloudErrorBody
	}{
		{clusterservice.ClusterStatus{State: "error", ProvisionErrorCode: "OCM3055", ProvisionErrorMessage: "quota", Description: "d"},
			arm.CloudErrorBody{Code: "OCM3055", Message: "quota"}},
		{clusterservice.ClusterStatus{State: "error", Description: "it broke"},
			arm.CloudErrorBody{Code: "InternalServerError", Message: "it broke"}},
		{clusterservice.ClusterStatus{State: "error"},
			arm.CloudErrorBody{Code: "InternalServerError"}},
	} {
		got, cerr, err := ConvertClusterStatus(context.Background(), nil, "h", tc.status, document.RequestUpdate, updating)
		if err != nil || got != failed || !cerr.Equal(&tc.want) {
			t.Errorf("%+v: got (%s, %+v, %v), want %+v", tc.status, got, cerr, err, tc.want)
		}
	}
}

// TestConvertClusterStatusEveryCombination runs every CS state x request x
// current status and checks each result against the reference's rules.
func TestConvertClusterStatusEveryCombination(t *testing.T) {
	states := []string{"error", "hibernating", "installing", "pending", "powering_down", "ready", "resuming",
		"uninstalling", "unknown", "updating", "validating", "waiting", ""}
	for _, s := range states {
		for _, req := range allRequests {
			for _, cur := range allStates {
				got, cerr, err := ConvertClusterStatus(context.Background(), nil, "h", clusterservice.ClusterStatus{State: s}, req, cur)
				want, wantCloud, wantErr := expectCluster(s, req, cur)
				if got != want || (cerr != nil) != wantCloud || (err != nil) != wantErr {
					t.Errorf("%q/%q/%s: got (%s, %v, %v), want (%s, %v, %v)", s, req, cur, got, cerr, err, want, wantCloud, wantErr)
				}
				if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", s)) && s != "pending" && s != "validating" {
					t.Errorf("%q/%q/%s: error %q does not name the state", s, req, cur, err)
				}
			}
		}
	}
}

func expectCluster(s string, req document.Request, cur arm.ProvisioningState) (arm.ProvisioningState, bool, bool) {
	switch s {
	case "error":
		return failed, true, false
	case "installing":
		return provisioning, false, false
	case "updating":
		return updating, false, false
	case "uninstalling":
		return deleting, false, false
	case "ready":
		if req == document.RequestDelete {
			return cur, false, false
		}
		return succeeded, false, false
	case "pending", "validating":
		ok := false
		switch req {
		case document.RequestCreate:
			ok = cur == accepted || cur == provisioning
		case document.RequestUpdate:
			ok = cur == accepted || cur == updating
		case document.RequestDelete:
			ok = cur == deleting
		}
		return cur, false, !ok
	}
	return cur, false, true
}

func TestConvertNodePoolStatusEveryCombination(t *testing.T) {
	states := []string{"validating", "pending", "validating_update", "pending_update", "installing", "ready",
		"updating", "uninstalling", "recoverable_error", "error", "hibernating", ""}
	for _, s := range states {
		for _, req := range allRequests {
			for _, cur := range allStates {
				got, cerr, err := ConvertNodePoolStatus(clusterservice.NodePoolStatus{State: s, Message: "m"}, req, cur)
				var want arm.ProvisioningState
				var wantCloud *arm.CloudErrorBody
				wantErr := false
				switch s {
				case "validating", "pending", "validating_update", "pending_update":
					want, wantErr = cur, cur != accepted
				case "installing":
					want = provisioning
				case "ready":
					want = succeeded
					if req == document.RequestDelete {
						want = cur
					}
				case "updating":
					want = updating
				case "uninstalling":
					want = deleting
				case "recoverable_error", "error":
					want, wantCloud = failed, &arm.CloudErrorBody{Code: "InternalServerError", Message: "m"}
				default:
					want, wantErr = cur, true
				}
				if got != want || !cerr.Equal(wantCloud) || (err != nil) != wantErr {
					t.Errorf("%q/%q/%s: got (%s, %+v, %v), want (%s, %+v, err %v)", s, req, cur, got, cerr, err, want, wantCloud, wantErr)
				}
			}
		}
	}
	// CS gave no message: kept empty, as ARO-HCP keeps it.
	_, cerr, _ := ConvertNodePoolStatus(clusterservice.NodePoolStatus{State: "error"}, document.RequestCreate, provisioning)
	if !cerr.Equal(&arm.CloudErrorBody{Code: "InternalServerError", Message: ""}) {
		t.Errorf("no-message error: %+v", cerr)
	}
}

func TestConvertExternalAuthStatusEveryCombination(t *testing.T) {
	for _, s := range []string{"ready", "error", "uninstalling", "installing", "pending", ""} {
		for _, req := range allRequests {
			for _, cur := range allStates {
				got, cerr, err := ConvertExternalAuthStatus(clusterservice.ExternalAuthStatus{State: s, Message: "m"}, req, cur)
				var want arm.ProvisioningState
				var wantCloud *arm.CloudErrorBody
				wantErr := false
				switch s {
				case "ready":
					want = succeeded
					if req == document.RequestDelete {
						want = cur
					}
				case "error":
					want, wantCloud = failed, &arm.CloudErrorBody{Code: "InternalServerError", Message: "m"}
				case "uninstalling":
					want = deleting
				default:
					want, wantErr = cur, true
				}
				if got != want || !cerr.Equal(wantCloud) || (err != nil) != wantErr {
					t.Errorf("%q/%q/%s: got (%s, %+v, %v), want (%s, %+v, err %v)", s, req, cur, got, cerr, err, want, wantCloud, wantErr)
				}
			}
		}
	}
	_, cerr, _ := ConvertExternalAuthStatus(clusterservice.ExternalAuthStatus{State: "error"}, document.RequestCreate, accepted)
	if !cerr.Equal(&arm.CloudErrorBody{Code: "InternalServerError", Message: ""}) {
		t.Errorf("no-message error: %+v", cerr)
	}
}

func TestConvertCredentialStatus(t *testing.T) {
	for _, tc := range []struct {
		in        string
		want      arm.ProvisioningState
		wantCloud *arm.CloudErrorBody
		wantErr   bool
	}{
		{"created", provisioning, nil, false},
		{"issued", succeeded, nil, false},
		{"failed", failed, &arm.CloudErrorBody{Code: "InternalServerError", Message: "Failed to provision cluster credential"}, false},
		{"awaiting_revocation", accepted, nil, true},
		{"revoked", accepted, nil, true},
		{"expired", accepted, nil, true},
		{"", accepted, nil, true},
	} {
		got, cerr, err := ConvertCredentialStatus(tc.in, accepted)
		if got != tc.want || !cerr.Equal(tc.wantCloud) || (err != nil) != tc.wantErr {
			t.Errorf("%q: got (%s, %+v, %v)", tc.in, got, cerr, err)
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.in)) {
			t.Errorf("%q: error %q does not name the value", tc.in, err)
		}
	}
}
