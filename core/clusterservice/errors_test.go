package clusterservice

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
)

// TestClassify: every CS answer sorts into one class, on its status and
// the shape of its body, never its words. The refused
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
	tests := []struct {
		name  string
		err   error
		class Class
	}{
		{"nil", nil, Answered},
		{"call timed out", fmt.Errorf("get: %w", context.DeadlineExceeded), Failed},
		{"read timed out", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("i/o timeout")}, Failed},
		{"garbage answer", errors.New("invalid character 'x' looking for beginning of value"), Failed},
		{"unreadable answer", &UnreadableError{Call: "GET x", Status: 200, Problem: "not JSON"}, Failed},
		{"connection refused", fmt.Errorf("getting cluster: %w", dialed), Unavailable},
		{"name not resolved", &net.DNSError{Err: "no such host", Name: "cs.invalid", IsNotFound: true}, Unavailable},
		{"404", &Error{Status: 404, Reason: "Cluster 'x' not found"}, Absent},
		{"409", &Error{Status: 409, Reason: "Cluster 'x' already exists"}, Exists},
		{"404 without a reason", &Error{Status: 404}, Unrecognized},
		{"429", &Error{Status: 429}, Unavailable},
		{"502", &Error{Status: 502}, Unavailable},
		{"503 wrapped", fmt.Errorf("x: %w", &Error{Status: 503}), Unavailable},
		{"504", &Error{Status: 504}, Unavailable},
		{"500", &Error{Status: 500}, Failed},
		{"401", &Error{Status: 401}, Denied},
		{"403", &Error{Status: 403}, Denied},
		{"408", &Error{Status: 408}, NotNow},
		// Reasons as real CS sends them (clusters-service-api.md): the
		// words are never read, whatever they say; the lifecycle reads
		// CS's objects after a 400 (core/lifecycle/csrefusal.go).
		{"cluster installing", bad("Cluster '2lg4' is in state 'installing', can't update"), Refused},
		{"node pool cluster busy", bad("Node pools can only be updated on clusters in an updatable state. The cluster requested is in 'updating' state."), Refused},
		{"external auth parent uninstalling", bad("Cannot delete ExternalAuth: its parent cluster must be in deletable state. Parent cluster state: 'uninstalling'"), Refused},
		{"node pool parent installing", bad("Cannot delete node pool: its parent cluster must be in a deletable state. Parent cluster state: 'installing'"), Refused},
		{"revocation running", bad("Break glass credentials of cluster 'x': revocation has already been requested"), Refused},
		{"cluster uninstalling on a create", bad("Cluster is in state 'uninstalling', can't create node pools"), Refused},
		{"other 400", bad("Invalid replicas"), Refused},
		{"field refused", bad("Attribute 'issuer.url' must be an https URL, got 'http://x'"), Refused},
		{"422", &Error{Status: 422, Reason: "unprocessable"}, Refused},
		{"refusal without a reason", &Error{Status: 400, Code: "CLUSTERS-MGMT-400"}, Unrecognized},
		{"421", &Error{Status: 421, Reason: "misdirected"}, NotNow},
		{"423", &Error{Status: 423, Reason: "locked"}, NotNow},
		{"425", &Error{Status: 425, Reason: "too early"}, NotNow},
		{"not CS's 404", fmt.Errorf("get: %w", &UnrecognizedAnswer{Status: 404, Shape: "an empty body"}), Unrecognized},
		{"not CS's 409", &UnrecognizedAnswer{Status: 409}, Unrecognized},
		{"not CS's 400", &UnrecognizedAnswer{Status: 400}, Unrecognized},
		{"not CS's 421", &UnrecognizedAnswer{Status: 421}, NotNow},
		{"not CS's 503", &UnrecognizedAnswer{Status: 503}, Unavailable},
		{"not CS's 500", &UnrecognizedAnswer{Status: 500}, Failed},
		{"not CS's 403", &UnrecognizedAnswer{Status: 403}, Denied},
		{"busy words on a 500", &Error{Status: 500, Reason: "Cluster is in state 'x', can't update"}, Failed},
		{"busy words, not from CS", errors.New("Cluster is in state 'x', can't update"), Failed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.err); got != tc.class {
				t.Errorf("Classify(%v) = %s, want %s", tc.err, got, tc.class)
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
