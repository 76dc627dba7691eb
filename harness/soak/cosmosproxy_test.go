package soak

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
)

// proxiedStore is a store on a fresh database, reached through a proxy.
func proxiedStore(t *testing.T, stripIfMatch bool) (*cosmos.Store, *writeLedger) {
	t.Helper()
	cfg := cosmostest.Config(t)
	ledger := newWriteLedger()
	p, err := startCosmosProxy(cfg.Endpoint, ledger, stripIfMatch, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	cfg.Endpoint, cfg.InsecureLoopbackTLS = p.url, false
	s, err := cosmos.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.EnsureContainers(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.DropDatabase(context.Background())
		_ = s.Close()
	})
	return s, ledger
}

const proxyPK = "00000000-0000-4000-8000-00000000000a"

func testDoc(id string, version int) []byte {
	return fmt.Appendf(nil, `{"id":%q,"partitionKey":%q,"properties":{"cosmosMetadata":{"instanceVersion":%d}}}`, id, proxyPK, version)
}

func TestCosmosProxyRecordsEveryAcknowledgedWrite(t *testing.T) {
	s, ledger := proxiedStore(t, false)
	ctx := context.Background()
	a, err := s.Create(ctx, proxyPK, testDoc("a", 1))
	must(t, err)
	a2, err := s.Replace(ctx, proxyPK, "a", testDoc("a", 2), a.ETag)
	must(t, err)
	// Refused writes are not writes.
	if _, err := s.Replace(ctx, proxyPK, "a", testDoc("a", 2), a.ETag); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("stale replace: %v, want a precondition failure", err)
	}
	_, err = s.Batch(ctx, proxyPK, []store.BatchOp{
		{Kind: store.OpCreate, Body: testDoc("b", 1)},
		{Kind: store.OpReplace, ID: "a", Body: testDoc("a", 3), IfMatch: a2.ETag},
	})
	must(t, err)
	_, err = s.Batch(ctx, proxyPK, []store.BatchOp{ // rolled back: nothing written
		{Kind: store.OpCreate, Body: testDoc("c", 1)},
		{Kind: store.OpReplace, ID: "a", Body: testDoc("a", 3), IfMatch: a2.ETag},
	})
	var be *store.BatchError
	if !errors.As(err, &be) {
		t.Fatalf("stale batch: %v, want a batch error", err)
	}
	must(t, s.SoftDelete(ctx, proxyPK, "b"))
	b, err := s.Get(ctx, proxyPK, "a")
	must(t, err)
	_, err = s.Batch(ctx, proxyPK, []store.BatchOp{{Kind: store.OpDelete, ID: "a", IfMatch: b.ETag}})
	must(t, err)

	got := map[string][]string{}
	for k, ws := range ledger.snapshot() {
		for _, w := range ws {
			got[k.id] = append(got[k.id], fmt.Sprintf("%s v%d deleted=%v", w.kind, w.doc.version, w.doc.deleted))
			if k.pk != proxyPK {
				t.Errorf("write %+v recorded under partition %q", w, k.pk)
			}
		}
	}
	want := map[string][]string{
		"a": {"create v1 deleted=false", "replace v2 deleted=false", "replace v3 deleted=false", "delete v0 deleted=false"},
		"b": {"create v1 deleted=false", "replace v2 deleted=true"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ledger = %v\nwant     %v", got, want)
	}
	if problems := checkVersions(ledger.snapshot(), nil, map[docKey]finalRead{{proxyPK, "a"}: {}, {proxyPK, "b"}: {}}); len(problems) > 0 {
		t.Errorf("a clean history has problems: %v", problems)
	}
}

func TestCosmosProxyCanSwitchTheETagGuardOff(t *testing.T) {
	for _, strip := range []bool{false, true} {
		t.Run(fmt.Sprintf("strip=%v", strip), func(t *testing.T) {
			s, ledger := proxiedStore(t, strip)
			ctx := context.Background()
			a, err := s.Create(ctx, proxyPK, testDoc("a", 1))
			must(t, err)
			// Three writers read version 1 and each writes version 2,
			// through a batch and through a plain replace.
			_, err = s.Batch(ctx, proxyPK, []store.BatchOp{{Kind: store.OpReplace, ID: "a", Body: testDoc("a", 2), IfMatch: a.ETag}})
			must(t, err)
			_, err = s.Replace(ctx, proxyPK, "a", testDoc("a", 2), a.ETag)
			if stomped := err == nil; stomped != strip {
				t.Fatalf("replace from a stale read: %v; want it through only with the guard off", err)
			}
			_, err = s.Batch(ctx, proxyPK, []store.BatchOp{{Kind: store.OpReplace, ID: "a", Body: testDoc("a", 2), IfMatch: a.ETag}})
			if stomped := err == nil; stomped != strip {
				t.Fatalf("batch from a stale read: %v; want it through only with the guard off", err)
			}
			problems := checkVersions(ledger.snapshot(), nil, nil)
			if (len(problems) > 0) != strip {
				t.Errorf("problems = %v; want a stomped update reported exactly when the guard is off", problems)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
