package armread

import (
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// TestRetryAfter: ARM is told to come back after the next tick, except in
// the slow phases, where the wait grows with the time the operation has
// run, up to the cap; a terminal operation gets none.
func TestRetryAfter(t *testing.T) {
	e := newEnv(t)
	clk := e.Clock
	r, err := NewReadService(ReadDeps{Store: e.store, ClusterService: e.CS, Clock: clk},
		ReadConfig{RetryAfter: 10 * time.Second, RetryAfterSlow: 90 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		req    document.Request
		target string
		status arm.ProvisioningState
		ran    time.Duration
		want   time.Duration
	}{
		{"cluster create waiting for dispatch", document.RequestCreate, clusterRID("c1"), arm.ProvisioningStateAccepted, time.Hour, 10 * time.Second},
		{"cluster install, 20 s in", document.RequestCreate, clusterRID("c1"), arm.ProvisioningStateProvisioning, 20 * time.Second, 10 * time.Second},
		{"cluster install, 5 min in", document.RequestCreate, clusterRID("c1"), arm.ProvisioningStateProvisioning, 5 * time.Minute, 30 * time.Second},
		{"cluster install, 40 min in", document.RequestCreate, clusterRID("c1"), arm.ProvisioningStateProvisioning, 40 * time.Minute, 90 * time.Second},
		{"cluster upgrade, 7 min 35 s in", document.RequestUpdate, clusterRID("c1"), arm.ProvisioningStateUpdating, 7*time.Minute + 35*time.Second, 45 * time.Second},
		{"cluster uninstall, 10 min in", document.RequestDelete, clusterRID("c1"), arm.ProvisioningStateDeleting, 10 * time.Minute, 60 * time.Second},
		{"node pool create, 10 min in", document.RequestCreate, nodePoolRID("c1", "np1"), arm.ProvisioningStateProvisioning, 10 * time.Minute, 60 * time.Second},
		{"external auth create, 10 min in", document.RequestCreate, externalAuthRID("c1", "ea1"), arm.ProvisioningStateProvisioning, 10 * time.Minute, 10 * time.Second},
		{"credential request, 10 min in", document.RequestRequestCredential, clusterRID("c1"), arm.ProvisioningStateProvisioning, 10 * time.Minute, 10 * time.Second},
		{"succeeded", document.RequestCreate, clusterRID("c1"), arm.ProvisioningStateSucceeded, 10 * time.Minute, 0},
		{"failed", document.RequestCreate, clusterRID("c1"), arm.ProvisioningStateFailed, 10 * time.Minute, 0},
		{"canceled", document.RequestUpdate, clusterRID("c1"), arm.ProvisioningStateCanceled, 10 * time.Minute, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op, err := document.NewOperation(document.NewOperationParams{Request: tc.req, ExternalID: tc.target, Location: "eastus",
				Name: "8a0f7c62-7a44-4a8e-9d8f-2f0d3e1c0b11", Now: clk.Now().Add(-tc.ran)})
			if err != nil {
				t.Fatal(err)
			}
			op.Properties.Status = tc.status
			if got := r.retryAfter(op); got != tc.want {
				t.Errorf("retryAfter = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestNewReadServiceRetryAfterBounds: a config outside ARM's bounds is
// refused; zero means the defaults.
func TestNewReadServiceRetryAfterBounds(t *testing.T) {
	e := newEnv(t)
	deps := ReadDeps{Store: e.store, ClusterService: e.CS}
	r, err := NewReadService(deps, ReadConfig{})
	if err != nil || r.cfg.RetryAfter != DefaultRetryAfter || r.cfg.RetryAfterSlow != DefaultRetryAfterSlow {
		t.Fatalf("defaults: %+v, %v", r, err)
	}
	for _, cfg := range []ReadConfig{{RetryAfter: 5 * time.Second}, {RetryAfter: 11 * time.Minute}, {RetryAfterSlow: 1500 * time.Millisecond},
		{RetryAfter: 30 * time.Second, RetryAfterSlow: 20 * time.Second}} {
		if _, err := NewReadService(deps, cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}
