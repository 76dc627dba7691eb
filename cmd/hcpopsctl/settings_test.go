package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/appsettings"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// The operator CLI judges with the settings the Function App runs with,
// not its own shell's (issue 46: the app's terminal said STUCK while ops
// said "retrying"). The app runs with HCPOPS_STUCK_AFTER=any=1s; the
// operator's shell sets none. Before the app has started ops says it has
// no record and judges with the shell's: not stuck. Once the app's serve
// has started and recorded its settings, ops says STUCK and whose
// settings those are, and names a shell setting that differs.
func TestOpsJudgesWithTheAppsSettings(t *testing.T) {
	testsupport.RealStack(t, "the shipped binaries, built and run on the Cosmos-compatible server")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Accepted a minute ago: past the app's 1s threshold, far below this
	// shell's defaults.
	cfg, got := clusterBeingCreated(ctx, t, testsupport.NewClock(time.Now().Add(-time.Minute)))
	op := got.Operation.Name()
	bin := buildCLI(t)
	run := runner(ctx, t, bin, operatorEnv(cfg))

	out, errOut, code := run("", "ops")
	if code != 0 || !strings.Contains(out, "judged with this shell's settings: the Function App has recorded none") ||
		!strings.Contains(out, op) || strings.Contains(out, "STUCK") {
		t.Fatalf("ops before the app started: exit %d\n%s%s", code, out, errOut)
	}

	app := filepath.Join(t.TempDir(), "hcpops")
	if out, err := testsupport.GoCommand(t, []string{"CGO_ENABLED=0"}, "build", "-trimpath", "-o", app, "../hcpops").CombinedOutput(); err != nil {
		t.Fatalf("building the Function App's binary: %v\n%s", err, out)
	}
	serve := exec.CommandContext(ctx, app, "serve")
	serve.Env = append(operatorEnv(cfg), "FUNCTIONS_CUSTOMHANDLER_PORT="+testsupport.FreePort(t), "CLUSTERS_SERVICE_URL=http://127.0.0.1:9",
		"HCPOPS_AUTH=none", "HCPOPS_LOG_LEVEL=info", "HCPOPS_STUCK_AFTER=any=1s", "WEBSITE_INSTANCE_ID=instance-a")
	var stdout, stderr testsupport.Buffer
	serve.Stdout, serve.Stderr = &stdout, &stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = serve.Process.Kill(); _ = serve.Wait() }()
	stdout.AwaitText(t, `"msg":"settings.recorded"`)

	out, errOut, code = run("", "ops")
	if code != 0 || !strings.Contains(out, "judged with the Function App's settings, recorded ") || !strings.Contains(out, "by instance instance-a") ||
		!strings.Contains(out, "STUCK>") {
		t.Errorf("ops with the app's settings recorded: exit %d\n%s%s\nserve's stderr:\n%s", code, out, errOut, stderr.String())
	}
	mine := runner(ctx, t, bin, append(operatorEnv(cfg), "HCPOPS_STUCK_AFTER=any=1h"))
	out, errOut, code = mine("", "ops")
	if code != 0 || !strings.Contains(out, `not this shell's: HCPOPS_STUCK_AFTER="any=1s" (here "any=1h")`) || !strings.Contains(out, "STUCK>") {
		t.Errorf("ops from a shell that sets another threshold: exit %d\n%s%s", code, out, errOut)
	}
}

// recorded says why it has no record when the Function App recorded none
// and when the record is damaged (another writer's document under its
// id), and reads a whole one; a damaged record is not judged with.
func TestRecordedSaysWhyItHasNone(t *testing.T) {
	testsupport.RealStack(t, "the Cosmos-compatible server")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := cosmostest.NewStore(t)
	leases, err := s.Leases()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	for _, step := range []struct {
		name     string
		write    func() error
		wantNote string // "": a record is read
	}{
		{"none", func() error { return nil }, "the Function App has recorded none"},
		{"damaged", func() error {
			_, err := leases.Put(ctx, []byte(`{"id":"`+appsettings.ID+`","kind":"lease"}`), "")
			return err
		}, "the Function App's record of them could not be read"},
		{"recorded", func() error {
			it, err := leases.Get(ctx, appsettings.ID)
			if err != nil {
				return err
			}
			body := `{"id":"` + appsettings.ID + `","kind":"` + appsettings.Kind + `","settings":{"HCPOPS_STUCK_AFTER":"any=1s"},` +
				`"recordedAt":"` + at.Format(time.RFC3339) + `","recordedBy":"instance-a"}`
			_, err = leases.Put(ctx, []byte(body), it.ETag)
			return err
		}, ""},
	} {
		if err := step.write(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		rec, note := recorded(ctx, s)
		switch {
		case step.wantNote != "" && (rec != nil || !strings.Contains(note, step.wantNote)):
			t.Errorf("%s: recorded = %+v, %q; want none, saying %q", step.name, rec, note, step.wantNote)
		case step.wantNote == "" && (rec == nil || note != "" || rec.Settings["HCPOPS_STUCK_AFTER"] != "any=1s" ||
			rec.By != "instance-a" || !rec.At.Equal(at)):
			t.Errorf("%s: recorded = %+v, %q; want instance-a's record of %s", step.name, rec, note, at)
		}
	}
}
