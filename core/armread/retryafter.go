package armread

import (
	"fmt"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// Settings of the Retry-After ARM's polls get while an operation runs.
const (
	EnvRetryAfter     = "HCPOPS_RETRY_AFTER"
	EnvRetryAfterSlow = "HCPOPS_RETRY_AFTER_SLOW"
)

// ARM's bounds on Retry-After, and the defaults: the poll timer's period
// (functions/pollOperations/function.json, every 10 s), since nothing
// changes between ticks; and a minute for the slow phases.
const (
	MinRetryAfter         = 10 * time.Second
	MaxRetryAfter         = 600 * time.Second
	DefaultRetryAfter     = 10 * time.Second
	DefaultRetryAfterSlow = 60 * time.Second
)

// retryAfter is how long ARM should wait before it asks about op again; 0
// once op is terminal. An operation waits for the next tick (RetryAfter),
// except in a phase known to take many minutes — a cluster or node pool
// Clusters Service is installing, upgrading or uninstalling — where it
// waits a tenth of the time it has run so far, between RetryAfter and
// RetryAfterSlow: a 20 s create is seen within a tick, a 15-minute install
// is not asked about 90 times.
func (r *ReadService) retryAfter(op *document.OperationDocument) time.Duration {
	p := &op.Properties
	if p.Status.IsTerminal() {
		return 0
	}
	if !slowPhase(op) {
		return r.cfg.RetryAfter
	}
	ran := r.clock.Now().Sub(p.StartTime)
	return min(max((ran/10).Truncate(time.Second), r.cfg.RetryAfter), r.cfg.RetryAfterSlow)
}

// slowPhase: Clusters Service has the work (the operation is past
// Accepted) and it is a cluster's or node pool's install, upgrade or
// uninstall, which take minutes; external auths and credentials take
// seconds.
func slowPhase(op *document.OperationDocument) bool {
	switch op.Properties.Status {
	case arm.ProvisioningStateProvisioning, arm.ProvisioningStateUpdating, arm.ProvisioningStateDeleting:
	default:
		return false
	}
	switch op.Properties.Request {
	case document.RequestCreate, document.RequestUpdate, document.RequestDelete:
	default:
		return false
	}
	k, err := op.TargetKind()
	return err == nil && (k == document.KindCluster || k == document.KindNodePool)
}

// retryAfterFromEnv reads one Retry-After setting: a whole number of
// seconds (a Go duration such as 10s or 2m) within ARM's 10 s to 600 s.
func retryAfterFromEnv(getenv func(string) string, name string, def time.Duration) (time.Duration, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d%time.Second != 0 || d < MinRetryAfter || d > MaxRetryAfter {
		return 0, fmt.Errorf("%s=%q: want whole seconds from %s to %s (ARM's bounds on Retry-After), such as 10s", name, v, MinRetryAfter, MaxRetryAfter)
	}
	return d, nil
}

// checkRetryAfter fills the defaults of cfg's Retry-After settings and
// checks them.
func checkRetryAfter(cfg *ReadConfig) error {
	if cfg.RetryAfter == 0 {
		cfg.RetryAfter = DefaultRetryAfter
	}
	if cfg.RetryAfterSlow == 0 {
		cfg.RetryAfterSlow = max(DefaultRetryAfterSlow, cfg.RetryAfter)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"RetryAfter", cfg.RetryAfter}, {"RetryAfterSlow", cfg.RetryAfterSlow}} {
		if d.v%time.Second != 0 || d.v < MinRetryAfter || d.v > MaxRetryAfter {
			return fmt.Errorf("read service config %s: %s is not whole seconds from %s to %s", d.name, d.v, MinRetryAfter, MaxRetryAfter)
		}
	}
	if cfg.RetryAfterSlow < cfg.RetryAfter {
		return fmt.Errorf("read service config RetryAfterSlow: %s is below RetryAfter %s", cfg.RetryAfterSlow, cfg.RetryAfter)
	}
	return nil
}
