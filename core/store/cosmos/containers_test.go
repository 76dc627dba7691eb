package cosmos_test

import (
	"crypto/tls"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
)

// bareStore is a store on a database nobody has created.
func bareStore(t *testing.T) (*cosmos.Store, cosmos.Config) {
	t.Helper()
	cfg := cosmostest.Config(t)
	s, err := cosmos.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.DropDatabase(ctxT(t))
		_ = s.Close()
	})
	return s, cfg
}

func TestCheckAndEnsureContainers(t *testing.T) {
	ctx := ctxT(t)
	s, cfg := bareStore(t)
	err := s.CheckContainers(ctx)
	if !errors.Is(err, cosmos.ErrMissing) || !strings.Contains(err.Error(), "database "+cfg.Database) {
		t.Fatalf("CheckContainers on no database = %v, want ErrMissing naming the database", err)
	}
	if err := s.EnsureContainers(ctx); err != nil {
		t.Fatalf("EnsureContainers: %v", err)
	}
	if err := s.CheckContainers(ctx); err != nil {
		t.Fatalf("CheckContainers after EnsureContainers: %v", err)
	}
	if err := s.EnsureContainers(ctx); err != nil {
		t.Fatalf("EnsureContainers again (idempotent): %v", err)
	}
}

// TestContainersOfAnotherShapeAreRefused: a missing leases container is
// named; a Resources container without TTL is refused, never changed.
func TestContainersOfAnotherShapeAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ttl       *int32
		want      string
		wantMiss  bool
		ensureErr bool
	}{
		{name: "leases missing", ttl: new(int32(-1)), want: "container leases", wantMiss: true},
		{name: "Resources without TTL", ttl: nil, want: "container Resources", ensureErr: true},
		{name: "Resources with a default expiry", ttl: new(int32(3600)), want: "defaultTtl is 3600, want -1", ensureErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			s, cfg := bareStore(t)
			raw := rawClient(t, cfg)
			if _, err := raw.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: cfg.Database}, nil); err != nil {
				t.Fatal(err)
			}
			db, _ := raw.NewDatabase(cfg.Database)
			if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: cosmos.ResourcesContainer, DefaultTimeToLive: tc.ttl,
				PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/partitionKey"}}}, nil); err != nil {
				t.Fatal(err)
			}
			err := s.CheckContainers(ctx)
			if err == nil || errors.Is(err, cosmos.ErrMissing) != tc.wantMiss || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckContainers = %v, want an error containing %q (missing: %v)", err, tc.want, tc.wantMiss)
			}
			if err := s.EnsureContainers(ctx); (err != nil) != tc.ensureErr {
				t.Fatalf("EnsureContainers = %v, want an error: %v", err, tc.ensureErr)
			}
		})
	}
}

func TestLeases(t *testing.T) {
	ctx := ctxT(t)
	s := cosmostest.NewStore(t)
	l, err := s.Leases()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Get(ctx, "dev.dispatchOperations"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get of no lease = %v, want ErrNotFound", err)
	}
	first, err := l.Put(ctx, []byte(`{"id":"dev.dispatchOperations","continuation":"a"}`), "")
	if err != nil {
		t.Fatalf("Put (create): %v", err)
	}
	if _, err := l.Put(ctx, []byte(`{"id":"dev.dispatchOperations","continuation":"b"}`), ""); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second create = %v, want ErrConflict", err)
	}
	second, err := l.Put(ctx, []byte(`{"id":"dev.dispatchOperations","continuation":"b"}`), first.ETag)
	if err != nil {
		t.Fatalf("Put (replace): %v", err)
	}
	if _, err := l.Put(ctx, []byte(`{"id":"dev.dispatchOperations","continuation":"c"}`), first.ETag); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("replace with a stale etag = %v, want ErrPreconditionFailed", err)
	}
	got, err := l.Get(ctx, "dev.dispatchOperations")
	if err != nil || got.ETag != second.ETag || !strings.Contains(string(got.Body), `"continuation":"b"`) {
		t.Fatalf("Get = %s %q, %v; want the replaced lease", got.Body, got.ETag, err)
	}
	if _, err := l.Put(ctx, []byte(`{"continuation":"x"}`), ""); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Put without an id = %v, want ErrInvalid", err)
	}
}

func rawClient(t *testing.T, cfg cosmos.Config) *azcosmos.Client {
	t.Helper()
	cred, _ := azcosmos.NewKeyCredential(cfg.Key)
	hc := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback test server
	}}
	c, err := azcosmos.NewClientWithKey(cfg.Endpoint, cred, &azcosmos.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hc}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
