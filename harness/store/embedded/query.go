package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/storedoc"
)

// ActiveOperations streams the operations index page by page. Each page is
// read in its own short transaction that resumes after the last key of the
// previous page: a slow callback then never pins a read transaction, which in
// bbolt would block a writer that needs to grow the file.
func (s *Store) ActiveOperations(ctx context.Context, q store.ActiveOperationsQuery, page func([]store.Item) error) error {
	return storedoc.ActiveOperations(q, page, func(size int, listed func(document.Class) bool) error {
		return s.stream(ctx, bucketOps, nil, size, page, func(docs *bolt.Cursor, k, v []byte, now int64) (store.Item, bool, error) {
			if len(v) != 1 || !listed(document.Class(v[0])) {
				return store.Item{}, false, nil
			}
			raw := get(docs, k)
			if raw == nil {
				return store.Item{}, false, fmt.Errorf("operations index names missing document %q", k)
			}
			rec, err := decodeRecord(raw)
			if err != nil || !rec.Visible(now) {
				return store.Item{}, false, err
			}
			return itemOf(rec), true, nil
		})
	})
}

// Children streams the live documents of one partition whose resourceID
// starts with parentResourceID+"/", ignoring case as ARM does.
func (s *Store) Children(ctx context.Context, partitionKey, parentResourceID string, page func([]store.Item) error) error {
	prefix, err := storedoc.ChildrenPrefix(partitionKey, parentResourceID, page)
	if err != nil {
		return err
	}
	err = s.stream(ctx, bucketDocs, partitionPrefix(partitionKey), storedoc.DefaultPageSize, page, func(_ *bolt.Cursor, _, v []byte, now int64) (store.Item, bool, error) {
		rec, err := decodeRecord(v)
		if err != nil || !rec.Visible(now) || !storedoc.HasPrefixFold(rec.resourceID, prefix) {
			return store.Item{}, false, err
		}
		return itemOf(rec), true, nil
	})
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
	err := s.stream(ctx, bucketDocs, partitionPrefix(partitionKey), storedoc.DefaultPageSize, page, func(_ *bolt.Cursor, _, v []byte, now int64) (store.Item, bool, error) {
		rec, err := decodeRecord(v)
		if err != nil || !rec.Visible(now) {
			return store.Item{}, false, err
		}
		return itemOf(rec), true, nil
	})
	if err != nil {
		return fmt.Errorf("listing partition %s: %w", store.KeyLabel(partitionKey), err)
	}
	return nil
}

// matchFunc decides whether the entry k, v of a scanned bucket belongs in
// the result and copies it out of the transaction. docs is a cursor on the
// documents for point lookups: reusing one cursor per page saves the
// allocation a Bucket.Get makes for every lookup.
type matchFunc func(docs *bolt.Cursor, k, v []byte, now int64) (store.Item, bool, error)

// get is Bucket.Get on a reusable cursor.
func get(c *bolt.Cursor, key []byte) []byte {
	k, v := c.Seek(key)
	if !bytes.Equal(k, key) {
		return nil
	}
	return v
}

// stream walks bucket's keys that start with prefix, one transaction per page.
func (s *Store) stream(ctx context.Context, bucket, prefix []byte, size int, page func([]store.Item) error, match matchFunc) error {
	var after []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		items, last, err := s.scan(bucket, prefix, after, size, match)
		if err != nil {
			return err
		}
		if len(items) > 0 {
			if err := page(items); err != nil {
				return err
			}
		}
		if last == nil {
			return nil
		}
		after = last
	}
}

// scan reads one page after key after (nil: from the start). last is the
// key to resume from, or nil when the range is exhausted.
func (s *Store) scan(bucket, prefix, after []byte, size int, match matchFunc) (items []store.Item, last []byte, err error) {
	now := s.now().Unix()
	err = s.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		docs := tx.Bucket(bucketDocs).Cursor()
		var k, v []byte
		if after == nil {
			k, v = c.Seek(prefix)
		} else if k, v = c.Seek(after); bytes.Equal(k, after) {
			k, v = c.Next()
		}
		for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			item, ok, err := match(docs, k, v, now)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if items == nil {
				items = make([]store.Item, 0, size)
			}
			items = append(items, item)
			if len(items) == size {
				last = bytes.Clone(k)
				return nil
			}
		}
		return nil
	})
	return items, last, err
}

// ChangeFeed returns the documents written after continuation, each once at
// its latest version: the feed index keeps one entry per document, moved to
// the end on every write and removed on a hard delete.
func (s *Store) ChangeFeed(ctx context.Context, continuation string, maxItems int) (store.FeedPage, error) {
	req, err := storedoc.ParseFeedRequest(ctx, continuation, maxItems, parseContinuation)
	if err != nil {
		return store.FeedPage{}, err
	}
	after, size := req.After, req.Size
	now := s.now().Unix()
	var items []store.Item
	var last uint64
	err = s.view(func(tx *bolt.Tx) error {
		docs := tx.Bucket(bucketDocs).Cursor()
		feed := tx.Bucket(bucketFeed)
		if req.FromTime {
			start, err := feedStart(feed, docs, req.Since)
			if err != nil {
				return err
			}
			after = start
		} else if end := feed.Sequence(); after > end {
			// A position this file never reached: another store's, or this
			// one's before the file was replaced.
			return fmt.Errorf("%w: continuation %d is past the end of this store's feed (%d)", store.ErrFeedGap, after, end)
		}
		last = after
		c := feed.Cursor()
		for k, key := c.Seek(seqKey(after + 1)); k != nil && len(items) < size; k, key = c.Next() {
			last = uint64FromKey(k)
			raw := get(docs, key)
			if raw == nil {
				return fmt.Errorf("change feed names missing document %q", key)
			}
			rec, err := decodeRecord(raw)
			if err != nil {
				return err
			}
			if rec.Expired(now) { // Cosmos DB would have deleted it already
				continue
			}
			items = append(items, itemOf(rec))
		}
		return nil
	})
	if err != nil {
		return store.FeedPage{}, fmt.Errorf("reading change feed after %q: %w", continuation, err)
	}
	return store.FeedPage{Items: items, Continuation: formatContinuation(last)}, nil
}

// feedStart is the position just before the first change at or after
// since: the feed is walked back from its end while _ts (whole seconds, as
// Cosmos DB's) is not older, so starting from now costs nothing.
func feedStart(feed *bolt.Bucket, docs *bolt.Cursor, since time.Time) (uint64, error) {
	floor := since.Unix()
	c := feed.Cursor()
	for k, key := c.Last(); k != nil; k, key = c.Prev() {
		raw := get(docs, key)
		if raw == nil {
			return 0, fmt.Errorf("change feed names missing document %q", key)
		}
		rec, err := decodeRecord(raw)
		if err != nil {
			return 0, err
		}
		var sys struct {
			TS int64 `json:"_ts"`
		}
		if err := json.Unmarshal(rec.body, &sys); err != nil {
			return 0, fmt.Errorf("change feed document %q: %w", key, err)
		}
		if sys.TS < floor {
			return uint64FromKey(k), nil
		}
	}
	return 0, nil
}
