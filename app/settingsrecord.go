package app

import (
	"context"
	"log/slog"
	"os"

	"github.com/hcpops/hcpops/core/appsettings"
	"github.com/hcpops/hcpops/core/store/cosmos"
)

// Records of the settings record (docs/functions.md).
const (
	// MsgSettingsRecorded: the process wrote the settings it judges
	// with, which differed from the record (Info).
	MsgSettingsRecorded = "settings.recorded"
	// MsgSettingsNotRecorded: it could not; the operator CLI judges with
	// its own shell's settings until a start records them (Warn).
	MsgSettingsNotRecorded = "settings.not_recorded"
)

// EnvInstance is the Functions host's name for the instance a process
// runs on, which the record names.
const EnvInstance = "WEBSITE_INSTANCE_ID"

// recordSettings keeps the settings the tick judges with where the
// operator CLI reads them, on a Cosmos DB store (a local store's process
// announces them itself). It runs beside serving: a slow database delays
// the record, never the host's first request. The returned channel closes
// when it is done.
func (a *App) recordSettings(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	s, ok := a.Store.(*cosmos.Store)
	if !ok {
		close(done)
		return done
	}
	by, settings := a.set.instance, a.set.judging
	if by == "" {
		by, _ = os.Hostname()
	}
	go func() {
		defer close(done)
		leases, err := s.Leases()
		var wrote bool
		if err == nil {
			wrote, err = appsettings.Save(ctx, leases, settings, by, a.clock.Now())
		}
		switch {
		case err != nil:
			a.Logger.LogAttrs(ctx, slog.LevelWarn, MsgSettingsNotRecorded, slog.String("record", appsettings.ID),
				slog.String("instance", by), slog.String("error", err.Error()))
		case wrote:
			a.Logger.LogAttrs(ctx, slog.LevelInfo, MsgSettingsRecorded, slog.String("record", appsettings.ID),
				slog.String("instance", by), slog.Any("settings", settings))
		}
	}()
	return done
}
