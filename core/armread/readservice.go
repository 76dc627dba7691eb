// Package armread is ARM's reads of asynchronous operations: the
// operation-status and operation-result GETs ARM polls while an operation
// runs, the gates ARO-HCP's frontend puts in front of them (api-version,
// subscription state), and the Retry-After those polls are told. It reads
// the store (and, for a break-glass credential's result, Clusters
// Service) and writes nothing: the work itself, dispatch and poll, is
// core/lifecycle's.
package armread

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/admission"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/store"
)

// ReadService is ARM's side of the async contract: the operation-status
// and operation-result reads and the gates ARO-HCP's frontend puts in
// front of them. It writes nothing and keeps nothing, so it shares no
// state with the Engine: any instance serves any request. Build it with
// NewReadService; it is safe for concurrent use.
type ReadService struct {
	store store.Store
	// cs reads break-glass credentials for their results, on demand.
	cs    clusterservice.Client
	log   *slog.Logger
	clock clock.Clock
	cfg   ReadConfig
}

// ReadDeps are the read service's collaborators; Logger and Clock are
// optional (Clock dates how long an operation has run, for Retry-After).
type ReadDeps struct {
	Store          store.Store
	ClusterService clusterservice.Client
	Logger         *slog.Logger
	Clock          clock.Clock
}

// ReadConfig tunes the read service. Zero values mean the defaults.
type ReadConfig struct {
	// Admission gates ARM's status and result requests (api-version,
	// subscription state); the zero value is ARO-HCP's defaults.
	Admission admission.Config
	// Timeout bounds a store read made for an ARM request: a store that
	// does not answer costs one poll (ARM polls again), not a request
	// held until the host gives up.
	Timeout time.Duration
	// RetryAfter is what ARM's polls of a running operation are told to
	// wait (HCPOPS_RETRY_AFTER); RetryAfterSlow caps the wait in a slow
	// phase (HCPOPS_RETRY_AFTER_SLOW). Whole seconds within ARM's 10 s to
	// 600 s; zero means the default.
	RetryAfter, RetryAfterSlow time.Duration
}

// DefaultReadTimeout is ReadConfig.Timeout's default, the same bound a
// guarded write of the engine gets (lifecycle.DefaultWriteTimeout).
const DefaultReadTimeout = 10 * time.Second

// ReadConfigFromEnv reads the admission settings (HCPOPS_API_VERSIONS,
// HCPOPS_SUBSCRIPTION_DOCUMENT) and the Retry-After ones
// (HCPOPS_RETRY_AFTER, HCPOPS_RETRY_AFTER_SLOW); each error names the
// setting and value.
func ReadConfigFromEnv(getenv func(string) string) (ReadConfig, error) {
	a, err := admission.ConfigFromEnv(getenv)
	if err != nil {
		return ReadConfig{}, err
	}
	cfg := ReadConfig{Admission: a, Timeout: DefaultReadTimeout}
	if cfg.RetryAfter, err = retryAfterFromEnv(getenv, EnvRetryAfter, DefaultRetryAfter); err != nil {
		return ReadConfig{}, err
	}
	if cfg.RetryAfterSlow, err = retryAfterFromEnv(getenv, EnvRetryAfterSlow, max(DefaultRetryAfterSlow, cfg.RetryAfter)); err != nil {
		return ReadConfig{}, err
	}
	if cfg.RetryAfterSlow < cfg.RetryAfter {
		return ReadConfig{}, fmt.Errorf("%s=%s is below %s=%s: the slow phases' cap cannot be shorter than the usual wait",
			EnvRetryAfterSlow, cfg.RetryAfterSlow, EnvRetryAfter, cfg.RetryAfter)
	}
	return cfg, nil
}

// NewReadService builds the read service.
func NewReadService(deps ReadDeps, cfg ReadConfig) (*ReadService, error) {
	var missing []string
	if deps.Store == nil {
		missing = append(missing, "Store")
	}
	if deps.ClusterService == nil {
		missing = append(missing, "ClusterService")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("read service deps: %s required", strings.Join(missing, ", "))
	}
	switch {
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("read service config Timeout: %s is negative", cfg.Timeout)
	case cfg.Timeout == 0:
		cfg.Timeout = DefaultReadTimeout
	}
	if err := checkRetryAfter(&cfg); err != nil {
		return nil, err
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	return &ReadService{store: deps.Store, cs: deps.ClusterService, log: deps.Logger, clock: clock.OrReal(deps.Clock), cfg: cfg}, nil
}

// StatusRequest identifies an operation-status read and its caller.
type StatusRequest struct {
	SubscriptionID string
	Location       string
	OperationName  string // the operation UUID
	HomeTenantID   string // X-Ms-Home-Tenant-Id
	ClientObjectID string // X-Ms-Client-Object-Id
	// APIVersion is the request's api-version: a resource result is shown
	// as that version shows it (document.Resource.ARMBodyAt).
	APIVersion string
}

var (
	// ErrOperationNotFound: no such operation document, or it expired.
	ErrOperationNotFound = errors.New("operation not found")
	// ErrOperationNotVisible: the document exists but ARM's visibility rules
	// hide it from this caller (rendered as a 404 with an empty body).
	ErrOperationNotVisible = errors.New("operation not visible to caller")
)

// errMalformed marks a stored document the read service cannot render
// until someone fixes it; ARM's poll gets an error, not a 404.
var errMalformed = errors.New("malformed document")

// read is a point read made for an ARM request, bounded by the service's
// Timeout and parsed; the zero T when the store has no such document.
func read[T any](ctx context.Context, r *ReadService, pk, id string, parse func([]byte) (T, error)) (T, error) {
	var none T
	rctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	item, err := r.store.Get(rctx, pk, id)
	if errors.Is(err, store.ErrNotFound) {
		return none, nil
	}
	if err != nil {
		return none, err
	}
	doc, err := parse(item.Body)
	if err != nil {
		return none, fmt.Errorf("%w: %w", errMalformed, err)
	}
	return doc, nil
}
