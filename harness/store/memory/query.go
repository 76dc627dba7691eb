package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/storedoc"
)

// ActiveOperations streams the operations index page by page, in key
// order. The keys are taken once; each page is read under its own lock, so
// a slow callback holds up no writer.
func (s *Store) ActiveOperations(ctx context.Context, q store.ActiveOperationsQuery, page func([]store.Item) error) error {
	return storedoc.ActiveOperations(q, page, func(size int, listed func(document.Class) bool) error {
		keys, err := s.keys(func(k key, _ *record) bool { _, ok := s.ops[k]; return ok })
		if err != nil {
			return err
		}
		return s.stream(ctx, keys, size, page, func(rec *record) bool { return listed(rec.class) })
	})
}

// Children streams the live documents of one partition whose resourceID
// starts with parentResourceID+"/", ignoring case as ARM does. It scans
// every document of the store: a test store is small.
func (s *Store) Children(ctx context.Context, partitionKey, parentResourceID string, page func([]store.Item) error) error {
	prefix, err := storedoc.ChildrenPrefix(partitionKey, parentResourceID, page)
	if err != nil {
		return err
	}
	match := func(rec *record) bool { return storedoc.HasPrefixFold(rec.resourceID, prefix) }
	keys, err := s.keys(func(k key, rec *record) bool { return k.pk == partitionKey && match(rec) })
	if err == nil {
		err = s.stream(ctx, keys, storedoc.DefaultPageSize, page, match)
	}
	if err != nil {
		return fmt.Errorf("listing children of %s in partition %s: %w", parentResourceID, store.KeyLabel(partitionKey), err)
	}
	return nil
}

// Partition streams every live document of one partition.
func (s *Store) Partition(ctx context.Context, partitionKey string, page func([]store.Item) error) error {
	if err := storedoc.CheckPartition(partitionKey, page); err != nil {
		return err
	}
	all := func(*record) bool { return true }
	keys, err := s.keys(func(k key, _ *record) bool { return k.pk == partitionKey })
	if err == nil {
		err = s.stream(ctx, keys, storedoc.DefaultPageSize, page, all)
	}
	if err != nil {
		return fmt.Errorf("listing partition %s: %w", store.KeyLabel(partitionKey), err)
	}
	return nil
}

// keys is the sorted keys of the documents that pass keep.
func (s *Store) keys(keep func(key, *record) bool) ([]key, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	var keys []key
	for k, rec := range s.docs {
		if keep(k, rec) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(strings.Compare(a.pk, b.pk), strings.Compare(a.id, b.id)) })
	return keys, nil
}

// stream hands the live documents under keys that still match to page, up
// to size at a time, reading each page under the lock and calling page
// without it.
func (s *Store) stream(ctx context.Context, keys []key, size int, page func([]store.Item) error, match func(*record) bool) error {
	for len(keys) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		var items []store.Item
		now := s.now().Unix()
		s.mu.RLock()
		if s.closed {
			s.mu.RUnlock()
			return ErrClosed
		}
		for len(keys) > 0 && len(items) < size {
			rec, ok := s.docs[keys[0]]
			keys = keys[1:]
			if ok && rec.Visible(now) && match(rec) {
				items = append(items, rec.item())
			}
		}
		s.mu.RUnlock()
		if len(items) > 0 {
			if err := page(items); err != nil {
				return err
			}
		}
	}
	return nil
}

// ChangeFeed returns the documents written after continuation, each once at
// its latest version: an entry whose document has been written since, or
// hard-deleted, is skipped.
func (s *Store) ChangeFeed(ctx context.Context, continuation string, maxItems int) (store.FeedPage, error) {
	req, err := storedoc.ParseFeedRequest(ctx, continuation, maxItems, s.parseContinuation)
	if err != nil {
		return store.FeedPage{}, err
	}
	after, size := req.After, req.Size
	now := s.now().Unix()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return store.FeedPage{}, fmt.Errorf("reading change feed: %w", ErrClosed)
	}
	switch {
	case req.FromTime:
		after = s.feedStart(req.Since.Unix())
	case after > s.seq:
		return store.FeedPage{}, fmt.Errorf("reading change feed: %w: continuation %q is past the end of this store's feed (%d)", store.ErrFeedGap, continuation, s.seq)
	}
	var items []store.Item
	last := s.seq // an exhausted read has seen every write
	for i := sort.Search(len(s.feed), func(i int) bool { return s.feed[i].seq > after }); i < len(s.feed); i++ {
		if len(items) == size {
			last = s.feed[i-1].seq
			break
		}
		e := s.feed[i]
		rec, ok := s.docs[e.key]
		if !ok || rec.seq != e.seq || rec.Expired(now) { // moved on, deleted, or gone in Cosmos DB by now
			continue
		}
		items = append(items, rec.item())
	}
	return store.FeedPage{Items: items, Continuation: s.formatContinuation(last)}, nil
}

// feedStart is the position just before the first change whose _ts is at
// or after floor, walking back from the end; the caller holds the lock.
func (s *Store) feedStart(floor int64) uint64 {
	for i := len(s.feed) - 1; i >= 0; i-- {
		e := s.feed[i]
		if rec, ok := s.docs[e.key]; ok && rec.seq == e.seq && rec.ts < floor {
			return e.seq
		}
	}
	return 0
}

func (s *Store) formatContinuation(seq uint64) string {
	return s.tag + "." + strconv.FormatUint(seq, 10)
}

// parseContinuation reads a position this store issued; any other is
// ErrFeedGap, another memory store's too.
func (s *Store) parseContinuation(c string) (uint64, error) {
	if c == "" {
		return 0, nil
	}
	rest, ok := strings.CutPrefix(c, s.tag+".")
	if !ok {
		return 0, fmt.Errorf("%w (%w): continuation %.80q is not one this store issued", store.ErrFeedGap, store.ErrInvalid, c)
	}
	seq, err := strconv.ParseUint(rest, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w (%w): continuation %.80q is not one this store issued", store.ErrFeedGap, store.ErrInvalid, c)
	}
	return seq, nil
}
