package clusterservice

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
)

// TestClassify: every CS answer sorts into one class, and the reasons CS
// words in English keep their own meanings beside it. The refused
// connection is a real one, to a closed port on loopback.
func TestClassify(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, dialed := http.Get("http://" + addr + "/api/aro_hcp/v1alpha1/clusters")
	if dialed == nil {
		t.Fatalf("GET from closed port %s succeeded", addr)
	}
	bad := func(reason string) error {
		return fmt.Errorf("patching: %w", &Error{Status: 400, Code: "CLUSTERS-MGMT-400", Reason: reason})
	}
	type words struct{ busy, uninstalling, revoking bool }
	tests := []struct {
		name  string
		err   error
		class Class
		words words
	}{
		{"nil", nil, Answered, words{}},
		{"call timed out", fmt.Errorf("get: %w", context.DeadlineExceeded), Failed, words{}},
		{"read timed out", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("i/o timeout")}, Failed, words{}},
		{"garbage answer", errors.New("invalid character 'x' looking for beginning of value"), Failed, words{}},
		{"unreadable answer", &UnreadableError{Call: "GET x", Status: 200, Problem: "not JSON"}, Failed, words{}},
		{"connection refused", fmt.Errorf("getting cluster: %w", dialed), Unavailable, words{}},
		{"name not resolved", &net.DNSError{Err: "no such host", Name: "cs.invalid", IsNotFound: true}, Unavailable, words{}},
		{"404", &Error{Status: 404, Reason: "Cluster 'x' not found"}, Absent, words{}},
		{"409", &Error{Status: 409, Reason: "Cluster 'x' already exists"}, Exists, words{}},
		{"404 without a reason", &Error{Status: 404}, Unrecognized, words{}},
		{"429", &Error{Status: 429}, Unavailable, words{}},
		{"502", &Error{Status: 502}, Unavailable, words{}},
		{"503 wrapped", fmt.Errorf("x: %w", &Error{Status: 503}), Unavailable, words{}},
		{"504", &Error{Status: 504}, Unavailable, words{}},
		{"500", &Error{Status: 500}, Failed, words{}},
		{"401", &Error{Status: 401}, Denied, words{}},
		{"403", &Error{Status: 403}, Denied, words{}},
		{"408", &Error{Status: 408}, NotNow, words{}},
		// Reasons as real CS sends them (clusters-service-api.md).
		{"cluster installing", bad("Cluster '2lg4' is in state 'installing', can't update"), NotNow, words{busy: true}},
		{"node pool cluster busy", bad("Node pools can only be updated on clusters in an updatable state. The cluster requested is in 'updating' state."), NotNow, words{busy: true}},
		{"external auth parent uninstalling", bad("Cannot delete ExternalAuth: its parent cluster must be in deletable state. Parent cluster state: 'uninstalling'"), NotNow, words{uninstalling: true}},
		{"node pool parent installing", bad("Cannot delete node pool: its parent cluster must be in a deletable state. Parent cluster state: 'installing'"), NotNow, words{}},
		{"revocation running", bad("Break glass credentials of cluster 'x': revocation has already been requested"), NotNow, words{revoking: true}},
		{"cluster uninstalling on a create", bad("Cluster is in state 'uninstalling', can't create node pools"), NotNow, words{}},
		{"other 400", bad("Invalid replicas"), Refused, words{}},
		{"field refused", bad("Attribute 'issuer.url' must be an https URL, got 'http://x'"), Refused, words{}},
		{"422", &Error{Status: 422, Reason: "unprocessable"}, Refused, words{}},
		{"refusal without a reason", &Error{Status: 400, Code: "CLUSTERS-MGMT-400"}, Unrecognized, words{}},
		{"421", &Error{Status: 421, Reason: "misdirected"}, NotNow, words{}},
		{"423", &Error{Status: 423, Reason: "locked"}, NotNow, words{}},
		{"425", &Error{Status: 425, Reason: "too early"}, NotNow, words{}},
		{"not CS's 404", fmt.Errorf("get: %w", &UnrecognizedAnswer{Status: 404, Shape: "an empty body"}), Unrecognized, words{}},
		{"not CS's 409", &UnrecognizedAnswer{Status: 409}, Unrecognized, words{}},
		{"not CS's 400", &UnrecognizedAnswer{Status: 400}, Unrecognized, words{}},
		{"not CS's 421", &UnrecognizedAnswer{Status: 421}, NotNow, words{}},
		{"not CS's 503", &UnrecognizedAnswer{Status: 503}, Unavailable, words{}},
		{"not CS's 500", &UnrecognizedAnswer{Status: 500}, Failed, words{}},
		{"not CS's 403", &UnrecognizedAnswer{Status: 403}, Denied, words{}},
		{"busy words on a 500", &Error{Status: 500, Reason: "Cluster is in state 'x', can't update"}, Failed, words{}},
		{"busy words, not from CS", errors.New("Cluster is in state 'x', can't update"), Failed, words{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.err); got != tc.class {
				t.Errorf("Classify(%v) = %s, want %s", tc.err, got, tc.class)
			}
			got := words{IsBusy(tc.err), IsAlreadyUninstalling(tc.err), IsRevocationRequested(tc.err)}
			if got != tc.words {
				t.Errorf("words = %+v, want %+v", got, tc.words)
			}
		})
	}
}

// TestWorking: only an answer, or a refusal of the request as such, is
// evidence that CS works.
func TestWorking(t *testing.T) {
	want := map[Class]bool{Answered: true, Absent: true, Exists: true, NotNow: true, Refused: true, Denied: true,
		Unavailable: false, Failed: false, Unrecognized: false}
	for c, w := range want {
		if c.Working() != w {
			t.Errorf("%s.Working() = %v, want %v", c, c.Working(), w)
		}
	}
	if len(want) != len(classNames) {
		t.Errorf("%d classes checked, %d defined", len(want), len(classNames))
	}
}
