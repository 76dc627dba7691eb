package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/hcpops/hcpops/harness/localstore"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos"
)

// connect is the CLI's store (localstore.ConnectStore) with what to do when there
// is none: a command never writes where nothing listens without saying so.
func connect(ctx context.Context, getenv func(string) string, access localstore.Access) (store.Store, localstore.Connection, error) {
	s, conn, err := localstore.ConnectStore(ctx, getenv, access, slog.New(slog.DiscardHandler))
	if errors.Is(err, localstore.ErrNoStore) {
		hint := "start `make run` (hcpopsctl dev) in this directory, or set " + localstore.EnvDataDir + " to the data dir of the one running"
		if access == localstore.WriteExisting {
			hint += "; -create creates a new store there, which nothing processes until a dev or serve starts on it"
		}
		return nil, conn, fmt.Errorf("%w: %s", err, hint)
	}
	return s, conn, err
}

func cosmosConfigured(getenv func(string) string) bool {
	_, err := cosmos.ConfigFromEnv(getenv)
	return err == nil
}
