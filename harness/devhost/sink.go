package devhost

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/hcpops/hcpops/harness/armsink"
)

// sinkAddrFile keeps the notification sink's address in the data dir.
const sinkAddrFile = "sink-addr"

// startSink starts the notification sink on the address the last run's
// used, so the notification URIs of operations a restart finishes still
// reach it; on a free port on a first run, or when that one is taken.
func startSink(ctx context.Context, dir string, logger *slog.Logger) (*armsink.Sink, error) {
	path := filepath.Join(dir, sinkAddrFile)
	if b, err := os.ReadFile(path); err == nil {
		if addr := strings.TrimSpace(string(b)); loopbackAddr(addr) {
			sk, err := armsink.Start(ctx, armsink.Config{Logger: logger, Addr: addr})
			if err == nil {
				return sk, nil
			}
			logger.WarnContext(ctx, "the notification sink cannot listen where the last run's did; notifications of its operations fail until they expire",
				"addr", addr, "error", err)
		}
	}
	sk, err := armsink.Start(ctx, armsink.Config{Logger: logger})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(strings.TrimPrefix(sk.URL(), "http://")+"\n"), 0o644); err != nil {
		logger.WarnContext(ctx, "keeping the notification sink's address failed", "path", path, "error", err)
	}
	return sk, nil
}
