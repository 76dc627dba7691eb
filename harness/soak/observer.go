package soak

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// feedPage bounds one read of the observer.
const feedPage = 500

// observer reads the whole change feed from the start of the run: it keeps
// every version of every document it sees, for the version checks, and the
// latest state of every operation, which is how the scenarios learn that
// their requests are done.
type observer struct {
	feed interface {
		ChangeFeed(context.Context, string, int) (store.FeedPage, error)
	}
	every  time.Duration
	clock  clock.Clock // paces run; a test's may be manual
	logger *slog.Logger

	readMu sync.Mutex // serializes reads, so versions stay in feed order
	cont   string

	mu       sync.Mutex
	versions map[docKey][]docVersion
	ops      map[docKey]*document.OperationDocument
	uris     map[docKey]string // the notificationUri of each operation whose create was seen
	reads    int
	failed   int
}

func newObserver(feed interface {
	ChangeFeed(context.Context, string, int) (store.FeedPage, error)
}, every time.Duration, logger *slog.Logger) *observer {
	return &observer{feed: feed, every: every, clock: clock.Real{}, logger: logger, versions: map[docKey][]docVersion{},
		ops: map[docKey]*document.OperationDocument{}, uris: map[docKey]string{}}
}

// run reads until ctx is done.
func (o *observer) run(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := o.read(ctx)
		if err != nil && ctx.Err() == nil {
			o.logger.WarnContext(ctx, "soak observer: reading the change feed failed", "error", err)
		}
		if n == feedPage {
			continue
		}
		select {
		case <-ctx.Done():
		case <-o.clock.After(o.every):
		}
	}
}

// drain reads until the feed has nothing more.
func (o *observer) drain(ctx context.Context) error {
	for {
		n, err := o.read(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
}

// read takes one page and returns how many changes it held.
func (o *observer) read(ctx context.Context) (int, error) {
	o.readMu.Lock()
	defer o.readMu.Unlock()
	page, err := o.feed.ChangeFeed(ctx, o.cont, feedPage)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.reads++
	if err != nil {
		o.failed++
		return 0, fmt.Errorf("reading the change feed: %w", err)
	}
	for _, it := range page.Items {
		v, err := readVersion(it.Body)
		if err != nil {
			return 0, err
		}
		v.seen = o.clock.Now()
		seen := o.versions[v.key]
		if len(seen) > 0 && seen[len(seen)-1].etag == v.etag {
			continue
		}
		o.versions[v.key] = append(seen, v)
		if kind, err := document.Sniff(it.Body); err != nil || kind != document.KindOperation {
			continue
		}
		op, err := document.ParseOperation(it.Body)
		if err != nil {
			return 0, fmt.Errorf("operation %s: %w", v.key, err)
		}
		o.ops[v.key] = op
		if v.version == 1 {
			o.uris[v.key] = op.Properties.NotificationURI
		}
	}
	o.cont = page.Continuation
	return len(page.Items), nil
}

// op returns the latest version seen of an operation.
func (o *observer) op(k docKey) (*document.OperationDocument, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	op, ok := o.ops[k]
	return op, ok
}

// deletesBesideAccepted reports whether a cluster delete is in flight
// (Deleting) beside a create or update CS has accepted and is working on
// (Provisioning, Updating): the moment a fake 404 could complete the one
// while the other must exist.
func (o *observer) deletesBesideAccepted() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	deleting, accepted := false, false
	for _, op := range o.ops {
		p := op.Properties
		kind, _, err := document.ResourceKindOfID("externalId", p.ExternalID)
		switch {
		case err != nil:
		case p.Request == document.RequestDelete && kind == document.KindCluster && p.Status == arm.ProvisioningStateDeleting:
			deleting = true
		case p.Status == arm.ProvisioningStateProvisioning || p.Status == arm.ProvisioningStateUpdating:
			accepted = true
		}
	}
	return deleting && accepted
}

// settled reports whether every operation seen is terminal and has
// delivered its notification, and how many are not yet.
func (o *observer) settled() (bool, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	pending := 0
	for _, op := range o.ops {
		if !op.Properties.Status.IsTerminal() || op.Properties.NotificationURI != "" {
			pending++
		}
	}
	return pending == 0, pending
}

// snapshot copies what was observed.
func (o *observer) snapshot() (versions map[docKey][]docVersion, ops map[docKey]*document.OperationDocument, uris map[docKey]string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	versions = make(map[docKey][]docVersion, len(o.versions))
	for k, v := range o.versions {
		versions[k] = append([]docVersion(nil), v...)
	}
	ops = make(map[docKey]*document.OperationDocument, len(o.ops))
	for k, op := range o.ops {
		ops[k] = op
	}
	uris = make(map[docKey]string, len(o.uris))
	for k, u := range o.uris {
		uris[k] = u
	}
	return versions, ops, uris
}
