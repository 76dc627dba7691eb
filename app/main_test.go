package app_test

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
)

func TestMain(m *testing.M) { os.Exit(cosmostest.Main(m)) }

// TestNewRunsOnCosmosOnly: the Function App's handler without a Cosmos DB
// connection refuses to start, naming the setting, and opens nothing in
// the data dir an older build would have used.
func TestNewRunsOnCosmosOnly(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HCPOPS_DATA_DIR": dir, "CLUSTERS_SERVICE_URL": "http://127.0.0.1:9"}
	_, err := app.New(t.Context(), func(k string) string { return env[k] }, slog.New(slog.DiscardHandler), app.Parts{})
	if err == nil || !strings.Contains(err.Error(), cosmos.SettingConnectionString) {
		t.Fatalf("New without Cosmos DB = %v, want a refusal naming %s", err, cosmos.SettingConnectionString)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "store.db")); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("New created a store file in the data dir: %v", statErr)
	}
	env[cosmos.SettingConnectionString] = "AccountEndpoint=https://example.invalid/;AccountKey=;"
	if _, err := app.New(t.Context(), func(k string) string { return env[k] }, slog.New(slog.DiscardHandler), app.Parts{}); err != nil &&
		strings.Contains(err.Error(), "is not set") {
		t.Errorf("New with a Cosmos connection still says it is not set: %v", err)
	}
}
