// Package localstore is the developer binary's store: the embedded file in
// a data dir when no Cosmos DB is configured, shared with the CLI over the
// loopback store API while a process holds it, and the CLI's way back to
// whichever store that process uses. The Function App's binary runs on
// Cosmos DB alone and links none of it.
package localstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/store/embedded"
	"github.com/hcpops/hcpops/harness/storeapi"
)

// Setting names read here.
const (
	EnvDataDir     = "HCPOPS_DATA_DIR"
	DefaultDataDir = ".data"
	StoreFileName  = "store.db"
)

// Open is app.OpenStoreFunc for a local run: Cosmos DB whenever a
// connection is set, otherwise the embedded store in
// $HCPOPS_DATA_DIR/store.db.
func Open(ctx context.Context, getenv func(string) string, logger *slog.Logger) (store.Store, string, error) {
	_, err := cosmos.ConfigFromEnv(getenv)
	switch {
	case err == nil:
		return app.OpenCosmosStore(ctx, getenv, logger)
	case !errors.Is(err, cosmos.ErrNotConfigured):
		return nil, "", fmt.Errorf("reading Cosmos DB settings: %w", err)
	}
	dir := DataDir(getenv)
	s, err := OpenEmbedded(dir, logger)
	if err != nil {
		return nil, "", err // names the file and, for a damaged one, what to do
	}
	return s, "embedded " + filepath.Join(dir, StoreFileName), nil
}

// Serving is what the developer binary's serve adds to the Function App's:
// the local store, and the store API that lets its CLI use it while serve
// holds the file.
func Serving(getenv func(string) string) app.Local {
	return app.Local{
		OpenStore: Open,
		Share: func(_ context.Context, a *app.App) (func(closeApp func() error) error, error) {
			st, ok := a.Store.(*embedded.Store)
			if !ok {
				return nil, nil
			}
			dir := DataDir(getenv)
			sh, err := storeapi.Share(st, dir, storeapi.Advert{Command: "hcpops serve", Store: EmbeddedStoreName(dir), Settings: lifecycle.Settings(getenv)}, a.Logger)
			if err != nil {
				return nil, err
			}
			return sh.CloseAfter, nil
		},
	}
}
