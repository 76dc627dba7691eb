package devhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"github.com/hcpops/hcpops/harness/localstore"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/devhost/functionapp"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
)

// devStore is the store a run uses: the embedded file in the data dir, or
// the Cosmos DB database the settings name, with its leases container.
type devStore struct {
	store.Store
	// name is how every command names it (localstore.CosmosStoreName or
	// EmbeddedStoreName); the CLI compares it with its own.
	name string
	// leases keep the change-feed positions; nil keeps them in the data dir.
	leases triggerhost.LeaseStore
	// cosmos is set on Cosmos DB, with what was done about the containers.
	cosmos  *cosmos.Config
	created bool
}

// cosmosSettings reads the Cosmos connection the user set, in the
// environment or local.settings.json (not dev's own defaults: a database
// name dev made up would be one serve and the CLI never use). ok is false
// when none is set.
func cosmosSettings(user func(string) string) (cfg cosmos.Config, ok bool, err error) {
	cfg, err = cosmos.ConfigFromEnv(user)
	switch {
	case errors.Is(err, cosmos.ErrNotConfigured):
		return cosmos.Config{}, false, nil
	case err != nil:
		return cosmos.Config{}, false, fmt.Errorf("hcpopsctl dev: reading Cosmos DB settings: %w", err)
	}
	return cfg, true, nil
}

// checkCosmosRun refuses flags and bindings a run on Cosmos DB cannot
// honour, before anything is created: -reset (it empties the embedded
// store, which this run does not use), and a cosmosDBTrigger reading
// another connection, database or container than the store's.
func checkCosmosRun(o options, cfg cosmos.Config, fa *functionapp.App) error {
	if o.reset {
		return fmt.Errorf("hcpopsctl dev: -reset empties the embedded store in %s, but %s is set, so this run uses %s, which -reset does not touch: "+
			"drop that database yourself (or set another %s), or unset %s to reset the embedded store",
			o.dataDir, cosmos.SettingConnectionString, localstore.CosmosStoreName(cfg), cosmos.SettingDatabase, cosmos.SettingConnectionString)
	}
	for _, fn := range fa.Functions {
		b := fn.Trigger()
		if b.Type != functionapp.TypeCosmosDBTrigger {
			continue
		}
		for _, c := range []struct{ field, got, want string }{
			{"connection", b.Connection, cosmos.SettingConnectionString},
			{"databaseName", b.DatabaseName, cfg.Database},
			{"containerName", b.ContainerName, cosmos.ResourcesContainer},
			{"leaseContainerName", b.LeaseContainerName, cosmos.LeasesContainer},
		} {
			if c.got != c.want {
				return fmt.Errorf("hcpopsctl dev: function %s: %s is %q, but this run reads %q (%s): a trigger on another account, database or container is not served",
					fn.Name, c.field, c.got, c.want, localstore.CosmosStoreName(cfg))
			}
		}
	}
	return nil
}

// openStore opens the run's store. On Cosmos DB the containers are checked,
// or created when -create-containers says so (by default against a
// loopback endpoint: the emulator or the test server); a missing one
// without it is an error naming the container and the flag.
func openStore(ctx context.Context, o options, cfg cosmos.Config, onCosmos bool, logger *slog.Logger) (*devStore, error) {
	if !onCosmos {
		st, err := localstore.OpenEmbedded(o.dataDir, logger)
		if err != nil {
			return nil, err
		}
		return &devStore{Store: st, name: localstore.EmbeddedStoreName(o.dataDir)}, nil
	}
	create := cfg.Loopback()
	if o.createContainers != nil {
		create = *o.createContainers
	}
	mode := localstore.CheckContainers
	if create {
		mode = localstore.CreateContainers
	}
	st, err := localstore.OpenCosmos(ctx, cfg, mode, logger)
	if errors.Is(err, cosmos.ErrMissing) {
		return nil, fmt.Errorf("hcpopsctl dev: %w: pass -create-containers to create it as upstream deploys it "+
			"(Resources on /partitionKey with TTL on and defaultTtl -1, leases on /id)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("hcpopsctl dev: %w", err)
	}
	leases, err := st.Leases()
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return &devStore{Store: st, name: localstore.CosmosStoreName(cfg), leases: cosmosLeases{l: leases},
		cosmos: &cfg, created: create}, nil
}

// owner names this run in the leases it holds: a restart on the same
// machine and data dir takes its own lease back at once; any other host
// waits for it to expire.
func owner(dataDir string) string {
	host, _ := os.Hostname()
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	return "hcpopsctl dev on " + host + " (" + dataDir + ")"
}

// leasePrefix keeps dev's lease documents apart from the Functions host's
// own (whose ids hold the account and container) in a shared container.
const leasePrefix = "hcpops-dev."

// cosmosLeases keeps the trigger host's leases in the leases container.
type cosmosLeases struct{ l *cosmos.Leases }

type leaseDoc struct {
	ID string `json:"id"`
	triggerhost.Lease
}

func (c cosmosLeases) Load(ctx context.Context, name string) (triggerhost.Lease, bool, error) {
	it, err := c.l.Get(ctx, leasePrefix+name)
	if errors.Is(err, store.ErrNotFound) {
		return triggerhost.Lease{Name: name}, false, nil
	}
	if err != nil {
		return triggerhost.Lease{}, false, err
	}
	var d leaseDoc
	if err := json.Unmarshal(it.Body, &d); err != nil {
		return triggerhost.Lease{}, false, fmt.Errorf("lease %s is not a lease document (delete it to start over): %w", d.ID, err)
	}
	d.Name, d.ETag = name, it.ETag
	return d.Lease, true, nil
}

func (c cosmosLeases) Save(ctx context.Context, l triggerhost.Lease) (triggerhost.Lease, error) {
	body, err := json.Marshal(leaseDoc{ID: leasePrefix + l.Name, Lease: l})
	if err != nil {
		return l, err
	}
	it, err := c.l.Put(ctx, body, l.ETag)
	if errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrConflict) {
		return l, fmt.Errorf("%w: %w", triggerhost.ErrLeaseLost, err)
	}
	if err != nil {
		return l, err
	}
	l.ETag = it.ETag
	return l, nil
}

// optionalBool is a flag that is unset until given: -create-containers
// defaults by the endpoint, not by a fixed value.
type optionalBool struct{ v **bool }

func (b optionalBool) String() string {
	if b.v == nil || *b.v == nil {
		return "auto"
	}
	return strconv.FormatBool(**b.v)
}

func (b optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true or false, got %q", s)
	}
	*b.v = &v
	return nil
}

func (b optionalBool) IsBoolFlag() bool { return true }
