package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/harness/devhost/devlog"
)

// history takes an operation as status and ops fail do: its status path,
// or its UUID with or without -subscription (with it, the operation's
// request is read from the store too).
func TestHistoryTakesWhatStatusTakes(t *testing.T) {
	dir := t.TempDir()
	env := envFor(dir)
	out, err := runCmd(t, env, "", "submit", "-create", "-resource", testCluster)
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`(?m)^operation (\S+)$`).FindStringSubmatch(out)[1]
	path := regexp.MustCompile(`statusURL (\S+)`).FindStringSubmatch(out)[1]
	w, _, err := devlog.Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(w, `{"time":%q,"level":"INFO","msg":%q,"operation_id":%q,"from":"Accepted","to":"Provisioning"}`+"\n",
		time.Now().Format(time.RFC3339Nano), lifecycle.MsgTransition, name)
	w.Close()
	for _, args := range [][]string{{name}, {name, "-subscription", cliSub}, {"-subscription", cliSub, name}, {path}} {
		out, err := runCmd(t, env, "", append([]string{"history"}, args...)...)
		if err != nil {
			t.Errorf("history %v: %v", args, err)
			continue
		}
		if !strings.Contains(out, "operation "+name) || !strings.Contains(out, "Accepted -> Provisioning") {
			t.Errorf("history %v:\n%s", args, out)
		}
		if len(args) > 1 || strings.HasPrefix(args[0], "/") {
			if !strings.Contains(out, "request   Create "+testCluster) {
				t.Errorf("history %v does not read the operation from the store:\n%s", args, out)
			}
		}
	}
	if _, err := runCmd(t, env, "", "history", name, "-subscription", "nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("history with a bad -subscription: %v", err)
	}
}

// hcpopsctl help lists the subcommands that end an operation by hand,
// which the runbooks send on-call to.
func TestUsageListsOpsFailAndCancel(t *testing.T) {
	out, err := runCmd(t, envFor(t.TempDir()), "", "help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n  ops fail ", "\n  ops cancel ", "\n  history ", "\n  sink "} {
		if !strings.Contains(out, want) {
			t.Errorf("hcpopsctl help lacks %q:\n%s", strings.TrimSpace(want), out)
		}
	}
}
