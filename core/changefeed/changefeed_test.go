package changefeed_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/changefeed"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
	"github.com/hcpops/hcpops/harness/store/embedded"
	"github.com/hcpops/hcpops/harness/store/embedded/embeddedtest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

func TestMain(m *testing.M) { os.Exit(cosmostest.Main(m)) }

// backend is a store with its clock: the embedded store on a manual clock,
// the Cosmos test server on the wall clock.
type backend struct {
	store   store.Store
	clock   clock.Clock
	advance func(time.Duration)
	foreign func(t *testing.T) store.Store
}

func backends() map[string]func(t *testing.T) backend {
	return map[string]func(t *testing.T) backend{
		"embedded": func(t *testing.T) backend {
			clk := testsupport.NewClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
			return backend{store: embeddedtest.Open(t, embedded.WithClock(clk), embedded.WithoutSync()),
				clock: clk, advance: clk.Advance,
				foreign: func(t *testing.T) store.Store { return embeddedtest.Open(t, embedded.WithoutSync()) }}
		},
		"cosmos": func(t *testing.T) backend {
			return backend{store: cosmostest.NewStore(t), clock: clock.Real{}, advance: time.Sleep,
				foreign: func(t *testing.T) store.Store { return cosmostest.NewStore(t) }}
		},
	}
}

func eachBackend(t *testing.T, test func(t *testing.T, b backend)) {
	for name, open := range backends() {
		t.Run(name, func(t *testing.T) { test(t, open(t)) })
	}
}

// partition is one fresh partition of a store; the tests see only its
// changes, whatever else the store holds.
type partition struct {
	t  *testing.T
	s  store.Store
	pk string
}

func newPartition(t *testing.T, s store.Store) *partition {
	return &partition{t: t, s: s, pk: uuid.NewString()}
}

func (p *partition) write(names ...string) {
	p.t.Helper()
	for _, n := range names {
		body := fmt.Sprintf(`{"id":%q,"partitionKey":%q}`, n, p.pk)
		if _, err := p.s.Create(context.Background(), p.pk, []byte(body)); err != nil {
			p.t.Fatalf("Create %s: %v", n, err)
		}
	}
}

// ours keeps the ids of items in the partition, in order.
func (p *partition) ours(items []store.Item) []string {
	p.t.Helper()
	var out []string
	for _, it := range items {
		var d struct {
			ID string `json:"id"`
			PK string `json:"partitionKey"`
		}
		if err := json.Unmarshal(it.Body, &d); err != nil {
			p.t.Fatal(err)
		}
		if d.PK == p.pk {
			out = append(out, d.ID)
		}
	}
	return out
}

// drain reads from pos to the end and returns our ids and the new position.
func (p *partition) drain(r *changefeed.Reader, pos string) ([]string, string) {
	p.t.Helper()
	var got []string
	next, err := r.Drain(context.Background(), pos, func(items []store.Item) error {
		got = append(got, p.ours(items)...)
		return nil
	})
	if err != nil {
		p.t.Fatalf("Drain: %v", err)
	}
	return got, next
}

func TestBegin(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		p := newPartition(t, b.store)
		r := changefeed.NewReader(b.store, changefeed.WithPageSize(2), changefeed.WithClock(b.clock))
		p.write("a", "b", "c")
		b.advance(1100 * time.Millisecond) // whole-second _ts: a-c are a second old
		mark := b.clock.Now()
		p.write("d")

		now, err := r.Begin(ctx, changefeed.FromNow())
		if err != nil {
			t.Fatalf("Begin(FromNow): %v", err)
		}
		if got, _ := p.drain(r, now); len(got) != 0 {
			t.Errorf("from now, before any write: %v", got)
		}
		p.write("e")
		if got, _ := p.drain(r, now); !slices.Equal(got, []string{"e"}) {
			t.Errorf("from now = %v, want [e]", got)
		}

		begin, _ := r.Begin(ctx, changefeed.FromBeginning())
		if got, _ := p.drain(r, begin); !slices.Equal(got, []string{"a", "b", "c", "d", "e"}) {
			t.Errorf("from the beginning = %v, want a-e", got)
		}
		since, _ := r.Begin(ctx, changefeed.FromTime(mark))
		if got, _ := p.drain(r, since); !slices.Equal(got, []string{"d", "e"}) {
			t.Errorf("from %s = %v, want [d e]", mark.Format(time.RFC3339Nano), got)
		}
	})
}

// TestDrainIsAtLeastOnce: a page whose handling failed comes again, from
// the position Drain returned.
func TestDrainIsAtLeastOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		p := newPartition(t, b.store)
		r := changefeed.NewReader(b.store, changefeed.WithPageSize(2), changefeed.WithClock(b.clock))
		pos, err := r.Begin(ctx, changefeed.FromNow())
		if err != nil {
			t.Fatal(err)
		}
		p.write("a", "b", "c", "d", "e")
		boom := errors.New("handler failed")
		var seen []string
		pages := 0
		pos, err = r.Drain(ctx, pos, func(items []store.Item) error {
			if pages++; pages == 2 {
				return boom
			}
			seen = append(seen, p.ours(items)...)
			return nil
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Drain = %v, want the handler's error", err)
		}
		rest, end := p.drain(r, pos)
		if !slices.Equal(seen, []string{"a", "b"}) || !slices.Equal(rest, []string{"c", "d", "e"}) {
			t.Errorf("first drain %v, second %v; want [a b] then [c d e]", seen, rest)
		}
		if again, _ := p.drain(r, end); len(again) != 0 {
			t.Errorf("after the end: %v", again)
		}

		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if got, err := r.Drain(cancelled, end, func([]store.Item) error { return nil }); !errors.Is(err, context.Canceled) || got != end {
			t.Errorf("Drain(cancelled) = %q, %v; want the same position and context.Canceled", got, err)
		}
	})
}

// TestGap: another store's position is ErrGap, and Begin starts over.
func TestGap(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		other := b.foreign(t)
		newPartition(t, other).write("x", "y")
		theirs, err := changefeed.NewReader(other).Drain(ctx, "", func([]store.Item) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		r := changefeed.NewReader(b.store, changefeed.WithClock(b.clock))
		if _, err := r.Read(ctx, theirs); !errors.Is(err, changefeed.ErrGap) {
			t.Fatalf("Read(another store's position) = %v, want ErrGap", err)
		}
		p := newPartition(t, b.store)
		pos, err := r.Begin(ctx, changefeed.FromNow())
		if err != nil {
			t.Fatalf("Begin after a gap: %v", err)
		}
		p.write("z")
		if got, _ := p.drain(r, pos); !slices.Equal(got, []string{"z"}) {
			t.Errorf("after a new Begin: %v, want [z]", got)
		}
	})
}
