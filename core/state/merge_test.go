package state

import (
	"testing"

	"github.com/hcpops/hcpops/core/arm"
)

func st(state arm.ProvisioningState, msg, source string) *OperationState {
	return &OperationState{Source: source, ProvisioningState: state, Message: msg}
}

// TestCompareOperationState is ARO-HCP's table plus the whole priority order.
func TestCompareOperationState(t *testing.T) {
	for _, tc := range []struct {
		lhs, rhs *OperationState
		want     int
	}{
		{nil, nil, 0},
		{nil, st(succeeded, "", ""), -1},
		{st(succeeded, "", ""), nil, 1},
		{st(succeeded, "", ""), st(provisioning, "", ""), 1},
		{st(deleting, "", ""), st(provisioning, "", ""), -1},
		{st(failed, "a", ""), st(failed, "b", ""), -1},
		{st(failed, "b", ""), st(failed, "a", ""), 1},
		{st(failed, "a", "x"), st(failed, "a", "y"), 0},
		{st("", "", ""), st(failed, "", ""), -1},
	} {
		if got := CompareOperationState(tc.lhs, tc.rhs); got != tc.want {
			t.Errorf("Compare(%+v, %+v) = %d, want %d", tc.lhs, tc.rhs, got, tc.want)
		}
	}
	order := []arm.ProvisioningState{"", failed, canceled, deleting, provisioning, awaiting, updating, accepted, succeeded}
	for i := 0; i+1 < len(order); i++ {
		if CompareOperationState(st(order[i], "z", ""), st(order[i+1], "a", "")) != -1 {
			t.Errorf("%q should sort before %q", order[i], order[i+1])
		}
	}
	wantPriority := map[arm.ProvisioningState]int{"": -1, failed: 0, canceled: 10, deleting: 20, provisioning: 30,
		awaiting: 35, updating: 40, accepted: 50, succeeded: 100, "Bogus": 0}
	for s, p := range wantPriority {
		if priority(s) != p {
			t.Errorf("priority(%q) = %d, want %d", s, priority(s), p)
		}
	}
}

// TestPickWorstOperationState is ARO-HCP's table.
func TestPickWorstOperationState(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      []*OperationState
		want    *OperationState
		wantErr string
	}{
		{"nil", nil, nil, "no operation states"},
		{"empty", []*OperationState{}, nil, "no operation states"},
		{"empty state", []*OperationState{st("", "ignored", "")}, nil, "empty provisioning state"},
		{"one", []*OperationState{st(failed, "first failure", "")}, st(failed, "[<no_source>] first failure", ""), ""},
		{"sourced", []*OperationState{st(failed, "NotReady: cluster is not ready", "hypershiftHostedCluster")},
			st(failed, "[hypershiftHostedCluster] NotReady: cluster is not ready", ""), ""},
		{"three", []*OperationState{st(failed, "a", ""), st(failed, "b", ""), st(failed, "c", "")},
			st(failed, "[<no_source>] a; [<no_source>] b; [<no_source>] c", ""), ""},
		{"two sources", []*OperationState{st(failed, "a", "checkA"), st(failed, "b", "checkB")},
			st(failed, "[checkA] a; [checkB] b", ""), ""},
		{"leading run only", []*OperationState{st(failed, "worst", ""), st(succeeded, "ignored", "")},
			st(failed, "[<no_source>] worst", ""), ""},
		{"no message", []*OperationState{st(failed, "", "checkA")}, st(failed, "[checkA] <no_message>", ""), ""},
		{"nil first", []*OperationState{nil}, nil, "empty provisioning state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PickWorstOperationState(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || *got != *tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestDecideSortsFirst(t *testing.T) {
	in := []*OperationState{st(succeeded, "done", "cs"), st(provisioning, "b", "y"), st(provisioning, "a", "x"), st(accepted, "", "z")}
	got, err := Decide(arm.CodeInternalServerError, Merged, in...)
	if err != nil || got.State != provisioning || got.Message() != "[x] a; [y] b" {
		t.Errorf("Decide = %+v (%q), %v", got, got.Message(), err)
	}
	if in[0].ProvisioningState != succeeded {
		t.Error("Decide reordered its input")
	}
}

func TestNeedToPatchOperation(t *testing.T) {
	errA := &arm.CloudErrorBody{Code: "InternalServerError", Message: "a", Details: []arm.CloudErrorBody{{Code: "x"}}}
	errA2 := &arm.CloudErrorBody{Code: "InternalServerError", Message: "a", Details: []arm.CloudErrorBody{{Code: "x"}}}
	errB := &arm.CloudErrorBody{Code: "InternalServerError", Message: "b"}
	for _, tc := range []struct {
		name     string
		cur      arm.ProvisioningState
		curErr   *arm.CloudErrorBody
		uri      string
		next     arm.ProvisioningState
		nextErr  *arm.CloudErrorBody
		expected bool
	}{
		{"nothing changed", provisioning, nil, "", provisioning, nil, false},
		{"status changed", accepted, nil, "", provisioning, nil, true},
		{"same error, another pointer", failed, errA, "", failed, errA2, false},
		{"error changed", failed, errA, "", failed, errB, true},
		{"error appears", provisioning, nil, "", provisioning, errB, true},
		{"nil new error never clears", failed, errA, "", failed, nil, false},
		{"terminal with notification pending", failed, errA, "https://arm/n", failed, errA2, true},
		{"non-terminal with uri", provisioning, nil, "https://arm/n", provisioning, nil, false},
		{"succeeded, notified", succeeded, nil, "", succeeded, nil, false},
		{"succeeded, notification pending", succeeded, nil, "https://arm/n", succeeded, nil, true},
	} {
		if got := NeedToPatchOperation(tc.cur, tc.curErr, tc.uri, tc.next, tc.nextErr); got != tc.expected {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.expected)
		}
	}
}

// TestDecide: the worst source wins; a failure keeps CS's own code and
// details when a failing source has them, else upstream's code for the
// request, with the merged message (Merged) or the source's own (Bare).
func TestDecide(t *testing.T) {
	ocm3055 := &arm.CloudErrorBody{Code: "OCM3055", Message: "subnet is in use"}
	multi := &arm.CloudErrorBody{Code: arm.CodeMultipleErrorsOccurred, Message: MessageMultipleInflightErrors,
		Details: []arm.CloudErrorBody{{Code: arm.CodeInternalServerError, Message: "a"}, {Code: arm.CodeInternalServerError, Message: "b"}}}
	placeholder := &arm.CloudErrorBody{Code: arm.CodeInternalServerError, Message: "node pool creation failed"}
	src := func(s *OperationState, name string) *OperationState { return s.WithSource(name) }
	for _, tc := range []struct {
		name     string
		fallback string
		wording  FailureMessage
		in       []*OperationState
		state    arm.ProvisioningState
		message  string
		err      *arm.CloudErrorBody
	}{
		{"succeeded needs every source", arm.CodeInvalidRequestContent, Merged,
			[]*OperationState{src(NewOperationState(succeeded, ""), "status"), src(NewOperationState(updating, "replicas is 2, want 3"), "spec")},
			updating, "[spec] replicas is 2, want 3", nil},
		{"placeholder code gives way to the request's", arm.CodeInvalidRequestContent, Merged,
			[]*OperationState{src(FromConversion(failed, placeholder), "clusterServiceNodePoolStatus"), src(NewOperationState(succeeded, ""), "spec")},
			failed, "[clusterServiceNodePoolStatus] node pool creation failed",
			&arm.CloudErrorBody{Code: arm.CodeInvalidRequestContent, Message: "[clusterServiceNodePoolStatus] node pool creation failed"}},
		{"CS code kept", arm.CodeInternalServerError, Merged,
			[]*OperationState{src(FromConversion(failed, ocm3055), "clusterServiceClusterStatus")},
			failed, "[clusterServiceClusterStatus] subnet is in use",
			&arm.CloudErrorBody{Code: "OCM3055", Message: "[clusterServiceClusterStatus] subnet is in use"}},
		{"details kept", arm.CodeInternalServerError, Merged,
			[]*OperationState{src(FromConversion(failed, multi), "clusterServiceClusterStatus")},
			failed, "[clusterServiceClusterStatus] " + MessageMultipleInflightErrors,
			&arm.CloudErrorBody{Code: arm.CodeMultipleErrorsOccurred, Message: "[clusterServiceClusterStatus] " + MessageMultipleInflightErrors, Details: multi.Details}},
		{"bare is the source's own error", arm.CodeInternalServerError, Bare,
			[]*OperationState{src(FromConversion(failed, placeholder), "clusterServiceNodePoolStatus")},
			failed, "[clusterServiceNodePoolStatus] node pool creation failed", placeholder},
		{"bare without an error body", arm.CodeInternalServerError, Bare,
			[]*OperationState{src(NewOperationState(failed, "gone wrong"), "x")},
			failed, "[x] gone wrong", &arm.CloudErrorBody{Code: arm.CodeInternalServerError, Message: "gone wrong"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decide(tc.fallback, tc.wording, tc.in...)
			if err != nil {
				t.Fatal(err)
			}
			if d.State != tc.state || d.Message() != tc.message || !d.Error.Equal(tc.err) {
				t.Errorf("Decide = %s %q %+v; want %s %q %+v", d.State, d.Message(), d.Error, tc.state, tc.message, tc.err)
			}
			if d.Error != nil && tc.in[0].Error != nil && d.Error == tc.in[0].Error {
				t.Error("Decide returned a source's error body itself; a caller may change it")
			}
		})
	}
	if _, err := Decide(arm.CodeInternalServerError, Merged); err == nil || err.Error() != "no operation states" {
		t.Errorf("Decide of no sources = %v, want PickWorstOperationState's error", err)
	}
	if _, err := Decide(arm.CodeInternalServerError, Merged, NewOperationState("", "x")); err == nil || err.Error() != "empty provisioning state" {
		t.Errorf("Decide of an empty state = %v, want PickWorstOperationState's error", err)
	}
}
