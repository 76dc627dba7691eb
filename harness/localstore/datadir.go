package localstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/store/embedded"
	"github.com/hcpops/hcpops/harness/storeapi"
)

// dialTimeout bounds the CLI's wait for a running process's store API.
const dialTimeout = 5 * time.Second

// DataDir is where the embedded store lives: $HCPOPS_DATA_DIR, else
// DefaultDataDir. serve, dev and the CLI share it, so the CLI finds a
// running dev's store without flags.
func DataDir(getenv func(string) string) string {
	if d := getenv(EnvDataDir); d != "" {
		return d
	}
	return DefaultDataDir
}

// OpenEmbedded opens dir's store for the process that will hold it (serve,
// dev). A store another process holds is an error naming the holder.
func OpenEmbedded(dir string, logger *slog.Logger) (*embedded.Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating data dir %s (%s): %w", dir, EnvDataDir, err)
	}
	path := filepath.Join(dir, StoreFileName)
	s, err := embedded.Open(path, embedded.WithLogger(logger))
	if errors.Is(err, embedded.ErrLocked) {
		return nil, heldError(dir, path)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// heldError names the process holding path and what to do about it.
func heldError(dir, path string) error {
	holder, pid := "another process", storeapi.LockHolder(path)
	if pid > 0 {
		holder = "process " + strconv.Itoa(pid)
	}
	// An advert names the holder better, unless it is a dead process's.
	if a, err := storeapi.ReadAdvert(dir); err == nil && (pid == 0 || pid == a.PID) {
		holder = fmt.Sprintf("%s (pid %d, since %s)", a.Command, a.PID, a.Since.Local().Format(time.TimeOnly))
	}
	return fmt.Errorf("the embedded store %s is held by %s: stop it, or use another data dir (-data-dir or %s)", path, holder, EnvDataDir)
}

// Access says what a CLI command does with the store.
type Access int

const (
	// ReadOnly commands never create a store that is not there.
	ReadOnly Access = iota
	// ReadWrite commands create the embedded store if needed.
	ReadWrite
	// WriteExisting commands write, but refuse to create a store nothing
	// would process (ErrNoStore): they say where, and ask first.
	WriteExisting
)

// ErrNoStore: no process serves the data dir and it holds no store file.
var ErrNoStore = errors.New("no store")

// Connection says which store ConnectStore reached.
type Connection struct {
	// Name names it for messages.
	Name string
	// Process is the running process that serves it, when one does.
	Process *storeapi.Advert
	// File is the embedded store file when it was opened directly: no
	// running process reads what is written there until one starts on it.
	File string
}

// ConnectStore is the CLI's store, the one the running process uses: the
// store of the hcpops process that holds the data dir, through its store
// API (whatever store that is); else Cosmos DB when configured here; else
// the embedded file itself. A Cosmos setting here that names another store
// than the running process's, or a Cosmos connection only in the
// local.settings.json hcpopsctl dev reads, is refused: the two would never
// see each other's writes. The Connection says which store it is.
func ConnectStore(ctx context.Context, getenv func(string) string, access Access, logger *slog.Logger) (store.Store, Connection, error) {
	cfg, err := cosmos.ConfigFromEnv(getenv)
	configured := err == nil
	if err != nil && !errors.Is(err, cosmos.ErrNotConfigured) {
		return nil, Connection{}, fmt.Errorf("reading Cosmos DB settings: %w", err)
	}
	dir := DataDir(getenv)
	c, a, dialErr := storeapi.Dial(ctx, dir, dialTimeout)
	var live *storeapi.Advert
	switch {
	case dialErr == nil && !configured:
		return c, Connection{Name: fmt.Sprintf("%s (pid %d) store API %s", a.Command, a.PID, a.URL), Process: &a}, nil
	case dialErr == nil:
		if err := sameStore(cfg, a, dir); err != nil {
			return nil, Connection{}, err
		}
		live = &a
	case errors.Is(dialErr, storeapi.ErrNoAdvert):
		dialErr = nil
	default:
		// Stale or unproven: nothing is sent to it; the file is used if
		// no process holds it.
		logger.DebugContext(ctx, "store API advert not trusted", "error", dialErr)
	}
	if configured {
		s, err := OpenCosmos(ctx, cfg, CheckContainers, logger)
		if errors.Is(err, cosmos.ErrMissing) {
			return nil, Connection{}, fmt.Errorf("%w: create it as upstream deploys it (hcpopsctl dev -create-containers does; deploy/main.bicep in Azure)", err)
		}
		if err != nil {
			return nil, Connection{}, err
		}
		return s, Connection{Name: CosmosStoreName(cfg), Process: live}, nil
	}
	if err := refuseLocalOnly("."); err != nil {
		return nil, Connection{}, err
	}
	path := filepath.Join(dir, StoreFileName)
	if _, err := os.Stat(path); access != ReadWrite && errors.Is(err, fs.ErrNotExist) {
		return nil, Connection{}, fmt.Errorf("%w at %s (%s=%q), and no running hcpopsctl dev or serve holds that data dir", ErrNoStore, path, EnvDataDir, dir)
	}
	s, err := OpenEmbedded(dir, logger)
	if err != nil && dialErr != nil {
		return nil, Connection{}, fmt.Errorf("%w; and %v", err, dialErr)
	}
	if err != nil {
		return nil, Connection{}, err
	}
	return s, Connection{Name: "embedded " + path, File: path}, nil
}
