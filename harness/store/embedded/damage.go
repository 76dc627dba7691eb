package embedded

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ErrDamaged marks a store file that bbolt found inconsistent: refused at
// Open, or met later as a bbolt panic and turned into this error.
var ErrDamaged = errors.New("embedded store file is damaged")

// ErrLocked: another process holds the store file; callers name the
// holder and what to do.
var ErrLocked = errors.New("another process holds it open")

// DefaultVerifyTimeout bounds the consistency check at Open. The check reads
// every page; see the README for how long it takes per GB.
const DefaultVerifyTimeout = time.Minute

// maxCheckErrors is how many of bbolt's findings a refusal quotes.
const maxCheckErrors = 3

// damaged is the error for a damaged file: which file, what is wrong, and
// what the operator can do about it.
func damaged(path, what string) error {
	return fmt.Errorf("%w: %s: %s; move it away (for example mv %s %s.damaged) to start with an empty store, or restore a copy",
		ErrDamaged, path, what, path, path)
}

// checkSize refuses a zero-byte file before bbolt sees it: only a missing
// file means "start empty"; an empty one is what a crash or a full disk
// leaves, and silently starting afresh would hide the lost documents.
func checkSize(path string) (size int64, err error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return -1, nil // a fresh store is created here
	case err != nil:
		return 0, fmt.Errorf("opening embedded store %s: %w", path, err)
	case fi.IsDir():
		return 0, fmt.Errorf("opening embedded store %s: it is a directory, want a file", path)
	case fi.Size() == 0:
		return 0, damaged(path, "the file is empty (0 bytes)")
	}
	return fi.Size(), nil
}

// verify checks an opened file of size bytes within timeout: the pages
// bbolt's metadata claims must all be in the file (a truncated file fails
// here), every key and value must be readable, and bbolt's consistency
// check must pass. The walk runs first, on a goroutine of ours that turns
// faults into panics, so bbolt's check (which runs on a goroutine of its
// own, where a fault would kill the process) only meets pages already read.
func verify(path string, db *bolt.DB, size int64, timeout time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- verifyNow(path, db, size) }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		return fmt.Errorf("opening embedded store %s: its consistency check did not finish within %s (%d MiB); "+
			"is it on a slow disk, or larger than an embedded store is meant to be?", path, timeout, size>>20)
	}
}

func verifyNow(path string, db *bolt.DB, size int64) (err error) {
	defer recoverDamage(path, &err)()
	return db.View(func(tx *bolt.Tx) error {
		if tx.Size() > size {
			return damaged(path, fmt.Sprintf("it is %d bytes but its pages reach to byte %d (truncated?)", size, tx.Size()))
		}
		if _, err := walk(tx); err != nil {
			return damaged(path, err.Error())
		}
		var found []string
		n := 0
		for e := range tx.Check() {
			if n++; len(found) < maxCheckErrors {
				found = append(found, e.Error())
			}
		}
		if n > 0 {
			return damaged(path, fmt.Sprintf("the consistency check found %d problems: %s", n, strings.Join(found, "; ")))
		}
		return nil
	})
}

// walk reads every key and the last byte of every value of every bucket,
// so each reachable page is touched; the result only keeps the reads.
func walk(tx *bolt.Tx) (byte, error) {
	var sum byte
	var walkBucket func(b *bolt.Bucket) error
	walkBucket = func(b *bolt.Bucket) error {
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			sum ^= k[len(k)-1]
			if v == nil {
				if nb := b.Bucket(k); nb != nil {
					if err := walkBucket(nb); err != nil {
						return err
					}
				}
			} else if len(v) > 0 {
				sum ^= v[len(v)-1]
			}
		}
		return nil
	}
	err := tx.ForEach(func(name []byte, b *bolt.Bucket) error { return walkBucket(b) })
	return sum, err
}

// closeAfterCheck closes a refused file's handle. It may have to wait for
// a check that overran Open's bound, so it does that on its own goroutine.
func closeAfterCheck(db *bolt.DB) {
	go func() {
		defer func() { _ = recover() }() // refused already; nothing to add
		_ = db.Close()
	}()
}

// openBolt is bolt.Open with its panics (a damaged freelist panics there)
// and its damage errors reported as ErrDamaged naming the file. After a
// panic bbolt's file handle stays open until the process exits, which is
// what a refused store leads to anyway.
func openBolt(path string, opts *bolt.Options) (db *bolt.DB, err error) {
	defer recoverDamage(path, &err)()
	db, err = bolt.Open(path, 0o600, opts)
	switch {
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch),
		errors.Is(err, berrors.ErrInvalidMapping):
		return nil, damaged(path, err.Error())
	case errors.Is(err, berrors.ErrTimeout):
		return nil, fmt.Errorf("opening embedded store %s: %w (timed out waiting for its lock)", path, ErrLocked)
	case err != nil:
		return nil, fmt.Errorf("opening embedded store %s: %w", path, err)
	}
	return db, nil
}

// recoverDamage is guard without a Store. Use as
// defer recoverDamage(path, &err)().
func recoverDamage(path string, err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		if p := recover(); p != nil {
			*err, _ = panicVerdict(path, p)
		}
	}
}

// panicVerdict is the error for a panic met in a call on the file at
// path, and whether the panic is evidence that the file is damaged: a
// fault on the mapped file (a page past a truncated end), or a panic
// raised inside bbolt, which panics on pages it finds inconsistent. Any
// other panic (in this package's own code) says nothing about the file:
// it is an internal error, and calling the file damaged would send the
// operator to move a sound store away.
func panicVerdict(path string, p any) (error, bool) {
	if _, fault := p.(interface{ Addr() uintptr }); fault {
		return damaged(path, fmt.Sprintf("reading it faulted (%v)", p)), true
	}
	if site := panicSite(); strings.HasPrefix(site, "go.etcd.io/bbolt") {
		return damaged(path, fmt.Sprintf("bbolt failed reading it (%v, in %s)", p, site)), true
	}
	return fmt.Errorf("embedded store %s: internal error, not damage to the file (panic: %v)", path, p), false
}

// panicSite is the function a recovered panic was raised in: the first
// frame below the runtime's panic machinery. Called from the deferred
// function that recovers, while the panicking frames are still on the
// stack.
func panicSite() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime."):
			return f.Function
		}
		if !more {
			return ""
		}
	}
}

// view and update are db.View and db.Update with a panic turned into an
// error: ErrDamaged naming the file when it is evidence of damage (a
// damaged page met, or a fault on the mapped file past a truncated end),
// which then costs the calls that touch the file, not the process; an
// internal error otherwise, which leaves the store working (bbolt rolls
// a panicking transaction back).
func (s *Store) view(fn func(*bolt.Tx) error) error {
	return s.abandonOnDamage(func() (err error) {
		defer s.guard(&err)()
		return s.db.View(fn)
	})
}

func (s *Store) update(fn func(*bolt.Tx) error) error {
	return s.abandonOnDamage(func() (err error) {
		defer s.guard(&err)()
		return s.db.Update(fn)
	})
}

// abandonOnDamage runs call on a goroutine of its own and gives up on it
// when the store meets damage meanwhile. A fault inside bbolt can leave
// one of its mutexes held (beginTx panics with the meta lock taken), and a
// call already waiting on that lock waits forever: under a dev run whose
// file was truncated, the terminal's feed read did, and dev never stopped.
// The abandoned goroutine stays blocked, like the file handle, until the
// process exits, which damage leads to. bbolt gives no way to wait on its
// locks with a deadline, so the wait has to be one we can walk away from.
// The hand-off's cost, measured with this package's benchmarks (old and
// new interleaved, 2 cores, medians): a point read 1.4 → 3.5 µs, a
// ReadMany of 100 documents 106 → 118 µs, a durable Replace 336–386 →
// 386–412 µs (its fsync dominates); a steady tick reads from the active
// set's view, not from here.
func (s *Store) abandonOnDamage(call func() error) error {
	if err := s.damaged(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-s.damagedCh:
		select {
		case err := <-done: // finished as the damage was marked
			return err
		default:
			return s.damaged()
		}
	}
}

// guard is recoverDamage that also marks the store damaged on evidence of
// damage, and logs any other panic with its stack. Use as
// defer s.guard(&err)().
func (s *Store) guard(err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		p := recover()
		if p == nil {
			return
		}
		verdict, isDamage := panicVerdict(s.path, p)
		*err = verdict
		if isDamage {
			s.markDamaged(verdict)
			return
		}
		s.log.Error("embedded store call panicked; the file is not damaged by it", "error", verdict, "stack", string(debug.Stack()))
	}
}

// markDamaged records and logs the first damage met. A panic may leave
// bbolt's locks held, so from then on no call touches the file: each fails
// with this error, and Damaged tells the process to stop.
func (s *Store) markDamaged(err error) {
	s.damageOnce.Do(func() {
		s.damage.Store(&err)
		// Logged before the close: a call given up on damage returns on it.
		s.log.Error("embedded store damaged", "error", err)
		close(s.damagedCh)
	})
}

// damaged is the recorded damage, nil while the store is sound.
func (s *Store) damaged() error {
	if p := s.damage.Load(); p != nil {
		return *p
	}
	return nil
}

// Damaged is closed when the store meets damage; Err then says what. A
// server stops on it, so its supervisor restarts it into Open's refusal
// (a message) rather than into a store that fails every call.
func (s *Store) Damaged() <-chan struct{} { return s.damagedCh }

// Err is the damage the store met, or nil.
func (s *Store) Err() error { return s.damaged() }
