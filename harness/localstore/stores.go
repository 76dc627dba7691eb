package localstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/storeapi"
)

// CosmosStoreName names a Cosmos DB store the same way in every command,
// so two commands can tell whether they share one: the endpoint (scheme,
// lower-case host, port) and the database.
func CosmosStoreName(cfg cosmos.Config) string {
	endpoint := cfg.Endpoint
	if u, err := url.Parse(cfg.Endpoint); err == nil {
		endpoint = u.Scheme + "://" + strings.ToLower(u.Host) + "/"
	}
	return fmt.Sprintf("cosmos %s database %s", endpoint, cfg.Database)
}

// EmbeddedStoreName names the embedded store in dir.
func EmbeddedStoreName(dir string) string {
	path := filepath.Join(dir, StoreFileName)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return "embedded " + path
}

// CosmosOpen says what opening a Cosmos store does about its containers.
type CosmosOpen int

const (
	// CheckContainers refuses a database without Resources and leases
	// (cosmos.ErrMissing) or with either shaped otherwise than upstream.
	CheckContainers CosmosOpen = iota
	// CreateContainers creates the database and containers that are
	// missing, as upstream deploys them.
	CreateContainers
)

// OpenCosmos opens the Cosmos store cfg names and checks (or creates) its
// containers before anything reads or writes a document, so a missing one
// is named instead of surfacing as "document not found".
func OpenCosmos(ctx context.Context, cfg cosmos.Config, containers CosmosOpen, logger *slog.Logger) (*cosmos.Store, error) {
	s, err := cosmos.New(cfg, cosmos.WithLogger(logger))
	if err != nil {
		return nil, fmt.Errorf("opening Cosmos DB store: %w", err)
	}
	if containers == CreateContainers {
		err = s.EnsureContainers(ctx)
	} else {
		err = s.CheckContainers(ctx)
	}
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// cliCommands names the commands ConnectStore serves, for its messages.
const cliCommands = "hcpopsctl submit, status and doc"

// sameStore refuses a CLI whose own Cosmos setting names another store
// than the one the running process advertises: they would not see each
// other's writes. An advert without a store name predates the field and
// is the embedded store.
func sameStore(cfg cosmos.Config, a storeapi.Advert, dir string) error {
	theirs := a.Store
	if theirs == "" {
		theirs = EmbeddedStoreName(dir)
	}
	ours := CosmosStoreName(cfg)
	if theirs == ours {
		return nil
	}
	return fmt.Errorf("%s is set here, so %s would use %s, but %s (pid %d) on the data dir %s uses %s and would never see those writes: "+
		"unset %s and %s to use its store, or restart it with the same settings",
		cosmosSettingSet(), cliCommands, ours, a.Command, a.PID, dir, theirs, cosmos.SettingConnectionString, cosmos.SettingEndpoint)
}

func cosmosSettingSet() string {
	return cosmos.SettingConnectionString + " (or " + cosmos.SettingEndpoint + ")"
}

// localCosmosSetting is the Cosmos connection a local.settings.json in dir
// sets, which hcpopsctl dev (and func start) use and the CLI does not read;
// "" when there is none.
func localCosmosSetting(dir string) string {
	raw, err := os.ReadFile(filepath.Join(dir, "local.settings.json"))
	if errors.Is(err, fs.ErrNotExist) || err != nil {
		return ""
	}
	var ls struct {
		Values map[string]any `json:"Values"`
	}
	if json.Unmarshal(raw, &ls) != nil {
		return ""
	}
	for _, k := range []string{cosmos.SettingConnectionString, cosmos.SettingEndpoint} {
		if v, ok := ls.Values[k].(string); ok && strings.TrimSpace(v) != "" {
			return k
		}
	}
	return ""
}

// refuseLocalOnly stops a CLI about to open the embedded store while the
// local.settings.json beside it points hcpopsctl dev at Cosmos DB.
func refuseLocalOnly(cwd string) error {
	k := localCosmosSetting(cwd)
	if k == "" {
		return nil
	}
	return fmt.Errorf("local.settings.json here sets %s, which hcpopsctl dev uses, but %s read only the environment and would use the embedded store: "+
		"export %s (and %s) to use that database here too, or start hcpopsctl dev first (the CLI then goes through it)",
		k, cliCommands, k, cosmos.SettingDatabase)
}
