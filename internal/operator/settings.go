package operator

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/lifecycle"
)

// JudgingNames are the settings whose values change what the commands
// say of an operation (stuck, when it fails, when ARM is told next); the
// others a process reads (concurrency, batch sizes) judge nothing.
var JudgingNames = []string{
	lifecycle.EnvStuckAfter, lifecycle.EnvCreateDeadline, lifecycle.EnvDeleteDeadline, lifecycle.EnvUpgradeDeadline,
	lifecycle.EnvNotifyBackoffBase, lifecycle.EnvNotifyBackoffMax,
}

// withRecord is conn with the Function App's record of its settings read,
// when its build has one and no process announces its own.
func withRecord(ctx context.Context, conn Connection) Connection {
	if conn.LoadRecord != nil && conn.Process == nil {
		conn.Recorded, conn.RecordNote = conn.LoadRecord(ctx)
	}
	return conn
}

// judgeConfig is the lifecycle configuration an operation is judged with:
// the serving process's own settings when it announces them, else those
// the Function App recorded in the database, else getenv's. from says
// which, for a reader.
func judgeConfig(getenv func(string) string, conn Connection) (cfg lifecycle.Config, from string, err error) {
	set, from := judgingSettings(conn)
	if set == nil {
		set = getenv
	}
	cfg, err = lifecycle.ConfigFromEnv(set)
	return cfg, from, err
}

// judgingSettings are the settings the process serving conn judges with,
// and their source in words; nil when it has told none.
func judgingSettings(conn Connection) (func(string) string, string) {
	if p := conn.Process; p != nil && p.Settings != nil {
		return func(k string) string { return p.Settings[k] }, fmt.Sprintf("the settings of %s (pid %d)", p.Command, p.PID)
	}
	if r := conn.Recorded; r != nil {
		return func(k string) string { return r.Settings[k] }, fmt.Sprintf("the Function App's settings, recorded %s by instance %s",
			r.At.UTC().Format(time.RFC3339), r.By)
	}
	return nil, "this shell's settings"
}

// settingsDiffer names the judging settings this shell sets otherwise
// than the process ops judges with; "" when they agree or the process told
// none.
func settingsDiffer(getenv func(string) string, conn Connection) string {
	theirs, _ := judgingSettings(conn)
	if theirs == nil {
		return ""
	}
	var diffs []string
	for _, k := range JudgingNames {
		if v, mine := theirs(k), getenv(k); mine != v {
			diffs = append(diffs, fmt.Sprintf("%s=%q (here %q)", k, v, mine))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, ", ")
}
