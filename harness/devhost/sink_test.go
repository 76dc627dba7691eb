package devhost

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/harness/testsupport"
)

// TestSinkKeepsItsPortOrFallsBack: the notification sink listens where
// the last run's did, so a restart's notifications still reach it; when
// that address is taken, or the kept one is no loopback address or
// garbage, it falls back to a free port, says so when it had one to
// reuse, and keeps the new address for the next run.
func TestSinkKeepsItsPortOrFallsBack(t *testing.T) {
	ctx := context.Background()
	// A port some other process holds.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tc := range []struct {
		name string
		kept string // the sink-addr file's content; "" none
		// reuse: the sink must listen on kept; else anywhere else, with a
		// warning when warn.
		reuse, warn bool
	}{
		{name: "first run: a free port"},
		{name: "the last run's port", kept: "free", reuse: true},
		{name: "taken: a free port instead", kept: taken.Addr().String(), warn: true},
		{name: "no loopback address: ignored", kept: "192.0.2.1:8080"},
		{name: "garbage: ignored", kept: "not an address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, sinkAddrFile)
			kept := tc.kept
			if kept == "free" { // a port free now: the one a previous sink had
				prev, err := startSink(ctx, dir, slog.New(slog.DiscardHandler))
				if err != nil {
					t.Fatal(err)
				}
				kept = strings.TrimPrefix(prev.URL(), "http://")
				if err := prev.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if kept != "" {
				if err := os.WriteFile(path, []byte(kept+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var logs testsupport.Buffer
			sk, err := startSink(ctx, dir, slog.New(slog.NewJSONHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer sk.Close()
			addr := strings.TrimPrefix(sk.URL(), "http://")
			if got := addr == kept; got != tc.reuse {
				t.Errorf("listens on %s with %q kept; want the kept address %v", addr, kept, tc.reuse)
			}
			if !loopbackAddr(addr) {
				t.Errorf("listens on %s, not loopback", addr)
			}
			warned := strings.Contains(logs.String(), `"level":"WARN"`) && strings.Contains(logs.String(), `"addr":"`+kept+`"`)
			if warned != tc.warn {
				t.Errorf("warned %v, want %v: %s", warned, tc.warn, logs.String())
			}
			if b, err := os.ReadFile(path); err != nil || strings.TrimSpace(string(b)) != addr {
				t.Errorf("kept %q (%v), want the address it listens on, %s", b, err, addr)
			}
			// It is the sink that listens there: a notification is recorded.
			uri := sk.URI("c1/create")
			resp, err := http.Post(uri, "application/json", strings.NewReader(`{"id":"op","name":"op","status":"Succeeded"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !sk.Notified(uri) {
				t.Errorf("POST %s: %d, recorded %v", uri, resp.StatusCode, sk.Notified(uri))
			}
		})
	}
}
