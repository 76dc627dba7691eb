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
