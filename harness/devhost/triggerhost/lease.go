package triggerhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Lease is one cosmosDBTrigger function's position in the change feed and
// who reads it, as the host's lease documents hold them.
type Lease struct {
	// Name is leaseContainerPrefix + function name.
	Name         string `json:"-"`
	Continuation string `json:"continuation"`
	// Owner is the host reading the feed with this lease; "" once it let go.
	Owner string `json:"owner,omitempty"`
	// Renewed is when the owner last wrote the lease.
	Renewed time.Time `json:"updated"`
	// ETag is the version Save must find; "" for a lease not stored yet.
	ETag string `json:"-"`
}

// LeaseStore keeps leases: files in the state dir beside the embedded
// store, the leases container on Cosmos DB.
type LeaseStore interface {
	// Load reads a lease; found is false when there is none yet.
	Load(ctx context.Context, name string) (l Lease, found bool, err error)
	// Save writes l if the stored lease is still at l.ETag (creates it
	// when l.ETag is ""), and returns it with its new ETag. Another
	// writer's change in between is ErrLeaseLost.
	Save(ctx context.Context, l Lease) (Lease, error)
}

// ErrLeaseLost: another host wrote the lease since this one read it.
var ErrLeaseLost = errors.New("the lease was changed by another host")

// ErrLeaseHeld: another host holds the lease and renewed it recently.
var ErrLeaseHeld = errors.New("the change feed lease is held by another host")

// Lease timings of the Cosmos DB trigger (extension v4 defaults).
const (
	DefaultLeaseRenewInterval      = 17 * time.Second
	DefaultLeaseExpirationInterval = 60 * time.Second
)

// fileLeases keeps leases as files in the state dir. The data dir's lock
// already makes this host their only writer, so no version is checked.
type fileLeases struct{ dir stateDir }

func (f fileLeases) Load(_ context.Context, name string) (Lease, bool, error) {
	var l Lease
	found, err := f.dir.load("leases", name, &l)
	l.Name = name
	return l, found, err
}

func (f fileLeases) Save(_ context.Context, l Lease) (Lease, error) {
	if err := f.dir.save("leases", l.Name, l); err != nil {
		return l, err
	}
	l.ETag = l.Renewed.Format(time.RFC3339Nano)
	return l, nil
}

// acquire takes the lease for this host. A lease another owner renewed
// within the expiration interval is ErrLeaseHeld, as the change feed
// processor leaves it alone; an expired one is taken over, as it would be.
// found is false when there was no lease: the caller picks the start.
func (l *feedListener) acquire(ctx context.Context) (found bool, err error) {
	h := l.host
	ls, found, err := h.leases.Load(ctx, l.leaseName)
	if err != nil {
		return false, fmt.Errorf("function %s: reading lease %s: %w", l.fn.Name, l.leaseName, err)
	}
	l.lease = ls
	if !found {
		return false, nil
	}
	idle := h.clock.Now().Sub(ls.Renewed)
	switch {
	case ls.Owner == "" || ls.Owner == h.owner:
	case idle < h.leaseExpiration:
		return true, fmt.Errorf("function %s: %w: lease %s is held by %s, renewed %s ago: "+
			"another host reads this change feed; stop it, or wait %s for the lease to expire",
			l.fn.Name, ErrLeaseHeld, l.leaseName, ls.Owner, idle.Round(time.Second), (h.leaseExpiration - idle).Round(time.Second))
	default:
		h.logger.LogAttrs(ctx, slog.LevelWarn, "taking over an expired change feed lease", slog.String("function", l.fn.Name),
			slog.String("lease", l.leaseName), slog.String("previous_owner", ls.Owner), slog.Duration("idle", idle))
	}
	return true, l.checkpoint(ctx, ls.Continuation)
}

// leaseWriteTimeout bounds one lease write. A write runs to its end even
// when the host is stopping: a checkpoint cut off after the store applied
// it would leave the listener holding a stale ETag, and its release on
// the way out would then fail, leaving the lease owned until it expires.
const leaseWriteTimeout = 5 * time.Second

// checkpoint stores cont as the lease's position and renews it.
func (l *feedListener) checkpoint(ctx context.Context, cont string) error {
	h := l.host
	next := l.lease
	next.Name, next.Continuation, next.Owner, next.Renewed = l.leaseName, cont, h.owner, h.clock.Now().UTC()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseWriteTimeout)
	defer cancel()
	saved, err := h.leases.Save(ctx, next)
	if err != nil {
		return fmt.Errorf("checkpointing function %s (lease %s): %w", l.fn.Name, l.leaseName, err)
	}
	l.lease = saved
	return nil
}

// release gives the lease up on a clean stop, so another host may take
// it at once; its position stays.
func (l *feedListener) release() {
	h := l.host
	if l.lease.Owner != h.owner {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), leaseWriteTimeout)
	defer cancel()
	next := l.lease
	next.Owner, next.Renewed = "", h.clock.Now().UTC()
	if _, err := h.leases.Save(ctx, next); err != nil {
		h.logger.LogAttrs(ctx, slog.LevelWarn, "releasing the change feed lease failed; it expires by itself",
			slog.String("function", l.fn.Name), slog.String("lease", l.leaseName), slog.Any("error", err))
	}
}
