package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/harness/devhost/devlog"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/localstore"
	"github.com/hcpops/hcpops/harness/store/memory"
	"github.com/hcpops/hcpops/harness/storeapi"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// ops judges an operation with the settings of the process that serves
// the store, not with its own shell's: with HCPOPS_STUCK_AFTER set for
// the process alone, ops says STUCK as the process's terminal does, and
// with it set in the shell alone, ops does not. The process's
// operation.stuck record is said in words, never as "(retrying)
// operation.stuck".
func TestOpsJudgesWithTheProcessSettings(t *testing.T) {
	for _, tc := range []struct {
		name           string
		process, shell string // HCPOPS_STUCK_AFTER of each
		stuck          bool
	}{
		{"set for the process", "any=30s", "", true},
		{"set in the shell", "", "any=30s", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			mem := memory.New()
			clk := testsupport.NewClock(time.Now().Add(-45 * time.Second))
			got, err := frontend.New(mem, clk, uuid.NewString).PutCluster(ctx, cliCluster("slow"),
				frontend.ClusterSpec{Location: "eastus", VersionID: "4.20"}, frontend.Options{Location: "eastus"})
			if err != nil {
				t.Fatal(err)
			}
			name := got.Operation.Name()
			env := func(process bool) func(string) string {
				return func(k string) string {
					switch {
					case k == localstore.EnvDataDir:
						return dir
					case k == lifecycle.EnvStuckAfter && process:
						return tc.process
					case k == lifecycle.EnvStuckAfter:
						return tc.shell
					}
					return ""
				}
			}
			sh, err := storeapi.Share(mem, dir, storeapi.Advert{Command: "hcpopsctl dev", Settings: lifecycle.Settings(env(true))},
				slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sh.CloseAfter(mem.Close) }()
			// What the process's tick logs when its age passes 30s.
			w, _, err := devlog.Open(dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(w, `{"time":%q,"level":"WARN","msg":%q,"operation_id":%q,"status":"Accepted","seconds_since_start":31,"threshold_seconds":30}`+"\n",
				time.Now().Add(-14*time.Second).Format(time.RFC3339Nano), lifecycle.MsgStuck, name)
			w.Close()

			out, err := runCmd(t, env(false), "", "ops")
			if err != nil {
				t.Fatal(err)
			}
			row := ""
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, name) {
					row = l
				}
			}
			if row == "" {
				t.Fatalf("ops does not list %s:\n%s", name, out)
			}
			if strings.Contains(row, "(retrying) "+lifecycle.MsgStuck) || strings.Contains(row, lifecycle.MsgStuck) {
				t.Errorf("ops names the record instead of saying it: %s", row)
			}
			if said := strings.Contains(row, "STUCK>30s") && strings.Contains(row, "stuck since ") &&
				strings.Contains(row, "past its 30s threshold"); said != tc.stuck {
				t.Errorf("ops says stuck = %v, want %v (the process's threshold %q, the shell's %q):\n%s", said, tc.stuck, tc.process, tc.shell, out)
			}
			if !strings.Contains(out, "judged with the settings of hcpopsctl dev (pid ") || !strings.Contains(out, lifecycle.EnvStuckAfter+"=") {
				t.Errorf("ops does not say the shell's settings differ from the process's it judged with:\n%s", out)
			}
		})
	}
}
