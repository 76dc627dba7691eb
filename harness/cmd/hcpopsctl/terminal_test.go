package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hcpops/hcpops/harness/devhost"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// pane is a tmux session on a private server: a real terminal a command
// runs in, read back as a person sees it.
type pane struct {
	t      *testing.T
	socket string
}

func startPane(t *testing.T, w *workspace, command string) *pane {
	t.Helper()
	testsupport.RealStack(t, "tmux")
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("the terminal checks need tmux (apt-get install tmux; .ci/run installs it): %v", err)
	}
	p := &pane{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	// A 100-column pane: what the terminal's lines must fit (ScreenWidth).
	args := []string{"-S", p.socket, "-f", "/dev/null", "new-session", "-d", "-s", "run", "-x", "100", "-y", "60", "-c", w.dir}
	for _, kv := range w.env {
		if k, _, _ := strings.Cut(kv, "="); k == envAsMain || k == "PATH" || strings.HasPrefix(k, "HCPOPS_") || strings.HasPrefix(k, "CosmosDB") || k == "GOTOOLCHAIN" {
			args = append(args, "-e", kv)
		}
	}
	p.tmux(append(args, command)...)
	p.tmux("set-option", "-t", "run", "history-limit", "20000")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("terminal:\n%s", p.screen())
		}
		_ = exec.Command("tmux", "-S", p.socket, "kill-server").Run() // gone already when the command ended
	})
	return p
}

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// stopAndWait interrupts the pane's command (as Ctrl-C does) and waits
// for the pane to signal channel, which the command line it was started
// with signals when the command has exited.
func (p *pane) stopAndWait(channel string) {
	_ = exec.Command("tmux", "-S", p.socket, "send-keys", "-t", "run", "C-c", "").Run()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "tmux", "-S", p.socket, "wait-for", channel).CombinedOutput(); err != nil {
		p.t.Errorf("waiting for the pane's command to exit (%s): %v %s", channel, err, out)
	}
}

// screen is everything the terminal showed, wrapped lines joined.
func (p *pane) screen() string {
	out, _ := exec.Command("tmux", "-S", p.socket, "capture-pane", "-p", "-J", "-S", "-", "-t", "run").Output()
	return string(out)
}

// waitLine waits for a line of the terminal matching re and returns it;
// a line wrapped under its operation counts as one.
func (p *pane) waitLine(what, re string) string {
	p.t.Helper()
	rx := regexp.MustCompile(re)
	var line string
	waitFor(p.t, what+" in the terminal", func() bool {
		line = rx.FindString(devhost.Unwrap(p.screen()))
		return line != ""
	})
	return line
}

// checkWidth fails for a line of dev's wider than the screen it is made
// for: only a ready-to-paste curl and the command typed may be wider.
func checkWidth(t *testing.T, screen, typed string) {
	t.Helper()
	for _, l := range strings.Split(screen, "\n") {
		if n := utf8.RuneCountInString(l); n > devhost.ScreenWidth && !strings.HasPrefix(strings.TrimSpace(l), "curl ") && !strings.Contains(l, typed) {
			t.Errorf("a line of %d columns, wider than %d:\n%s", n, devhost.ScreenWidth, l)
		}
	}
}

// What `make run`'s terminal shows (make run is `bin/hcpopsctl dev`, here
// with short timings): a failed operation with its error code and
// message, a retrying one with why and its next attempt, a refused ARM
// notification, a skipped malformed document, and, after a restart, the
// operation written while no dev ran, followed to its end. A bad submit
// beside it is refused and leaves the terminal quiet.
func TestTerminalShowsFailedRetryingRefused(t *testing.T) {
	w := newWorkspace(t)
	// A retried create adopts the cluster ID its failed attempt chose
	// after this grace (60s by default). A cluster create is stuck after
	// 8s (more than any but the slow one below takes).
	w.env = append(w.env, "HCPOPS_PENDING_ID_GRACE=2s", "HCPOPS_STUCK_AFTER=cluster.create=8s")
	run := "bin/hcpopsctl " + strings.Join(quoteAll(devArgs(w)), " ")
	p := startPane(t, w, "bash --norc --noprofile")
	p.tmux("send-keys", "-t", "run", run, "Enter")
	sim := strings.Fields(p.waitLine("the banner", `clusters svc   \S+`))[2]
	p.waitLine("the serving line", `serving; operations submitted`)
	const sub = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	cluster := func(name string) string {
		return "/subscriptions/" + sub + "/resourceGroups/demo/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name
	}
	opOf := func(r result) string {
		t.Helper()
		m := regexp.MustCompile(`(?m)^operation (\S+)$`).FindStringSubmatch(r.stdout)
		if r.code != 0 || m == nil {
			t.Fatalf("submit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		return m[1]
	}
	post := func(path, body string) {
		t.Helper()
		resp, err := http.Post(sim+path, "application/json", strings.NewReader(body))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("POST %s: %v %v", path, err, resp)
		}
		resp.Body.Close()
	}

	// Failed: CS fails the cluster where it would install.
	post("/_sim/clusters/doomed/fail", `{"code":"OCM3055","message":"quota exceeded in eastus"}`)
	failed := opOf(w.hcpops(t, "", "submit", "-resource", cluster("doomed")))
	p.waitLine("the failed cluster", failed+`.*-> Failed  OCM3055: .*quota exceeded in eastus`)

	// Retrying: CS answers 503 to the next calls (more than the client's
	// own retries), so the change-feed batch is retried.
	post("/_sim/faults/next", `{"count":3,"status":503}`)
	retried := opOf(w.hcpops(t, "", "submit", "-resource", cluster("retried")))
	p.waitLine("the retrying cluster", retried+`.*retrying: dispatch failed; the batch is retried: .*503`)
	p.waitLine("the batch's next attempt", `\(host\) dispatchOperations .*retrying: invocation failed; retry 1 of 5: .*\(next attempt \d\d:\d\d:\d\d\)`)
	p.waitLine("the retried cluster's end", retried+`.*-> Succeeded`)

	// Refused: ARM's notification URI is not on the allow-list.
	refused := opOf(w.hcpops(t, "", "submit", "-resource", cluster("unheard"), "-notification-uri", "https://not-arm.example/notify"))
	p.waitLine("the refused notification", refused+`.*notification refused: attempt 1 to not-arm\.example: .*not on the allow-list`)

	// A bad submit beside it: refused, nothing written, the terminal quiet.
	bad := w.hcpops(t, "", "submit", "-resource", cluster("demo")+"/nodePools/np1", "-replicas", "-3")
	if bad.code != 1 || !strings.Contains(bad.stderr, `-replicas "-3": must be between 0 and 200`) {
		t.Errorf("bad submit: exit %d %q", bad.code, bad.stderr)
	}

	// Skipped: a malformed operation document loaded by hand.
	doc := fmt.Sprintf(`{"id":"bad-op","partitionKey":%q,"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","properties":{"status":7}}`, sub)
	if r := w.hcpops(t, doc, "doc", "put", "-unchecked", "-"); r.code != 0 {
		t.Fatalf("doc put: %s%s", r.stdout, r.stderr)
	}
	p.waitLine("the skipped document", `\(document\)\s+bad-op .*skipped: skipping a malformed operation document`)

	// After a restart: an operation written while no dev ran is shown and
	// followed to its end. Ctrl-C says it stopped.
	p.tmux("send-keys", "-t", "run", "C-c", "")
	advert := filepath.Join(w.dir, ".data", "store-api.json")
	waitFor(t, "dev to stop and withdraw its advert", func() bool { _, err := os.Stat(advert); return os.IsNotExist(err) })
	p.waitLine("the stop line", `(?m)^hcpopsctl dev stopped: interrupted\. State stays in \.data: a new run follows what is still active\.$`)
	waiting := w.hcpops(t, "", "submit", "-resource", cluster("meanwhile"))
	if !strings.Contains(waiting.stdout, "waiting   no hcpopsctl dev or serve runs on .data") || strings.Contains(waiting.stdout, "curl ") {
		t.Errorf("submit with no dev running:\n%s", waiting.stdout)
	}
	meanwhile := opOf(waiting)
	// The pane says when this dev has exited, so the test's directory is
	// removed only after dev's last write to it (tmux's kill-server at
	// cleanup hangs dev up and returns at once; RemoveAll once met dev
	// still writing .data).
	p.tmux("send-keys", "-t", "run", run+"; tmux wait-for -S dev-exited", "Enter")
	t.Cleanup(func() { p.stopAndWait("dev-exited") })
	p.waitLine("the restart's list", `following 1 operation\(s\) active when this run started:`)
	p.waitLine("the earlier operation", `\(earlier\)\s+`+meanwhile+`.*- -> Accepted`)
	p.waitLine("the earlier operation's end", meanwhile+`.*-> Succeeded`)

	// Stuck: a cluster that installs for 10 minutes passes its 8s
	// threshold; the line says for how long, which threshold, and when
	// the tick fails it (the create deadline, 60m after its start).
	sims := regexp.MustCompile(`clusters svc   (\S+)`).FindAllStringSubmatch(p.screen(), -1)
	sim = sims[len(sims)-1][1]
	req, _ := http.NewRequest(http.MethodPut, sim+"/_sim/durations", strings.NewReader(`{"cluster_installing":"10m"}`))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("PUT /_sim/durations: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	slow := opOf(w.hcpops(t, "", "submit", "-resource", cluster("slow")))
	p.waitLine("the stuck cluster", slow+` Create cluster slow +STUCK: Provisioning for \d+s, past its 8s threshold \(HCPOPS_STUCK_AFTER\); fails in (59|60)m \(\d\d:\d\d:\d\d\)`)

	// dev.log was appended to, not emptied: the first run's history is
	// still there.
	if h := w.hcpops(t, "", "history", failed); h.code != 0 || !regexp.MustCompile(`-> Failed .*OCM3055`).MatchString(h.stdout) {
		t.Errorf("history of the first run's failed operation after a restart: %d\n%s%s", h.code, h.stdout, h.stderr)
	}

	screen := p.screen()
	checkWidth(t, screen, run)
	if strings.Contains(screen, "nodePools/np1") || regexp.MustCompile(`np1\s`).MatchString(screen) {
		t.Errorf("the refused submit shows in the terminal")
	}
	if n := strings.Count(screen, retried+" "); n > 8 {
		t.Errorf("the retrying operation took %d lines; repeats should be folded", n)
	}
	if os.Getenv("HCPOPS_TERMINAL_TRANSCRIPT") != "" {
		if err := os.WriteFile(os.Getenv("HCPOPS_TERMINAL_TRANSCRIPT"), bytes.TrimSpace([]byte(screen)), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// quoteAll quotes each argument for the shell tmux runs the command in.
func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return out
}
