package clusterservice

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
)

func TestErrorPredicates(t *testing.T) {
	bad := func(reason string) error {
		return fmt.Errorf("patching: %w", &Error{Status: 400, Code: "CLUSTERS-MGMT-400", Reason: reason})
	}
	type preds struct{ notFound, conflict, retryable, busy, uninstalling, revoking, refused bool }
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
		{"other 400", bad("Invalid replicas"), preds{refused: true}},
		{"field refused", bad("Attribute 'issuer.url' must be an https URL, got 'http://x'"), preds{refused: true}},
		{"422", &Error{Status: 422, Reason: "unprocessable"}, preds{refused: true}},
		{"cluster uninstalling on a create", bad("Cluster is in state 'uninstalling', can't create node pools"), preds{}},
		{"401", &Error{Status: 401}, preds{}},
		{"403", &Error{Status: 403}, preds{}},
		{"408", &Error{Status: 408}, preds{}},
		{"busy words on a 500", &Error{Status: 500, Reason: "Cluster is in state 'x', can't update"}, preds{retryable: true}},
		{"not a CS error", errors.New("Cluster is in state 'x', can't update"), preds{retryable: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := preds{IsNotFound(tc.err), IsConflict(tc.err), IsRetryable(tc.err), IsBusy(tc.err),
				IsAlreadyUninstalling(tc.err), IsRevocationRequested(tc.err), IsRefused(tc.err)}
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

// TestIsUnavailable: a refused connection (a real one, to a closed port on
// loopback) and the statuses of a CS that cannot serve say "all of CS";
// a timeout, garbage and refusals of one request do not.
func TestIsUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, refused := http.Get("http://" + addr + "/api/aro_hcp/v1alpha1/clusters")
	if refused == nil {
		t.Fatalf("GET from closed port %s succeeded", addr)
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"connection refused", fmt.Errorf("getting cluster: %w", refused), true},
		{"name not resolved", &net.DNSError{Err: "no such host", Name: "cs.invalid", IsNotFound: true}, true},
		{"429", &Error{Status: 429}, true},
		{"502", &Error{Status: 502}, true},
		{"503 wrapped", fmt.Errorf("x: %w", &Error{Status: 503}), true},
		{"504", &Error{Status: 504}, true},
		{"call timed out", fmt.Errorf("get: %w", context.DeadlineExceeded), false},
		{"read timed out", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("i/o timeout")}, false},
		{"garbage answer", errors.New("invalid character 'x' looking for beginning of value"), false},
		{"500", &Error{Status: 500}, false},
		{"400 refusal", &Error{Status: 400, Reason: "Invalid replicas"}, false},
		{"404", &Error{Status: 404}, false},
	} {
		if got := IsUnavailable(tc.err); got != tc.want {
			t.Errorf("%s: IsUnavailable(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
