package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/store/memory"
	"github.com/hcpops/hcpops/harness/storeapi"
)

// hcpopsctl top beside a running dev: the last ticks, each with what it saw
// active and stuck, the latest's active operations by kind and status,
// refreshed live; the handler's health route reports the last tick; and
// top says so when no dev runs.
func TestTopAndHealth(t *testing.T) {
	w := newWorkspace(t)
	if r := w.hcpops(t, "", "top", "-once"); !strings.Contains(r.stderr, "no log at .data/dev.log") {
		t.Errorf("top with no log: %d %q", r.code, r.stderr)
	}
	w.env = append(w.env, "HCPOPS_STUCK_AFTER=cluster.create=2s")
	d := w.startDev(t)
	req, _ := http.NewRequest(http.MethodPut, d.sim+"/_sim/durations", strings.NewReader(`{"cluster_installing":"10m"}`))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("PUT /_sim/durations: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	if r := w.hcpops(t, "", "submit", "-resource", cliCluster("slow")); r.code != 0 {
		t.Fatalf("submit: %s%s", r.stdout, r.stderr)
	}
	var r result
	waitFor(t, "top to show the slow cluster stuck", func() bool {
		r = w.hcpops(t, "", "top", "-once", "-n", "3")
		return regexp.MustCompile(`(?m)^cluster +Create +Provisioning +1 +1 +\d+s [0-9a-f-]{36}$`).MatchString(r.stdout)
	})
	for _, re := range []string{
		`^hcpopsctl top: \.data/dev\.log at \d\d:\d\d:\d\d\n`,
		`(?m)^hcpopsctl dev \(pid \d+\) runs on \.data$`,
		`(?m)^last tick \d+s ago: ok in [\d.]+m?s of its 4m0s budget; ticks every \d[\d.]*m?s$`,
		`(?m)^ +STARTED +OUTCOME +WALL +BUDGET +ACTIVE +STUCK +POLLED +CHANGED +SKIPPED +ERRORS +CS +CS ERR +CS P99$`,
		`(?m)^ +\d\d:\d\d:\d\d\.\d{3} +ok +[\d.]+m?s +\d+\.\d% +1 +1 +\d+ +\d+ +\d+ +\d+ +\d+ +\d+ +[\d.]+m?s$`,
		`(?m)^active at \d\d:\d\d:\d\d:$`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("top lacks %s:\n%s", re, r.stdout)
		}
	}
	if n := len(regexp.MustCompile(`(?m)^ +\d\d:\d\d:\d\d\.\d{3} +ok`).FindAllString(r.stdout, -1)); n != 3 {
		t.Errorf("top -n 3 showed %d ticks:\n%s", n, r.stdout)
	}

	// Live: it redraws every -every with what came meanwhile.
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.bin(), "top", "-every", "300ms", "-n", "1")
	cmd.Dir, cmd.Env = w.dir, w.env
	out, _ := cmd.Output()
	screens := strings.Split(string(out), "\x1b[H\x1b[2J")
	lastTicks := map[string]bool{}
	for _, s := range screens {
		if m := regexp.MustCompile(`(?m)^ +(\d\d:\d\d:\d\d\.\d{3}) +ok`).FindStringSubmatch(s); m != nil {
			lastTicks[m[1]] = true
		}
	}
	if len(screens) < 5 || len(lastTicks) < 2 {
		t.Errorf("top -every 300ms drew %d screens showing %d distinct last ticks in 2.5s; want it to follow the ticks:\n%q", len(screens)-1, len(lastTicks), out)
	}

	// The handler's health route: the last tick's age and outcome.
	m := regexp.MustCompile(`(?m)^  handler +(http://\S+)`).FindStringSubmatch(d.out.String())
	if m == nil {
		t.Fatalf("no handler line in dev's banner:\n%s", d.out.String())
	}
	resp, err := http.Get(m[1] + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var h struct {
		Status string
		Poll   struct {
			LastTick *struct {
				AgeSeconds float64
				Outcome    string
				BudgetMs   float64
			}
		}
	}
	if err := json.Unmarshal(body, &h); err != nil || h.Status != "ok" || h.Poll.LastTick == nil || h.Poll.LastTick.Outcome != "ok" ||
		h.Poll.LastTick.AgeSeconds > 5 || h.Poll.LastTick.BudgetMs != 240000 {
		t.Errorf("health: %s (%v)", body, err)
	}

	d.stop(t, w)
	if r := w.hcpops(t, "", "top", "-once"); !strings.Contains(r.stdout, "no hcpopsctl dev or serve runs on .data: no ticks will come until one starts there") {
		t.Errorf("top with no dev:\n%s", r.stdout)
	}
	if msg := oneLine(t, w.hcpops(t, "", "top", "-n", "0"), "top"); !strings.Contains(msg, "-n 0: want 1 or more") {
		t.Errorf("top -n 0: %q", msg)
	}
}

// TestTopDialsOnce: top's holder line dials the store API once and then
// reuses its client on every refresh; it dials again only when the held
// client stops proving itself (the process ended), and finds the next
// process that shares the store.
func TestTopDialsOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	share := func() *storeapi.Shared {
		sh, err := storeapi.Share(memory.New(), dir, storeapi.Advert{Command: "hcpopsctl dev"}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		return sh
	}
	sh := share()
	h := newHolder(dir)
	defer h.close()
	dials := 0
	h.dial = func(ctx context.Context, dir string, timeout time.Duration) (*storeapi.Client, storeapi.Advert, error) {
		dials++
		return storeapi.Dial(ctx, dir, timeout)
	}
	runs := regexp.MustCompile(`^hcpopsctl dev \(pid \d+\) runs on `)
	for i := range 5 {
		if s := h.status(ctx); !runs.MatchString(s) {
			t.Fatalf("refresh %d: %q", i, s)
		}
	}
	if dials != 1 {
		t.Errorf("%d dials for 5 refreshes, want 1", dials)
	}
	if err := sh.Close(); err != nil {
		t.Fatal(err)
	}
	if s := h.status(ctx); !strings.HasPrefix(s, "no hcpopsctl dev or serve runs on ") {
		t.Errorf("after the process stopped sharing: %q", s)
	}
	if dials != 2 {
		t.Errorf("%d dials, want a second once the held client failed", dials)
	}
	sh = share()
	defer sh.Close()
	if s := h.status(ctx); !runs.MatchString(s) {
		t.Errorf("after a new share: %q", s)
	}
	if s := h.status(ctx); !runs.MatchString(s) || dials != 3 {
		t.Errorf("%q after %d dials, want 3", s, dials)
	}
}
