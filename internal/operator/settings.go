package operator

import (
	"github.com/hcpops/hcpops/core/lifecycle"
)

// JudgingNames are the settings whose values change what the commands
// say of an operation (stuck, when it fails, when ARM is told next); the
// others a process reads (concurrency, batch sizes) judge nothing.
var JudgingNames = []string{
	lifecycle.EnvStuckAfter, lifecycle.EnvCreateDeadline, lifecycle.EnvDeleteDeadline, lifecycle.EnvUpgradeDeadline,
	lifecycle.EnvNotifyBackoffBase, lifecycle.EnvNotifyBackoffMax,
}

// judgeConfig is the lifecycle configuration an operation is judged with:
// the serving process's own settings when it announces them, else
// getenv's (against Cosmos DB, the operator's shell must carry the
// Function App's settings). from says which, for a reader.
func judgeConfig(getenv func(string) string, conn Connection) (cfg lifecycle.Config, from string, err error) {
	if p := conn.Process; p != nil && p.Settings != nil {
		cfg, err = lifecycle.ConfigFromEnv(func(k string) string { return p.Settings[k] })
		return cfg, "the running " + p.Command + "'s settings", err
	}
	cfg, err = lifecycle.ConfigFromEnv(getenv)
	return cfg, "this shell's settings", err
}
