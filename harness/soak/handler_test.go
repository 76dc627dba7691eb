package soak

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/devhost/functionapp"
)

func TestHandlerEnvDropsTheCallersSettings(t *testing.T) {
	env := handlerEnv([]string{"PATH=/bin", "CosmosDB=AccountEndpoint=https://prod/", "HCPOPS_DATA_DIR=/x", "CLUSTERS_SERVICE_TOKEN=t",
		"FUNCTIONS_CUSTOMHANDLER_PORT=1", "COSMOS_DATABASE=prod"}, handlerSettings("http://127.0.0.1:9/", "db", "http://127.0.0.1:8"))
	for _, kv := range env {
		if strings.Contains(kv, "prod") || kv == "HCPOPS_DATA_DIR=/x" || strings.HasPrefix(kv, "CLUSTERS_SERVICE_TOKEN") || strings.HasPrefix(kv, "FUNCTIONS_") {
			t.Errorf("the caller's %s reached the handler", kv)
		}
	}
	for _, want := range []string{"PATH=/bin", "COSMOS_DATABASE=db", "CLUSTERS_SERVICE_URL=http://127.0.0.1:8", "HCPOPS_NOTIFICATION_ALLOW_LOOPBACK=true"} {
		if !slices.Contains(env, want) {
			t.Errorf("env lacks %s", want)
		}
	}
}

func TestLoadAppSpeedsTheTriggersUp(t *testing.T) {
	root, err := moduleRoot()
	must(t, err)
	app, err := loadApp(root, "db")
	must(t, err)
	for _, fn := range app.Functions {
		b := fn.Trigger()
		switch b.Type {
		case functionapp.TypeTimerTrigger:
			if b.Schedule != "* * * * * *" {
				t.Errorf("%s schedule %q, want every second", fn.Name, b.Schedule)
			}
		case functionapp.TypeCosmosDBTrigger:
			if b.MaxItemsPerInvocation != 10 || fn.Retry == nil || fn.Retry.MinimumInterval != 100*time.Millisecond || b.DatabaseName != "db" {
				t.Errorf("%s: batch %d, retry %+v, database %q", fn.Name, b.MaxItemsPerInvocation, fn.Retry, b.DatabaseName)
			}
		}
	}

	bare := t.TempDir()
	must(t, os.WriteFile(filepath.Join(bare, "host.json"), []byte(`{"version":"2.0"}`), 0o644))
	must(t, os.MkdirAll(filepath.Join(bare, "status"), 0o755))
	must(t, os.WriteFile(filepath.Join(bare, "status", "function.json"),
		[]byte(`{"bindings":[{"type":"httpTrigger","direction":"in","name":"req"},{"type":"http","direction":"out","name":"res"}]}`), 0o644))
	if _, err := loadApp(bare, "db"); err == nil || !strings.Contains(err.Error(), "0 timer and 0 change-feed functions") {
		t.Errorf("an app without triggers: %v", err)
	}
}
