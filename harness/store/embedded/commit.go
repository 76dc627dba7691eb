package embedded

import (
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// committer coalesces concurrent writes into shared bbolt transactions. A
// durable commit costs an fsync however little it holds, so one
// transaction per write kept a tick's 64 pollers in single file behind the
// disk. Writers queue; the one that finds no commit running takes the
// whole queue into one transaction, and whoever queued meanwhile goes into
// the next. A lone writer therefore commits at once (bbolt's db.Batch
// would hold it for MaxBatchDelay, 10 ms, hoping for company), and a crowd
// shares its fsyncs.
//
// As with db.Batch, a write's fn may run more than once (its transaction
// is rolled back when another write in it fails), so it must reset what it
// captures; and a write that fails is taken out and run alone, so its
// error reaches only its own caller.
type committer struct {
	db   *bolt.DB
	path string // for the error when bbolt panics on a damaged file
	// lead holds a token while a writer commits for the queue.
	lead chan struct{}

	mu    sync.Mutex
	queue []*queuedWrite

	// transactions counts the write transactions begun, for tests.
	transactions atomic.Int64
	// queued, when set, is signalled (without blocking) whenever a write
	// joins the queue: how a test knows the queue has grown.
	queued chan struct{}
}

type queuedWrite struct {
	fn   func(*bolt.Tx) error
	done chan error // buffered: the committer never waits on a caller
}

func newCommitter(db *bolt.DB, path string) *committer {
	return &committer{db: db, path: path, lead: make(chan struct{}, 1)}
}

// update runs fn in a write transaction, perhaps shared with concurrent
// writes, and returns once that transaction has committed (or fn failed).
func (c *committer) update(fn func(*bolt.Tx) error) error {
	w := &queuedWrite{fn: fn, done: make(chan error, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, w)
	c.mu.Unlock()
	if c.queued != nil {
		select {
		case c.queued <- struct{}{}:
		default: // a signal is already pending
		}
	}
	select {
	case err := <-w.done: // another writer's commit carried it
		return err
	case c.lead <- struct{}{}:
	}
	defer func() { <-c.lead }()
	select {
	case err := <-w.done: // committed by the leader before us
		return err
	default:
	}
	c.mu.Lock()
	batch := c.queue // holds w: no one else commits while we lead
	c.queue = nil
	c.mu.Unlock()
	c.commit(batch)
	return <-w.done
}

// commit runs the batch in one transaction and tells every write how it
// went. A write that fails is answered from a transaction of its own, and
// the rest start again without it.
func (c *committer) commit(batch []*queuedWrite) {
	for len(batch) > 0 {
		failed := -1
		c.transactions.Add(1)
		err := c.run(func(tx *bolt.Tx) error {
			for i, w := range batch {
				if err := c.call(w.fn, tx); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if failed < 0 {
			for _, w := range batch {
				w.done <- err // nil, or a commit error they all share
			}
			return
		}
		w := batch[failed]
		batch = append(batch[:failed:failed], batch[failed+1:]...)
		c.transactions.Add(1)
		w.done <- c.run(func(tx *bolt.Tx) error { return c.call(w.fn, tx) })
	}
}

// run is db.Update with a bbolt panic (a damaged file met while committing)
// turned into ErrDamaged, so every writer queued on this commit hears of it
// instead of waiting forever on a leader that died.
func (c *committer) run(fn func(*bolt.Tx) error) (err error) {
	defer recoverDamage(c.path, &err)()
	return c.db.Update(fn)
}

// call runs fn, turning a panic into its error: the panic belongs to the
// write's caller, not to the writer that happens to be committing. A write
// only reads and puts bbolt pages, so a panic there is bbolt meeting a
// damaged page (or a fault past a truncated end): ErrDamaged.
func (c *committer) call(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer recoverDamage(c.path, &err)()
	return fn(tx)
}
