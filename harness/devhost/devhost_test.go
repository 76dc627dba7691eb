package devhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/localstore"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
	"github.com/hcpops/hcpops/harness/store/embedded"

	"github.com/hcpops/hcpops/harness/testsupport"
)

// syncBuffer is written by the run and read by the test.
type syncBuffer = testsupport.Buffer

// fastOptions run the repository's real app (host.json and function.json
// files) with short simulator phases and a poll tick every second.
func fastOptions(t *testing.T) options {
	testsupport.RealStack(t, "hcpopsctl dev whole, in real time (the simulator's phases, a tick every second)")
	return options{
		scriptRoot:    "../..",
		dataDir:       t.TempDir(),
		httpAddr:      "127.0.0.1:0",
		feedPollDelay: 50 * time.Millisecond,
		phase:         200 * time.Millisecond,
		// Longer than a tick, so progress shows the cluster Provisioning.
		simDurations: "cluster_installing=1500ms",
		schedules:    map[string]string{"pollOperations": "* * * * * *"},
		samples:      true,
		exitWhenDone: true,
		timeout:      90 * time.Second,
	}
}

func TestDevRunsEverySampleToItsExpectedEnd(t *testing.T) {
	var out, logs syncBuffer
	o := fastOptions(t)
	statuses := map[string]arm.OperationStatus{}
	o.hooks.settled = func(h *triggerhost.Host, paths map[string]string) {
		// ARM's status poll, through the host's HTTP front door.
		for _, label := range []string{"create-cluster", "create-failing-cluster"} {
			statuses[label] = getStatus(t, h.FrontURL()+paths[label])
		}
	}
	start := time.Now()
	err := run(context.Background(), o, &out, &logs, map[string]string{})
	t.Logf("run took %s", time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("run: %v\n--- stdout\n%s\n--- logs\n%s", err, out.String(), logs.String())
	}
	text := out.String()
	t.Logf("stdout:\n%s", text)
	for _, l := range strings.Split(text, "\n") {
		if len(l) > ScreenWidth && !strings.HasPrefix(strings.TrimSpace(l), "curl ") {
			t.Errorf("a line of %d columns, wider than %d:\n%s", len(l), ScreenWidth, l)
		}
	}
	want := map[string]string{
		"create-cluster": "Succeeded", "create-nodepool": "Succeeded", "create-externalauth": "Succeeded",
		"request-credential": "Succeeded", "update-cluster": "Succeeded", "create-failing-nodepool": "Failed",
		"create-failing-cluster": "Failed", "create-doomed-cluster": "Succeeded", "create-doomed-nodepool": "Succeeded",
		"delete-doomed-cluster": "Succeeded", "upgrade-cluster": "Succeeded", "upgrade-nodepool": "Succeeded",
	}
	_, table, ok := strings.Cut(text, "OPERATION")
	if !ok {
		t.Fatalf("no table in the output:\n%s", text)
	}
	table = "OPERATION" + table
	rows := map[string][]string{}
	implicit := 0
	for _, line := range strings.Split(table, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		if f[0] == implicitLabel {
			implicit++
			if f[2] != "Delete" || f[len(f)-1] != "-" {
				t.Errorf("implicit operation row %q: want a Delete without notification", line)
			}
		}
		rows[f[0]] = f
	}
	for label, status := range want {
		f, ok := rows[label]
		if !ok {
			t.Errorf("no table row for %s", label)
			continue
		}
		if !strings.Contains(strings.Join(f, " "), " "+status+" ") || f[len(f)-1] != "y" {
			t.Errorf("row %s = %v, want status %s and notified y", label, f, status)
		}
	}
	if implicit != 1 {
		t.Errorf("%d implicit operations in the table, want 1 (the doomed cluster's node pool delete)", implicit)
	}
	if st := statuses["create-cluster"]; st.Status != arm.ProvisioningStateSucceeded || st.EndTime == nil {
		t.Errorf("status of create-cluster via HTTP = %+v", st)
	}
	if st := statuses["create-failing-cluster"]; st.Status != arm.ProvisioningStateFailed || st.Error == nil || st.Error.Code != "OCM3055" {
		t.Errorf("status of create-failing-cluster via HTTP = %+v, want Failed with OCM3055", st)
	}
	for _, change := range []string{"Accepted -> Provisioning", "Provisioning -> Succeeded", "Deleting -> Succeeded", "-> Failed"} {
		if !strings.Contains(text, change) {
			t.Errorf("progress never showed %q", change)
		}
	}
	// Both upgrades are seen under way: CS takes the simulator's upgrade
	// phases to move, so the update shows Updating before it succeeds.
	for _, label := range []string{"upgrade-cluster", "upgrade-nodepool"} {
		if !progressShows(text, label, "Updating -> Succeeded") {
			t.Errorf("progress never showed %s Updating -> Succeeded", label)
		}
	}
}

func TestDevSurvivesHandlerRestarts(t *testing.T) {
	var out, logs syncBuffer
	o := fastOptions(t)
	done := make(chan struct{})
	hosts := make(chan *triggerhost.Host, 1)
	o.hooks.started = func(h *triggerhost.Host) {
		hosts <- h
		go func() {
			// Kill the handler three times while the samples run; stop
			// early if the run is over. Each restart waits for the worker
			// it replaced to be up again: a Restart before the new worker
			// started would stop nothing, and a loaded machine would see
			// fewer restarts than asked for.
			sup := h.Supervisor()
			for i := range 3 {
				select {
				case <-done:
					return
				case <-time.After(300 * time.Millisecond):
				}
				if !waitStarts(sup, i+1, done) {
					return
				}
				sup.Restart()
			}
		}()
	}
	err := run(context.Background(), o, &out, &logs, map[string]string{})
	close(done)
	if err != nil {
		t.Fatalf("run: %v\n--- stdout\n%s\n--- logs\n%s", err, out.String(), logs.String())
	}
	h := <-hosts
	// Counted when the run ended: the restarts happened while samples ran.
	if starts := h.Supervisor().Starts(); starts < 4 {
		t.Errorf("handler started %d times during the run, want at least 4 (three restarts)\n%s", starts, out.String())
	}
	if !strings.Contains(out.String(), "all sample operations ended as expected") {
		t.Errorf("no success line in\n%s", out.String())
	}
}

// waitStarts waits until the supervisor has started n workers, the last one
// ready, or until done closes (false).
func waitStarts(sup *triggerhost.Supervisor, n int, done <-chan struct{}) bool {
	for sup.Starts() < n {
		select {
		case <-done:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return sup.Ready(ctx) == nil
}

func TestDevOptions(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	o, err := parseOptions([]string{"-schedule", "pollOperations=*/2 * * * * *", "-phase", "1s", "-exit-when-done"}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.dataDir != localstore.DefaultDataDir || o.schedules["pollOperations"] != "*/2 * * * * *" || !o.exitWhenDone || o.phase != time.Second {
		t.Errorf("options = %+v", o)
	}
	withEnv := func(k string) (string, bool) { return "/tmp/x", k == localstore.EnvDataDir }
	if o, _ := parseOptions(nil, withEnv, io.Discard); o.dataDir != "/tmp/x" {
		t.Errorf("data dir = %q, want $%s", o.dataDir, localstore.EnvDataDir)
	}
	for _, bad := range [][]string{
		{"-phase", "0s"}, {"-schedule", "nope"}, {"-sim-durations", "cluster_bogus=1s"}, {"-log-level", "loud"},
		{"-samples=false", "-exit-when-done"}, {"-handler-port", "70000"}, {"extra"},
	} {
		if _, err := parseOptions(bad, noEnv, io.Discard); err == nil {
			t.Errorf("parseOptions(%q) succeeded, want an error", bad)
		}
	}
	var usage bytes.Buffer
	if _, err := parseOptions([]string{"-h"}, noEnv, &usage); err != errHelp || !strings.Contains(usage.String(), "-exit-when-done") {
		t.Errorf("-h: err %v, usage %q", err, usage.String())
	}
}

func getStatus(t *testing.T, url string) arm.OperationStatus {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"?api-version=2024-06-10-preview", nil)
	req.Header.Set("X-Ms-Home-Tenant-Id", devTenantID)
	req.Header.Set("X-Ms-Client-Object-Id", devClientID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("GET %s: %v", url, err)
		return arm.OperationStatus{}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var st arm.OperationStatus
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &st) != nil {
		t.Errorf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return st
}

func TestPrepareDataDirDropsLeasesOfAMissingStore(t *testing.T) {
	dir := t.TempDir()
	lease := filepath.Join(dir, "host", "leases", "dispatchOperations.json")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Dir(lease), 0o755))
	must(os.WriteFile(lease, []byte(`{"continuation":"57"}`), 0o644))
	if _, err := prepareDataDir(dir, false, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lease); !os.IsNotExist(err) {
		t.Errorf("a lease without its store survived: %v", err)
	}
	// With a store in place, state is kept unless -reset.
	must(os.MkdirAll(filepath.Dir(lease), 0o755))
	must(os.WriteFile(lease, []byte(`{"continuation":"57"}`), 0o644))
	must(os.WriteFile(filepath.Join(dir, "store.db"), nil, 0o644))
	if _, err := prepareDataDir(dir, false, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lease); err != nil {
		t.Errorf("lease of an existing store was dropped: %v", err)
	}
	if _, err := prepareDataDir(dir, true, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "store.db")); !os.IsNotExist(err) {
		t.Errorf("-reset kept the store: %v", err)
	}
}

func TestDurationsFromPhase(t *testing.T) {
	o := options{phase: 5 * time.Second, simDurations: "node_pool_pending=1s"}
	d, err := o.durations()
	if err != nil {
		t.Fatal(err)
	}
	if d.ClusterValidating != 5*time.Second || d.ClusterInstalling != 10*time.Second ||
		d.NodePoolUninstalling != 10*time.Second || d.NodePoolPending != time.Second || d.CredentialExpiry < time.Hour ||
		d.ControlPlaneUpgradeScheduled != 5*time.Second || d.ControlPlaneUpgrading != 10*time.Second ||
		d.NodePoolUpgradeScheduled != 5*time.Second || d.NodePoolUpgrading != 10*time.Second {
		t.Errorf("durations = %+v", d)
	}
}

// TestDevStopsOnDamage: a store file damaged under a running dev stops it
// with the store's message, as serve does, instead of serving errors with
// the same advice on every call.
func TestDevStopsOnDamage(t *testing.T) {
	var out, logs syncBuffer
	o := fastOptions(t)
	o.samples, o.exitWhenDone = false, false
	o.timeout = 60 * time.Second
	path := filepath.Join(o.dataDir, localstore.StoreFileName)
	o.hooks.started = func(*triggerhost.Host) {
		// The tick, every second, is the next to read the file.
		if err := os.Truncate(path, 0); err != nil {
			t.Error(err)
		}
	}
	err := run(context.Background(), o, &out, &logs, map[string]string{})
	if !errors.Is(err, embedded.ErrDamaged) || !strings.Contains(err.Error(), path) {
		t.Fatalf("run: %v; want it stopped with ErrDamaged naming %s\n--- logs\n%s", err, path, logs.String())
	}
}

// progressShows says whether a progress line of the sample label (its
// head, and the line it may wrap onto) shows change.
func progressShows(text, label, change string) bool {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !strings.Contains(l, " "+label+" ") {
			continue
		}
		if strings.Contains(l, change) || i+1 < len(lines) && strings.Contains(lines[i+1], change) &&
			!strings.Contains(lines[i+1], ":") {
			return true
		}
	}
	return false
}
