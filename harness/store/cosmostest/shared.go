package cosmostest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store/cosmos"
	testserver "github.com/hcpops/hcpops/harness/cosmosserver"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// shared is the test binary's one server. It is package state on purpose:
// starting node and an HTTPS server per test would dominate test time, and
// Go offers no per-binary fixture other than TestMain.
var shared struct {
	once   sync.Once
	mu     sync.Mutex
	server *Server
	err    error
}

// Main runs a test binary's tests and then stops the shared server; call it
// from TestMain: func TestMain(m *testing.M) { os.Exit(cosmostest.Main(m)) }.
// Without it the kernel still kills the server when the binary exits.
func Main(m *testing.M) int {
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.server != nil {
		if shared.server.Exited() {
			fmt.Fprintf(os.Stderr, "cosmostest: the cosmos test server died during the tests; its log:\n%s", shared.server.Log())
		}
		if err := shared.server.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "cosmostest:", err)
		}
		shared.server = nil
	}
	return code
}

// Start returns the endpoint of the test binary's server, installing (npm ci)
// and starting it on first use. Without node or npm the test fails, unless
// the caller opted out with EnvSkip=1: a run that did not test Cosmos must
// never report ok by accident.
func Start(t testing.TB) string {
	t.Helper()
	needNode(t)
	shared.once.Do(func() {
		ctx := context.Background()
		dir, err := ServerDir()
		if err == nil {
			err = Install(ctx, dir)
		}
		var s *Server
		if err == nil {
			s, err = StartServer(ctx, dir)
		}
		shared.mu.Lock()
		shared.server, shared.err = s, err
		shared.mu.Unlock()
	})
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.err != nil {
		t.Fatalf("cosmos test server: %v", shared.err)
	}
	if shared.server == nil {
		t.Fatal("cosmos test server already stopped (used after cosmostest.Main returned?)")
	}
	if shared.server.Exited() {
		t.Fatalf("cosmos test server died; its log:\n%s", shared.server.Log())
	}
	return shared.server.Endpoint
}

// StartOwn starts a server of the test's own, as o says, for a test that
// needs one the shared server is not (plain http); it is stopped when the
// test ends. It returns the endpoint.
func StartOwn(t testing.TB, o Options) string {
	t.Helper()
	return StartOwnServer(t, o).Endpoint
}

// StartOwnServer is StartOwn returning the server: its CA file and, with
// Options.Identity, its identity endpoint.
func StartOwnServer(t testing.TB, o Options) *Server {
	t.Helper()
	needNode(t)
	ctx := context.Background()
	dir, err := ServerDir()
	if err == nil {
		err = Install(ctx, dir)
	}
	if err != nil {
		t.Fatalf("cosmos test server: %v", err)
	}
	s, err := testserver.StartWith(ctx, dir, o)
	if err != nil {
		t.Fatalf("cosmos test server: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping the cosmos test server: %v", err)
		}
	})
	return s
}

func needNode(t testing.TB) {
	t.Helper()
	testsupport.RealStack(t, "node and the Cosmos-compatible test server")
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing(t, fmt.Sprintf("%s is not installed (%v): the Cosmos DB tests need node >= 20 and npm", tool, err))
		}
	}
}

// EnvSkip, set to 1, turns a missing node or npm from a failure into a
// loud skip: an explicit choice to run without the Cosmos DB tests.
const EnvSkip = "HCPOPS_SKIP_COSMOS_TESTS"

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(EnvSkip) != "1" {
		t.Fatalf("%s; install them, or set %s=1 to skip the Cosmos DB tests", why, EnvSkip)
	}
	t.Skipf("\n*** SKIPPING COSMOS DB TEST (%s=1): %s ***", EnvSkip, why)
}

// Config returns a store configuration for a fresh, uniquely named database
// on the shared server; the database does not exist yet.
func Config(t testing.TB) cosmos.Config {
	t.Helper()
	endpoint := Start(t)
	return cosmos.Config{
		Endpoint:            endpoint,
		Key:                 EmulatorKey,
		Database:            DatabaseName(t),
		InsecureLoopbackTLS: true,
		RetryDelay:          10 * time.Millisecond,
		MaxRetryDelay:       time.Second,
	}
}

// NewStore returns a store on a fresh database with its containers created;
// the database is dropped when the test ends.
func NewStore(t testing.TB, opts ...cosmos.Option) *cosmos.Store {
	t.Helper()
	s, err := cosmos.New(Config(t), opts...)
	if err != nil {
		t.Fatalf("creating cosmos store: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.EnsureContainers(ctx); err != nil {
		t.Fatalf("creating containers: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.DropDatabase(ctx); err != nil {
			t.Errorf("dropping test database: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("closing store: %v", err)
		}
	})
	return s
}

// DatabaseName is unique per call: the test's name plus random hex.
func DatabaseName(t testing.TB) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("random database name: %v", err)
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, t.Name())
	if len(name) > 60 {
		name = name[:60]
	}
	return "hcpops-" + name + "-" + hex.EncodeToString(b[:])
}

// Settings are the app settings that point hcpops at cfg's database on the
// test server, as a user would set them: the key connection string, the
// database, and TLS without verification (the server's certificate is
// self-signed and expired).
func Settings(cfg cosmos.Config) map[string]string {
	return map[string]string{
		cosmos.SettingConnectionString: "AccountEndpoint=" + cfg.Endpoint + ";AccountKey=" + cfg.Key + ";",
		cosmos.SettingDatabase:         cfg.Database,
		cosmos.SettingInsecureLoopback: "true",
	}
}
