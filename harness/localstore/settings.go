package localstore

import (
	"github.com/hcpops/hcpops/core/lifecycle"
)

// JudgeSettings are the lifecycle settings as getenv has them (stuck
// thresholds, deadlines, notification backoff: every name
// lifecycle.ConfigFromEnv reads, "" for unset, and nothing else), for a
// process's advert: the CLI judges with them instead of its own shell's.
// An unset one is kept, so the shell cannot fill it in.
func JudgeSettings(getenv func(string) string) map[string]string {
	set := map[string]string{}
	_, _ = lifecycle.ConfigFromEnv(func(k string) string { // a bad value stops the process first
		set[k] = getenv(k)
		return set[k]
	})
	return set
}

// JudgingNames are the settings whose values change what the CLI says of
// an operation (stuck, when it fails, when ARM is told next); the others
// a process reads (concurrency, batch sizes) judge nothing.
var JudgingNames = []string{
	lifecycle.EnvStuckAfter, lifecycle.EnvCreateDeadline, lifecycle.EnvDeleteDeadline, lifecycle.EnvUpgradeDeadline,
	lifecycle.EnvNotifyBackoffBase, lifecycle.EnvNotifyBackoffMax,
}

// JudgeConfig is the lifecycle configuration the CLI judges an operation
// with: the running process's own settings (conn.Process.Settings) when
// a process serves the store, else getenv's. from says which, for a
// reader.
func JudgeConfig(getenv func(string) string, conn Connection) (cfg lifecycle.Config, from string, err error) {
	if p := conn.Process; p != nil && p.Settings != nil {
		cfg, err = lifecycle.ConfigFromEnv(func(k string) string { return p.Settings[k] })
		return cfg, "the running " + p.Command + "'s settings", err
	}
	cfg, err = lifecycle.ConfigFromEnv(getenv)
	return cfg, "this shell's settings", err
}
