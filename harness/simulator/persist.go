package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"reflect"
	"sync"
	"time"

	"github.com/hcpops/hcpops/harness/atomicfile"
)

// A local run keeps the simulator's objects across a restart: its state
// is snapshotted to a file after every API request that may change it, on
// an interval (for admin-API and Go-method changes) and at shutdown, and
// reloaded at start. Timelines hold absolute times, so an object installing
// when the run stopped is further along (or done) when it resumes.

// SnapshotFile is the snapshot's name in hcpopsctl dev's data dir.
const SnapshotFile = "cs-simulator.json"

// snapshotFormat is bumped when a snapshot can no longer be read as is.
const snapshotFormat = 1

// persistedFields are the Simulator fields that are state; runtimeFields
// are configuration and machinery of this run. Every field is in one
// list (TestEverySimulatorFieldIsClassified), so a new one is a choice.
var (
	persistedFields = []string{"skew", "seq", "clusters", "armed", "ledger"}
	runtimeFields   = []string{"clock", "logger", "pageSize", "rngMu", "rng", "mu", "durations", "versions",
		"faultMu", "faults", "latency", "next", "api", "admin", "done", "closeOnce", "persist"}
)

type snapshotFile struct {
	Format int             `json:"format"`
	Saved  time.Time       `json:"saved"`
	State  json.RawMessage `json:"state"`
}

// persister writes one simulator's snapshots; saves are serialised and
// skipped when nothing changed.
type persister struct {
	path   string
	logger func(err error)

	mu   sync.Mutex
	last []byte
}

// field is Simulator field name, readable and settable.
func (s *Simulator) field(name string) reflect.Value {
	return usable(reflect.ValueOf(s).Elem().FieldByName(name))
}

// snapshotState renders the state fields under the simulator's locks.
func (s *Simulator) snapshotState() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	state := map[string]json.RawMessage{}
	for _, name := range persistedFields {
		raw, err := encodeValue(s.field(name), name)
		if err != nil {
			return nil, fmt.Errorf("snapshotting the simulator: %w", err)
		}
		state[name] = raw
	}
	return json.Marshal(state)
}

// SaveSnapshot writes the simulator's state to path atomically (a temp
// file in the same directory, synced, renamed over it).
func (s *Simulator) SaveSnapshot(path string) error {
	p := s.persist.Load()
	if p == nil || p.path != path {
		p = &persister{path: path}
	}
	return p.save(s)
}

func (p *persister) save(s *Simulator) error {
	state, err := s.snapshotState()
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if bytes.Equal(state, p.last) {
		return nil
	}
	data, err := json.Marshal(snapshotFile{Format: snapshotFormat, Saved: time.Now().UTC(), State: state})
	if err != nil {
		return err
	}
	if err := atomicfile.Write(p.path, data); err != nil {
		return fmt.Errorf("saving the CS simulator's snapshot: %w", err)
	}
	p.last = state
	return nil
}

// LoadSnapshot replaces the simulator's state with the snapshot at path,
// and reports whether there was one. A snapshot that does not read back is
// an error naming the file; the simulator is then unchanged.
func (s *Simulator) LoadSnapshot(path string) (bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the CS simulator's snapshot %s: %w", path, err)
	}
	damaged := func(err error) error {
		return fmt.Errorf("the CS simulator's snapshot %s is damaged: %w; move it aside (or run hcpopsctl dev -reset) to start with an empty simulator", path, err)
	}
	var f snapshotFile
	if err := json.Unmarshal(data, &f); err != nil {
		return false, damaged(err)
	}
	if f.Format != snapshotFormat {
		return false, damaged(fmt.Errorf("format %d, this hcpops reads %d", f.Format, snapshotFormat))
	}
	var state map[string]json.RawMessage
	if err := json.Unmarshal(f.State, &state); err != nil {
		return false, damaged(fmt.Errorf("state: %w", err))
	}
	// Decode into a scratch simulator first: a damaged field leaves the
	// live one as it was.
	scratch := &Simulator{}
	for _, name := range persistedFields {
		if err := decodeValue(state[name], scratch.field(name), name); err != nil {
			return false, damaged(err)
		}
	}
	s.mu.Lock()
	s.ledger.mu.Lock()
	for _, name := range persistedFields {
		if name == "ledger" {
			s.ledger.l = scratch.ledger.l
			continue
		}
		s.field(name).Set(scratch.field(name))
	}
	s.ledger.mu.Unlock()
	s.mu.Unlock()
	// The seeded source would draw the IDs already taken again.
	s.rngMu.Lock()
	s.rng = rand.New(rand.NewPCG(uint64(s.seq), uint64(len(data))))
	s.rngMu.Unlock()
	if state, err := s.snapshotState(); err == nil {
		if p := s.persist.Load(); p != nil && p.path == path {
			p.mu.Lock()
			p.last = state
			p.mu.Unlock()
		}
	}
	return true, nil
}

// Persist saves the snapshot at path after each API request that may
// change state, every interval, and once more when ctx ends; done is
// closed after that last save. Errors go to onError.
func (s *Simulator) Persist(ctx context.Context, path string, interval time.Duration, onError func(error)) (done <-chan struct{}) {
	p := &persister{path: path, logger: onError}
	if cur := s.persist.Load(); cur != nil {
		p.last = cur.last
	}
	s.persist.Store(p)
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				p.report(p.save(s))
				return
			case <-t.C:
				p.report(p.save(s))
			}
		}
	}()
	return ch
}

func (p *persister) report(err error) {
	if err != nil && p.logger != nil {
		p.logger(err)
	}
}

// changed saves after an API request that may have changed state, before
// its answer goes out: a caller told "created" finds the object after a
// crash.
func (s *Simulator) changed(method string) {
	if method == "GET" || method == "HEAD" {
		return
	}
	if p := s.persist.Load(); p != nil {
		p.report(p.save(s))
	}
}
