// Package embedded is the document store on a local bbolt file: what the
// local host and most tests run on. It honours the same contract as the
// Cosmos DB store (ETags, atomic batches, TTL, soft delete, ordered change
// feed), proven by the shared suite in harness/store/storetest.
package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/storedoc"
)

// Store is a store.Store on one bbolt file. It is safe for concurrent use.
// Create, Replace, SoftDelete and Batch are storedoc.WriteFunc's methods,
// each run in one bbolt transaction by write.
type Store struct {
	writes
	path    string
	db      *bolt.DB
	commits *committer
	now     func() time.Time
	log     *slog.Logger
	stop    context.CancelFunc
	done    chan struct{}

	closeOnce sync.Once
	closeErr  error
	// damage is set once, by the first bbolt panic met (see guard); from
	// then on every call fails with it without touching the file.
	damageOnce sync.Once
	damage     atomic.Pointer[error]
	damagedCh  chan struct{}
	swept      func(n int, err error)
}

var _ store.Store = (*Store)(nil)

type writes = storedoc.WriteFunc[[]byte, record]

type config struct {
	clock         clock.Clock
	log           *slog.Logger
	sweepInterval time.Duration
	verifyTimeout time.Duration
	noSync        bool
	// swept, when set, hears of every sweep the sweeper made: how a
	// test knows one has run.
	swept func(n int, err error)
}

// Option configures Open.
type Option func(*config)

// WithClock injects the clock used for _ts, TTL and deletionTimestamp, so
// tests can move time instead of waiting for it. It is called from every
// caller's goroutine and from the sweeper, so it must be safe for that.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) { cfg.clock = c }
}

// WithLogger sets the logger for the sweeper and lifecycle messages.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.log = l }
}

// WithSweepInterval sets how often expired documents are physically removed.
// They are invisible from the moment they expire either way.
func WithSweepInterval(d time.Duration) Option {
	return func(c *config) { c.sweepInterval = d }
}

// WithVerifyTimeout bounds the consistency check of an existing file at
// Open (default DefaultVerifyTimeout).
func WithVerifyTimeout(d time.Duration) Option {
	return func(c *config) { c.verifyTimeout = d }
}

// WithoutSync skips fsync on commit: faster, but a crash may lose the last
// writes. For throwaway stores only.
func WithoutSync() Option {
	return func(c *config) { c.noSync = true }
}

// Open opens the store file at path, creating it only where no file exists,
// and starts its TTL sweeper; Close stops it. An existing file is verified
// first (bbolt's consistency check, bounded by WithVerifyTimeout): a
// damaged or zero-byte file is refused with ErrDamaged, naming the file
// and what to do, rather than panicking now or in the sweeper later.
func Open(path string, opts ...Option) (*Store, error) {
	cfg := config{clock: clock.Real{}, sweepInterval: 10 * time.Second, verifyTimeout: DefaultVerifyTimeout}
	for _, opt := range opts {
		opt(&cfg)
	}
	if path == "" {
		return nil, fmt.Errorf("opening embedded store: %w: path is empty", store.ErrInvalid)
	}
	if cfg.clock == nil {
		return nil, fmt.Errorf("opening embedded store %s: %w: clock is nil", path, store.ErrInvalid)
	}
	if cfg.sweepInterval <= 0 {
		return nil, fmt.Errorf("opening embedded store %s: %w: sweep interval is %s, want > 0", path, store.ErrInvalid, cfg.sweepInterval)
	}
	if cfg.verifyTimeout <= 0 {
		return nil, fmt.Errorf("opening embedded store %s: %w: verify timeout is %s, want > 0", path, store.ErrInvalid, cfg.verifyTimeout)
	}
	if cfg.log == nil {
		cfg.log = slog.New(slog.DiscardHandler)
	}
	size, err := checkSize(path)
	if err != nil {
		return nil, err
	}
	// The timeout turns a file locked by another process into an error
	// instead of a hang.
	db, err := openBolt(path, &bolt.Options{Timeout: 2 * time.Second, NoSync: cfg.noSync})
	if err != nil {
		return nil, err
	}
	if size > 0 {
		if err := verify(path, db, size, cfg.verifyTimeout); err != nil {
			closeAfterCheck(db)
			return nil, err
		}
	}
	if err := initFile(path, db); err != nil {
		_ = db.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Store{path: path, db: db, commits: newCommitter(db, path), now: cfg.clock.Now, log: cfg.log.With("store", path), stop: cancel,
		done: make(chan struct{}), damagedCh: make(chan struct{}), swept: cfg.swept}
	s.writes = s.write
	go s.sweepLoop(ctx, cfg.sweepInterval)
	s.log.Debug("embedded store opened")
	return s, nil
}

func initFile(path string, db *bolt.DB) (err error) {
	defer recoverDamage(path, &err)()
	if err := db.Update(initBuckets); err != nil {
		return fmt.Errorf("opening embedded store %s: %w", path, err)
	}
	return nil
}

func initBuckets(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketDocs, bucketOps, bucketFeed, bucketExpiry, bucketMeta} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("creating bucket %s: %w", name, err)
		}
	}
	meta := tx.Bucket(bucketMeta)
	switch got := meta.Get(metaFormatKey); {
	case got == nil:
		return meta.Put(metaFormatKey, formatVersion)
	case !bytes.Equal(got, formatVersion):
		return fmt.Errorf("file format is %q, want %q", got, formatVersion)
	}
	return nil
}

// Close stops the sweeper and closes the file. Later calls return the first
// call's result. A damaged store's handle is closed only if bbolt lets go
// of it promptly (a panic may have left its locks held); the error then
// says the store was damaged.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.stop()
		<-s.done
		if err := s.damaged(); err != nil {
			closeAfterCheck(s.db)
			s.closeErr = fmt.Errorf("closing embedded store: %w", err)
			return
		}
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("closing embedded store: %w", err)
		}
	})
	return s.closeErr
}

// Get is a point read; soft-deleted and expired documents are ErrNotFound.
func (s *Store) Get(ctx context.Context, partitionKey, id string) (store.Item, error) {
	if err := storedoc.CheckRequest(ctx, partitionKey, id); err != nil {
		return store.Item{}, fmt.Errorf("reading document %s: %w", id, err)
	}
	now := s.now().Unix()
	var item store.Item
	err := s.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketDocs).Get(docKey(partitionKey, id))
		if v == nil {
			return store.ErrNotFound
		}
		rec, err := decodeRecord(v)
		if err != nil {
			return err
		}
		if !rec.Visible(now) {
			return store.ErrNotFound
		}
		item = itemOf(rec)
		return nil
	})
	if err != nil {
		return store.Item{}, fmt.Errorf("reading document %s in partition %s: %w", id, store.KeyLabel(partitionKey), err)
	}
	return item, nil
}

// itemOf copies a record out of bbolt's memory, which is only valid inside
// the transaction.
func itemOf(rec record) store.Item {
	return store.Item{Body: bytes.Clone(rec.body), ETag: string(rec.etag)}
}

// sweepBatch bounds one sweeping transaction so writers are not held up.
const sweepBatch = 500

func (s *Store) sweepLoop(ctx context.Context, every time.Duration) {
	defer close(s.done)
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			n, err := s.sweep(ctx)
			switch {
			case errors.Is(err, ErrDamaged):
				return // logged once where it was met; nothing left to sweep safely
			case err != nil && !errors.Is(err, context.Canceled):
				s.log.WarnContext(ctx, "sweeping expired documents", "error", err)
			case n > 0:
				s.log.DebugContext(ctx, "swept expired documents", "count", n)
			}
			if s.swept != nil {
				s.swept(n, err)
			}
		}
	}
}

// sweep removes every document expired by now, sweepBatch per transaction.
func (s *Store) sweep(ctx context.Context) (int, error) {
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		dropped, scanned, err := s.sweepOnce()
		total += dropped
		if err != nil || scanned < sweepBatch {
			return total, err
		}
	}
}

func (s *Store) sweepOnce() (dropped, scanned int, err error) {
	now := s.now()
	err = s.update(func(tx *bolt.Tx) error {
		w := newWriter(tx, now)
		var due [][]byte
		c := w.expiry.Cursor()
		for k, _ := c.First(); k != nil && len(due) < sweepBatch; k, _ = c.Next() {
			if expiryOf(k) > now.Unix() {
				break
			}
			due = append(due, bytes.Clone(k))
		}
		scanned = len(due)
		for _, ek := range due {
			if err := w.expiry.Delete(ek); err != nil {
				return err
			}
			key := ek[8:]
			rec, found, err := w.Lookup(key)
			if err != nil {
				return err
			}
			if found && rec.Expired(now.Unix()) {
				if err := w.Drop(key, rec); err != nil {
					return err
				}
				dropped++
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("sweeping expired documents: %w", err)
	}
	return dropped, scanned, nil
}

// Path is the store file: the one its holder's flock is on.
func (s *Store) Path() string { return s.path }
