package soak

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hcpops/hcpops/harness/devhost/functionapp"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
)

// Timings of the handler that the checks hold it to.
const (
	pollBudget = 8 * time.Second // HCPOPS_POLL_BUDGET
	csTimeout  = 2 * time.Second // CLUSTERS_SERVICE_TIMEOUT; above the CS latency spikes
)

// handlerSettings are the app settings of the `hcpops serve` child:
// the proxied store, the simulator, loopback notifications and timings
// short enough for a soak.
func handlerSettings(cosmosURL, database, csURL string) map[string]string {
	return map[string]string{
		"CosmosDB":                           "AccountEndpoint=" + cosmosURL + ";AccountKey=" + cosmostest.EmulatorKey + ";",
		"COSMOS_DATABASE":                    database,
		"HCPOPS_AUTH":                        "none", // no App Service Authentication in front of a local host
		"CLUSTERS_SERVICE_URL":               csURL,
		"CLUSTERS_SERVICE_RETRY_LIMIT":       "3",
		"CLUSTERS_SERVICE_RETRY_INTERVAL":    "50ms",
		"CLUSTERS_SERVICE_TIMEOUT":           csTimeout.String(),
		"HCPOPS_NOTIFICATION_ALLOW_LOOPBACK": "true",
		"HCPOPS_NOTIFY_BACKOFF_BASE":         "200ms",
		"HCPOPS_NOTIFY_BACKOFF_MAX":          "1s",
		"HCPOPS_DISPATCH_GRACE":              "1s",
		"HCPOPS_PENDING_ID_GRACE":            "3s",
		// The shortest cap the backoff of failing CS calls allows (its base
		// is fixed at 10s): the soak's CS fails 15% of calls by design.
		"HCPOPS_POLL_BACKOFF_MAX": "10s",
		"HCPOPS_POLL_BUDGET":      pollBudget.String(),
		// A delete no witness corroborates waits its 404 out this long:
		// twice the soak's 3 s misrouted and gateway windows, within its
		// minute (the production default is ten minutes).
		"HCPOPS_ABSENCE_WINDOW": "6s",
	}
}

// handlerEnv is this process's environment without any setting the
// handler reads, plus settings.
func handlerEnv(environ []string, settings map[string]string) []string {
	var env []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "CosmosDB") || strings.HasPrefix(name, "COSMOS_") || strings.HasPrefix(name, "CLUSTERS_SERVICE_") ||
			strings.HasPrefix(name, "HCPOPS_") || strings.HasPrefix(name, "FUNCTIONS_") {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range settings {
		env = append(env, k+"="+v)
	}
	return env
}

// handlerCommand runs `hcpops serve` so that stopping it is a SIGKILL.
func handlerCommand(binary, root string, env []string, logger *slog.Logger) triggerhost.Command {
	return triggerhost.Command{Path: binary, Args: []string{"serve", "-log-format", "text"}, Dir: root, AppRoot: root,
		Env: env, Logger: logger, StopSignal: syscall.SIGKILL}
}

// loadApp reads the repository's Functions app and speeds it up: the poll
// timer every second, small change-feed batches (more of them to
// duplicate and reorder) and dispatch retries in milliseconds.
func loadApp(root, database string) (*functionapp.App, error) {
	app, err := functionapp.Load(root, functionapp.Settings(map[string]string{"COSMOS_DATABASE": database}))
	if err != nil {
		return nil, fmt.Errorf("loading the Functions app at %s: %w", root, err)
	}
	timers, feeds := 0, 0
	for i, fn := range app.Functions {
		for j, b := range fn.Bindings {
			switch b.Type {
			case functionapp.TypeTimerTrigger:
				app.Functions[i].Bindings[j].Schedule = "* * * * * *"
				timers++
			case functionapp.TypeCosmosDBTrigger:
				app.Functions[i].Bindings[j].MaxItemsPerInvocation = 10
				app.Functions[i].Retry = &functionapp.RetryPolicy{Strategy: functionapp.StrategyExponentialBackoff,
					MaxRetryCount: 5, MinimumInterval: 100 * time.Millisecond, MaximumInterval: time.Second}
				feeds++
			}
		}
	}
	if timers == 0 || feeds == 0 {
		return nil, fmt.Errorf("the Functions app at %s has %d timer and %d change-feed functions, want both", root, timers, feeds)
	}
	return app, nil
}

// timerFunctions names the app's timer-triggered functions.
func timerFunctions(app *functionapp.App) []string {
	var out []string
	for _, fn := range app.Functions {
		if fn.Trigger().Type == functionapp.TypeTimerTrigger {
			out = append(out, fn.Name)
		}
	}
	return out
}

// moduleRoot finds the directory holding go.mod and host.json above the
// working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	for {
		if isFile(filepath.Join(dir, "go.mod")) && isFile(filepath.Join(dir, "host.json")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding the module root: no directory with go.mod and host.json above the working directory; pass -script-root")
		}
		dir = parent
	}
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// simDurations are the simulator's phases: p each, the working phases
// twice as long, credentials that never lapse during a run.
func simDurations(p time.Duration) simulator.Durations {
	long := 2 * p
	return simulator.Durations{
		ClusterValidating: p, ClusterPending: p, ClusterInstalling: long, ClusterUpdating: long, ClusterUninstalling: long,
		NodePoolValidating: p, NodePoolPending: p, NodePoolInstalling: long, NodePoolUpdating: long, NodePoolUninstalling: long,
		ExternalAuthUninstalling: p, CredentialIssuing: p, CredentialRevoking: p,
		CredentialExpiry: simulator.DefaultDurations().CredentialExpiry,
	}
}
