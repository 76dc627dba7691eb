package devhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// sink stands in for ARM's async-notification endpoint: it records every
// POST so the final table can say whether each operation was notified.
type sink struct {
	url    string
	logger *slog.Logger

	mu    sync.Mutex
	calls map[string][]arm.OperationStatus // by path
}

// startSink serves the sink on a free 127.0.0.1 port until ctx is done.
func startSink(ctx context.Context, logger *slog.Logger) (*sink, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("notification sink: %w", err)
	}
	s := &sink{url: "http://" + ln.Addr().String(), logger: logger, calls: map[string][]arm.OperationStatus{}}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("notification sink stopped", "error", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return s, nil
}

// uri is the notification URI handed to the frontend for one sample.
func (s *sink) uri(label string) string { return s.url + "/notify/" + label }

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "notifications are POSTed", http.StatusMethodNotAllowed)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var status arm.OperationStatus
	if err := json.Unmarshal(raw, &status); err != nil {
		http.Error(w, "body is not an operation status: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.calls[r.URL.Path] = append(s.calls[r.URL.Path], status)
	s.mu.Unlock()
	s.logger.Info("ARM notification received", "path", r.URL.Path, "operation", status.Name, "status", status.Status)
	w.WriteHeader(http.StatusOK)
}

// notified reports whether a terminal status reached uri's path.
func (s *sink) notified(uri string) bool {
	path, ok := strings.CutPrefix(uri, s.url)
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.calls[path] {
		if c.Status.IsTerminal() {
			return true
		}
	}
	return false
}
