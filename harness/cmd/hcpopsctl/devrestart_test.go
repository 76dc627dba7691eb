package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/harness/devhost/devlog"
	"github.com/hcpops/hcpops/harness/simulator"
)

// Killing dev mid-install and starting it again finishes the install:
// the simulator's objects, timelines and ledger outlive the process, and
// the notification sink listens where it did, so ARM's stand-in is told.
func TestDevRestartFinishesWhatWasInFlight(t *testing.T) {
	w := newWorkspace(t)
	slow := []string{"-sim-durations", "cluster_installing=4s"}
	d := w.startDev(t, slow...)
	op := submitStuck(t, w, "restarted", d.sink+"/restarted")
	waitFor(t, "the install to start", func() bool { return opStatus(t, w, op) == "Provisioning" })
	d.kill(t)
	if got := opStatus(t, w, op); got != "Provisioning" {
		t.Fatalf("after the kill the operation is %q, want Provisioning", got)
	}
	state := filepath.Join(w.dir, ".data", simulator.SnapshotFile)
	if b, err := os.ReadFile(state); err != nil || !strings.Contains(string(b), "restarted") {
		t.Fatalf("the simulator's state after the kill: %v", err)
	}
	again := w.startDev(t, slow...)
	waitFor(t, "dev's banner to say it restored the simulator", func() bool {
		return strings.Contains(again.out.String(), "cs state       .data/"+simulator.SnapshotFile+"  (restored from the last run")
	})
	if again.sink != d.sink {
		t.Errorf("the notification sink moved from %s to %s: the earlier operations' URIs point to nothing", d.sink, again.sink)
	}
	waitFor(t, "the install to finish after the restart", func() bool { return opStatus(t, w, op) == "Succeeded" })
	waitFor(t, "its notification to be delivered", func() bool {
		return logged(t, w, op, lifecycle.MsgNotification, func(r devlog.Record) bool { return r.Str("outcome") == "delivered" })
	})
	if strings.Contains(readLog(t, w), "not found") {
		t.Errorf("dev.log has a not found after the restart:\n%s", tail(readLog(t, w), 3000))
	}
}

// A damaged state file stops dev at start with a message naming it, and
// -reset starts afresh.
func TestDevRefusesDamagedSimulatorState(t *testing.T) {
	w := newWorkspace(t)
	if err := os.MkdirAll(filepath.Join(w.dir, ".data"), 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(w.dir, ".data", simulator.SnapshotFile)
	if err := os.WriteFile(state, []byte(`{"format":1,"state":{"seq":`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A store exists, so dev does not reset the data dir by itself.
	if r := w.hcpops(t, `{"id":"x","partitionKey":"p"}`, "doc", "put", "-create", "-"); r.code != 0 {
		t.Fatalf("doc put: %s%s", r.stdout, r.stderr)
	}
	r := w.hcpops(t, "", devArgs(w, "-timeout", "20s")...)
	if r.code != 1 || !strings.Contains(r.stderr, ".data/"+simulator.SnapshotFile+" is damaged") || strings.Contains(r.stderr, "panic") {
		t.Fatalf("dev on a damaged state file: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	d := w.startDev(t, "-reset")
	waitFor(t, "dev -reset to start afresh", func() bool { return strings.Contains(d.out.String(), "(kept across restarts") })
}

func readLog(t *testing.T, w *workspace) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(w.dir, ".data", "dev.log"))
	return string(b)
}
