package app_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/harness/apptest"
	"github.com/hcpops/hcpops/harness/simulator/simtest"
	"github.com/hcpops/hcpops/harness/store/embedded"
)

// TestCloseReleasesWhatNewOpened: Close (and a failing New) release the
// store and the Clusters Service client New built, and never a part the
// caller supplied.
func TestCloseReleasesWhatNewOpened(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	_, simURL := simtest.Start(t)
	logger := slog.New(slog.DiscardHandler)
	settings := func(dir string, extra ...string) func(string) string {
		env := map[string]string{"HCPOPS_DATA_DIR": dir, "CLUSTERS_SERVICE_URL": simURL, "CLUSTERS_SERVICE_RETRY_LIMIT": "0"}
		for i := 0; i+1 < len(extra); i += 2 {
			env[extra[i]] = extra[i+1]
		}
		return func(k string) string { return env[k] }
	}
	const href = "/api/aro_hcp/v1alpha1/clusters/nosuchcluster"

	t.Run("built from settings", func(t *testing.T) {
		dir := t.TempDir()
		a, err := app.New(ctx, settings(dir), logger, app.Parts{OpenStore: apptest.OpenEmbedded})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		reopenStore(t, dir)
		if _, err := a.ClusterService.GetCluster(ctx, href); err == nil || strings.Contains(err.Error(), "404") {
			t.Errorf("CS client after Close: err = %v, want it closed", err)
		}
		if err := a.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
	t.Run("New fails after opening", func(t *testing.T) {
		dir := t.TempDir()
		_, err := app.New(ctx, settings(dir, "HCPOPS_POLL_CONCURRENCY", "0"), logger, app.Parts{OpenStore: apptest.OpenEmbedded})
		if err == nil || !strings.Contains(err.Error(), "HCPOPS_POLL_CONCURRENCY") {
			t.Fatalf("New = %v, want the bad setting named", err)
		}
		reopenStore(t, dir)
	})
	t.Run("supplied parts", func(t *testing.T) {
		st, err := embedded.Open(filepath.Join(t.TempDir(), "supplied.db"), embedded.WithoutSync())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		cs, err := ocm.New(ctx, ocm.Config{URL: simURL, Timeout: 10 * time.Second}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		for _, extra := range [][]string{nil, {"HCPOPS_POLL_CONCURRENCY", "0"}} {
			a, err := app.New(ctx, settings(t.TempDir(), extra...), logger, app.Parts{Store: st, ClusterService: cs})
			if err == nil {
				if err := a.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
			}
			if _, err := st.Get(ctx, "pk", "id"); err != nil && !strings.Contains(err.Error(), "not found") {
				t.Errorf("supplied store after Close (settings %v): %v", extra, err)
			}
			if _, err := cs.GetCluster(ctx, href); err == nil || !strings.Contains(err.Error(), "404") {
				t.Errorf("supplied CS client after Close (settings %v): err = %v, want CS's 404", extra, err)
			}
		}
	})
}

// reopenStore proves the embedded store in dir was closed: bbolt holds an
// exclusive lock on the file while it is open.
func reopenStore(t *testing.T, dir string) {
	t.Helper()
	s, err := embedded.Open(filepath.Join(dir, "store.db"), embedded.WithoutSync())
	if err != nil {
		t.Fatalf("store still held open: %v", err)
	}
	_ = s.Close()
}
