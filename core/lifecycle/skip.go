package lifecycle

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Skip rules, as upstream's operation controllers return early: an
// operation they cannot judge is left alone (no CS call, no write), and
// here also logged once and counted in the tick's telemetry, so that an
// SRE can find operations nobody will ever finish.

// Reasons an operation is left alone, in the tick's skipped_reasons.
const (
	// SkipResourceDeleting: the resource carries a deletionTimestamp, so a
	// create or update of it must not proceed; its delete finishes it.
	SkipResourceDeleting = "resource_deleting"
	// SkipNoActiveOperation: the resource names no active operation. A
	// writer that dropped the field, or a layout misread, must not cancel
	// every operation of a region, so the empty value decides nothing.
	SkipNoActiveOperation = "no_active_operation"
	// SkipActiveOperationUnreadable: activeOperationId is not an operation
	// name (a UUID); it cannot say another operation owns the resource.
	SkipActiveOperationUnreadable = "active_operation_unreadable"
	// SkipResourceNotFound: the resource a create, update or credential
	// request works on has no document (the frontend's delete cancels
	// those operations in the same batch, so this one was left by a writer
	// that did not).
	SkipResourceNotFound = "resource_not_found"
	// SkipResourceUnreadable: the resource document does not parse.
	SkipResourceUnreadable = "resource_unreadable"
	// SkipLegacyDeleteUnknownTarget: a legacy delete names no CS object
	// (no internalId) and its resource document is gone, so CS cannot be
	// asked whether the object is gone.
	SkipLegacyDeleteUnknownTarget = "legacy_delete_without_internal_id"
)

// skipReasons lists every reason, so the tick's record always carries them
// all (a stable shape for dashboards).
var skipReasons = []string{SkipResourceDeleting, SkipNoActiveOperation, SkipActiveOperationUnreadable,
	SkipResourceNotFound, SkipResourceUnreadable, SkipLegacyDeleteUnknownTarget}

// gate is what the skip rules decide for one operation.
type gate struct {
	skip   string // a Skip* reason, or ""
	cancel bool   // another operation positively owns the resource
}

// ownership applies the skip rules to j. Deletes are never gated on
// activeOperationId (upstream's delete controllers do not read it) except
// when another operation positively owns the resource; credential
// operations never own it.
func ownership(j *job) gate {
	p := &j.op.Properties
	switch {
	case legacyDelete(j) && deleteTarget(j) == "":
		return gate{skip: SkipLegacyDeleteUnknownTarget}
	case j.res == nil && p.Request == document.RequestDelete:
		return gate{}
	case j.res == nil:
		return gate{skip: SkipResourceNotFound}
	}
	if onCredentials(j.op.Properties.Request) {
		return gate{}
	}
	if active := j.res.ActiveOperationID(); !strings.EqualFold(active, j.op.Name()) {
		_, uuid := document.CanonicalUUID(active)
		switch {
		case uuid:
			return gate{cancel: true}
		case p.Request == document.RequestDelete:
			return gate{}
		case active == "":
			return gate{skip: SkipNoActiveOperation}
		default:
			return gate{skip: SkipActiveOperationUnreadable}
		}
	}
	if p.Request == document.RequestDelete {
		return gate{}
	}
	if _, deleting := j.res.DeletionTimestamp(); deleting {
		return gate{skip: SkipResourceDeleting}
	}
	return gate{}
}

// skipped counts an operation left alone and logs it the first time, and
// again only when its reason changes.
func (r *run) skipped(log *slog.Logger, op *document.OperationDocument, reason string, cause error) {
	r.count.skip(reason)
	if !r.skips.first(docRef(op), reason) {
		return
	}
	level := slog.LevelWarn
	if reason == SkipResourceDeleting {
		level = slog.LevelInfo // its delete finishes it
	}
	attrs := []any{"reason", reason}
	if cause != nil {
		attrs = append(attrs, "error", cause)
	}
	log.Log(context.Background(), level, "operation skipped: left alone until its documents change", attrs...)
}

// skipLog remembers which operations were logged as skipped and why. It
// is bounded like the retry schedules: when full, the operation skipped
// longest ago is forgotten, which costs at most one more line for it.
type skipLog struct {
	// size lets forget, which runs for every decided operation, skip the
	// lock while nothing is remembered.
	size atomic.Int64

	mu sync.Mutex
	m  *simplelru.LRU[store.DocRef, string]
}

func newSkipLog(limit int) *skipLog { return &skipLog{m: newLRU[string](limit)} }

// first reports whether key is skipped for reason for the first time.
func (s *skipLog) first(key store.DocRef, reason string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.m.Peek(key); ok && r == reason {
		return false
	}
	s.m.Add(key, reason)
	s.size.Store(int64(s.m.Len()))
	return true
}

// forget drops op once it is decided again, so a later skip is logged.
func (s *skipLog) forget(op *document.OperationDocument) {
	if s.size.Load() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m.Remove(docRef(op))
	s.size.Store(int64(s.m.Len()))
}

// cancelSuperseded WRITES Canceled on an operation whose resource another
// operation owns: upstream leaves it alone, but it can never finish, and
// ARM is owed an answer.
func (r *run) cancelSuperseded(ctx context.Context, j *job) error {
	changed, err := r.updateOperationStatus(ctx, j, arm.ProvisioningStateCanceled, supersededError())
	if changed {
		r.count.canceled.Add(1)
		j.log.InfoContext(ctx, "operation canceled: superseded by another", "active_operation_id", j.res.ActiveOperationID())
	}
	return err
}
