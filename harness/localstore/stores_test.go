package localstore

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
	"github.com/hcpops/hcpops/harness/storeapi"
)

func TestMain(m *testing.M) { os.Exit(cosmostest.Main(m)) }

func cosmosEnv(dir string, cfg cosmos.Config) func(string) string {
	env := cosmostest.Settings(cfg)
	env[EnvDataDir] = dir
	return func(k string) string { return env[k] }
}

// share advertises a store in dir as a running hcpopsctl dev would, naming
// storeName as what it serves.
func share(t *testing.T, dir, storeName string) {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	held, err := OpenEmbedded(dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	sh, err := storeapi.Share(held, dir, storeapi.Advert{Command: "hcpopsctl dev", Store: storeName}, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
}

// TestConnectStoreRefusesAnotherStore: CosmosDB exported for the CLI while
// the dev running on the data dir uses another store is refused, naming
// both, before anything is written.
func TestConnectStoreRefusesAnotherStore(t *testing.T) {
	dir := t.TempDir()
	cfg := cosmos.Config{Endpoint: "https://127.0.0.1:9/", Key: cosmostest.EmulatorKey, Database: "rp"}
	for name, theirs := range map[string]string{
		"dev on the embedded store": EmbeddedStoreName(dir),
		"dev on another database":   CosmosStoreName(cosmos.Config{Endpoint: "https://127.0.0.1:9/", Database: "other"}),
		"an advert without a store": "",
	} {
		t.Run(name, func(t *testing.T) {
			share(t, dir, theirs)
			_, _, err := ConnectStore(context.Background(), cosmosEnv(dir, cfg), ReadWrite, slog.New(slog.DiscardHandler))
			want := []string{"CosmosDB (or CosmosDB__accountEndpoint) is set here", "hcpopsctl submit, status and doc would use cosmos https://127.0.0.1:9/ database rp",
				"but hcpopsctl dev (pid", "never see those writes"}
			if theirs == "" {
				theirs = EmbeddedStoreName(dir)
			}
			want = append(want, "uses "+theirs)
			for _, w := range want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Fatalf("ConnectStore = %v, want it to say %q", err, w)
				}
			}
		})
	}
}

// TestConnectStoreJoinsTheSameCosmosStore: the same Cosmos store as the
// running dev's is used directly; with no Cosmos setting, the CLI goes
// through the dev whatever store it is on.
func TestConnectStoreJoinsTheSameCosmosStore(t *testing.T) {
	dir := t.TempDir()
	cfg := cosmostest.Config(t)
	ready, err := cosmos.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ready.Close()
	if err := ready.EnsureContainers(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ready.DropDatabase(context.Background()) })
	share(t, dir, CosmosStoreName(cfg))

	got, conn, err := ConnectStore(context.Background(), cosmosEnv(dir, cfg), ReadWrite, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("ConnectStore: %v", err)
	}
	defer got.Close()
	if conn.Name != CosmosStoreName(cfg) || conn.Process == nil {
		t.Errorf("store %+v, want %q served by the running dev", conn, CosmosStoreName(cfg))
	}
	viaDev, conn, err := ConnectStore(context.Background(), dirEnv(dir), ReadWrite, slog.New(slog.DiscardHandler))
	if err != nil || !strings.Contains(conn.Name, "hcpopsctl dev (pid ") {
		t.Fatalf("ConnectStore without Cosmos settings = %q, %v; want the dev's store API", conn.Name, err)
	}
	viaDev.Close()
}

func TestConnectStoreNamesMissingContainers(t *testing.T) {
	cfg := cosmostest.Config(t) // a database nobody created
	_, _, err := ConnectStore(context.Background(), cosmosEnv(t.TempDir(), cfg), ReadWrite, slog.New(slog.DiscardHandler))
	if !errors.Is(err, cosmos.ErrMissing) || !strings.Contains(err.Error(), "database "+cfg.Database) ||
		!strings.Contains(err.Error(), "hcpopsctl dev -create-containers") {
		t.Fatalf("ConnectStore on a missing database = %v, want ErrMissing naming it and how to create it", err)
	}
}

// TestConnectStoreRefusesALocalOnlyCosmosSetting: local.settings.json
// points hcpopsctl dev at Cosmos DB, which the CLI does not read; rather than
// write to the embedded file nobody watches, it says so.
func TestConnectStoreRefusesALocalOnlyCosmosSetting(t *testing.T) {
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "local.settings.json"),
		[]byte(`{"Values":{"CosmosDB__accountEndpoint":"https://acct.documents.azure.com/","COSMOS_DATABASE":"rp"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(cwd)
	dir := t.TempDir()
	_, _, err := ConnectStore(context.Background(), dirEnv(dir), ReadWrite, slog.New(slog.DiscardHandler))
	for _, w := range []string{"local.settings.json here sets CosmosDB__accountEndpoint, which hcpopsctl dev uses",
		"hcpopsctl submit, status and doc read only the environment", "export CosmosDB__accountEndpoint (and COSMOS_DATABASE)"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("ConnectStore = %v, want it to say %q", err, w)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, StoreFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused CLI created the embedded store: %v", err)
	}
}
