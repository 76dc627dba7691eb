package appsettings_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/appsettings"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
)

func TestMain(m *testing.M) { os.Exit(cosmostest.Main(m)) }

var (
	at       = time.Date(2026, 12, 5, 4, 30, 0, 0, time.UTC)
	stuck30s = map[string]string{"HCPOPS_STUCK_AFTER": "any=30s", "HCPOPS_CREATE_DEADLINE": ""}
	stuck1m  = map[string]string{"HCPOPS_STUCK_AFTER": "any=1m", "HCPOPS_CREATE_DEADLINE": ""}
)

func leases(t *testing.T) appsettings.Container {
	t.Helper()
	l, err := cosmostest.NewStore(t).Leases()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The record on the real leases container: written once for unchanged
// settings whichever instance starts, rewritten when they change, a
// damaged one replaced.
func TestSaveAndLoad(t *testing.T) {
	ctx := context.Background()
	c := leases(t)
	if _, err := appsettings.Load(ctx, c); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Load before any start = %v, want ErrNotFound", err)
	}
	steps := []struct {
		name      string
		settings  map[string]string
		by        string
		wantWrote bool
		wantBy    string
	}{
		{"first start records", stuck30s, "instance-a", true, "instance-a"},
		{"another instance, same settings: no write", stuck30s, "instance-b", false, "instance-a"},
		{"changed settings are rewritten", stuck1m, "instance-b", true, "instance-b"},
	}
	for i, s := range steps {
		wrote, err := appsettings.Save(ctx, c, s.settings, s.by, at.Add(time.Duration(i)*time.Minute))
		if err != nil || wrote != s.wantWrote {
			t.Fatalf("%s: Save = %v, %v; want wrote %v", s.name, wrote, err, s.wantWrote)
		}
		got, err := appsettings.Load(ctx, c)
		if err != nil || !maps.Equal(got.Settings, s.settings) || got.RecordedBy != s.wantBy {
			t.Fatalf("%s: Load = %+v, %v; want %v by %s", s.name, got, err, s.settings, s.wantBy)
		}
	}
	cur, err := c.Get(ctx, appsettings.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, []byte(`{"id":"hcpops.settings","kind":"something else"}`), cur.ETag); err != nil {
		t.Fatal(err)
	}
	if _, err := appsettings.Load(ctx, c); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Load of a damaged record = %v, want ErrInvalid", err)
	}
	if wrote, err := appsettings.Save(ctx, c, stuck30s, "instance-c", at); err != nil || !wrote {
		t.Fatalf("Save over a damaged record = %v, %v; want it replaced", wrote, err)
	}
	if got, err := appsettings.Load(ctx, c); err != nil || !maps.Equal(got.Settings, stuck30s) {
		t.Fatalf("Load after the repair = %+v, %v", got, err)
	}
}

// Instances starting together with different settings (a slot swap) each
// end without an error: a raced write is read again, ETag-guarded, and
// the record holds one of them whole.
func TestSaveRacedByAnotherInstance(t *testing.T) {
	ctx := context.Background()
	c := leases(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			set := stuck30s
			if i%2 == 1 {
				set = stuck1m
			}
			_, errs[i] = appsettings.Save(ctx, c, set, "instance", at)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && !errors.Is(err, appsettings.ErrRaced) {
			t.Errorf("instance %d: %v", i, err)
		}
	}
	got, err := appsettings.Load(ctx, c)
	if err != nil || !maps.Equal(got.Settings, stuck30s) && !maps.Equal(got.Settings, stuck1m) {
		t.Fatalf("Load after the race = %+v, %v; want one instance's settings whole", got, err)
	}
}

// deadlines is a container that records each call's deadline and fails.
type deadlines struct{ got []time.Time }

func (d *deadlines) Get(ctx context.Context, _ string) (store.Item, error) {
	dl, _ := ctx.Deadline()
	d.got = append(d.got, dl)
	return store.Item{}, store.ErrNotFound
}

func (d *deadlines) Put(ctx context.Context, _ []byte, _ string) (store.Item, error) {
	dl, _ := ctx.Deadline()
	d.got = append(d.got, dl)
	return store.Item{}, errors.New("unavailable")
}

// Each call is bounded whatever the caller's context says.
func TestEveryCallHasATimeout(t *testing.T) {
	d := &deadlines{}
	start := time.Now()
	if _, err := appsettings.Save(context.Background(), d, stuck30s, "instance", at); err == nil {
		t.Fatal("Save on a failing container succeeded")
	}
	if len(d.got) != 2 {
		t.Fatalf("calls = %d, want a read and a write", len(d.got))
	}
	for i, dl := range d.got {
		if dl.IsZero() || dl.Sub(start) > time.Minute {
			t.Errorf("call %d: deadline %v, want one within a minute of %v", i, dl, start)
		}
	}
}
