package clusterservice

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestErrorPredicates(t *testing.T) {
	bad := func(reason string) error {
		return fmt.Errorf("patching: %w", &Error{Status: 400, Code: "CLUSTERS-MGMT-400", Reason: reason})
	}
	type preds struct{ notFound, conflict, retryable, busy, uninstalling, revoking bool }
	tests := []struct {
		name string
		err  error
		want preds
	}{
		{"nil", nil, preds{}},
		{"transport failure", context.DeadlineExceeded, preds{retryable: true}},
		{"404", &Error{Status: 404}, preds{notFound: true}},
		{"409", &Error{Status: 409}, preds{conflict: true}},
		{"429", &Error{Status: 429}, preds{retryable: true}},
		{"503 wrapped", fmt.Errorf("x: %w", &Error{Status: 503}), preds{retryable: true}},
		// Reasons as real CS sends them (clusters-service-api.md).
		{"cluster installing", bad("Cluster '2lg4' is in state 'installing', can't update"), preds{busy: true}},
		{"node pool cluster busy", bad("Node pools can only be updated on clusters in an updatable state. The cluster requested is in 'updating' state."), preds{busy: true}},
		{"external auth parent uninstalling", bad("Cannot delete ExternalAuth: its parent cluster must be in deletable state. Parent cluster state: 'uninstalling'"), preds{uninstalling: true}},
		{"node pool parent installing", bad("Cannot delete node pool: its parent cluster must be in a deletable state. Parent cluster state: 'installing'"), preds{}},
		{"revocation running", bad("Break glass credentials of cluster 'x': revocation has already been requested"), preds{revoking: true}},
		{"other 400", bad("Invalid replicas"), preds{}},
		{"busy words on a 500", &Error{Status: 500, Reason: "Cluster is in state 'x', can't update"}, preds{retryable: true}},
		{"not a CS error", errors.New("Cluster is in state 'x', can't update"), preds{retryable: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := preds{IsNotFound(tc.err), IsConflict(tc.err), IsRetryable(tc.err), IsBusy(tc.err),
				IsAlreadyUninstalling(tc.err), IsRevocationRequested(tc.err)}
			if got != tc.want {
				t.Errorf("predicates = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestStatusOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("dial tcp: refused"), 0},
		{&Error{Status: 418}, 418},
		{fmt.Errorf("a: %w", fmt.Errorf("b: %w", &Error{Status: 502})), 502},
	} {
		if got := StatusOf(tc.err); got != tc.want {
			t.Errorf("StatusOf(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
