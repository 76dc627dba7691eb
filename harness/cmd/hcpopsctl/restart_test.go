package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/harness/kql"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// restartsAlert is deploy/alerts/restarts.kql in Go, its event, window and
// comparison read from the shipped file: handler starts in the window
// before now, per instance (cloud_RoleInstance, which Application
// Insights adds to each line), above maxStarts. The app package's
// TestAlertEvaluatorsModelTheShippedKQL holds the rest of the file to it.
func restartsAlert(t *testing.T, recs []map[string]any, now time.Time, maxStarts int) map[string]int {
	t.Helper()
	b, err := os.ReadFile("deploy/alerts/restarts.kql")
	if err != nil {
		t.Fatal(err)
	}
	q, err := kql.Parse(string(b), []string{"max_starts"})
	if err != nil {
		t.Fatal(err)
	}
	window, err := q.Window(0)
	if err != nil || len(q.Events) != 1 || !strings.Contains(string(b), "by role_instance = cloud_RoleInstance") {
		t.Fatalf("restarts.kql: window %v, events %v; want one window, one event, counted by cloud_RoleInstance", err, q.Events)
	}
	starts := map[string]int{}
	for _, r := range recs {
		at, _ := time.Parse(time.RFC3339Nano, r["time"].(string))
		if r["msg"] == q.Events[0] && at.After(now.Add(-window)) {
			instance, _ := r["cloud_RoleInstance"].(string)
			starts[instance]++
		}
	}
	for k, n := range starts {
		if above, err := q.Compare("starts", "max_starts", float64(n), float64(maxStarts)); err != nil || !above {
			if err != nil {
				t.Fatalf("restarts.kql: %v", err)
			}
			delete(starts, k)
		}
	}
	return starts
}

// TestRestartAlert starts the real binary as the Functions host would,
// again and again on one instance: a handler that starts and serves, and
// one whose settings make it exit at once (the host restarts both). Three
// starts fire the rule at its default; one does not.
func TestRestartAlert(t *testing.T) {
	b, err := os.ReadFile("deploy/main.bicep")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^param restartsThreshold int = (\d+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("main.bicep has no `param restartsThreshold int = N`")
	}
	maxStarts, _ := strconv.Atoi(string(m[1]))
	bin := buildBinary(t, shippedBinary)
	shipped := shippedEnv(t)
	start := func(env ...string) []map[string]any {
		t.Helper()
		port := testsupport.FreePort(t)
		cmd := exec.Command(bin, "serve")
		cmd.Env = append(append(os.Environ(), shipped...), append([]string{"FUNCTIONS_CUSTOMHANDLER_PORT=" + port,
			"CLUSTERS_SERVICE_URL=http://127.0.0.1:9", "HCPOPS_AUTH=none", "HCPOPS_LOG_LEVEL=info"}, env...)...)
		var stdout testsupport.Buffer
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill() }() // it may have exited
		if len(env) == 0 {
			waitReady(t, &stdout)
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}
		err := cmd.Wait()
		if (err != nil) != (len(env) > 0) {
			t.Fatalf("serve %v exited with %v\nstderr:\n%s", env, err, stderr.String())
		}
		recs := lines(t, "stdout", []byte(stdout.String()))
		for _, r := range recs {
			r["cloud_RoleInstance"] = "instance-0"
		}
		return recs
	}

	var recs []map[string]any
	first := start()
	var started map[string]any
	for _, r := range first {
		if r["msg"] == app.MsgHandlerStarted {
			started = r
		}
	}
	if started == nil || started["level"] != "INFO" || started["port"] == nil || started["pid"] == nil {
		t.Fatalf("no %s record with port and pid on stdout: %v", app.MsgHandlerStarted, first)
	}
	recs = append(recs, first...)
	if got := restartsAlert(t, recs, time.Now(), maxStarts); len(got) != 0 {
		t.Errorf("restart alert after one start = %v, want quiet", got)
	}
	recs = append(recs, start()...)
	// A setting the handler refuses: it exits at start, and says why.
	recs = append(recs, start("HCPOPS_STUCK_AFTER=cluster.create=soon")...)
	got := restartsAlert(t, recs, time.Now(), maxStarts)
	if got["instance-0"] != 3 || len(got) != 1 {
		t.Errorf("restart alert after three starts = %v, want instance-0 with 3 (threshold %d)", got, maxStarts)
	}
	if got := restartsAlert(t, recs, time.Now().Add(61*time.Minute), maxStarts); len(got) != 0 {
		t.Errorf("restart alert an hour later = %v, want quiet", got)
	}
	// The documented attributes are the record's.
	doc, err := os.ReadFile("docs/functions.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(app.MsgHandlerStarted) + "` \\|.*$").Find(doc)
	for k := range started {
		if k != "time" && k != "level" && k != "msg" && k != "cloud_RoleInstance" && !strings.Contains(string(row), "`"+k+"`") {
			t.Errorf("docs/functions.md's row for %s does not name %s: %s", app.MsgHandlerStarted, k, row)
		}
	}
}
