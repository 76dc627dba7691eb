package main

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/devhost/devlog"
)

// hcpopsctl ops and hcpopsctl history beside a running dev: a succeeded, a
// failed and a retrying operation, as a person lists and follows them;
// the retrying one stuck past its threshold, with its deadline; ARM
// notifications refused and failing; and ops once no dev runs.
func TestOpsAndHistory(t *testing.T) {
	w := newWorkspace(t)
	w.env = append(w.env, "HCPOPS_STUCK_AFTER=cluster.create=3s")
	d := w.startDev(t)
	put := func(path, body string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPut, d.sim+path, strings.NewReader(body))
		if path == "/_sim/clusters/broken/fail" {
			req.Method = http.MethodPost
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s %s: %v %v", req.Method, path, err, resp)
		}
		resp.Body.Close()
	}
	submitTo := func(name, uri string) string {
		t.Helper()
		r := w.hcpops(t, "", "submit", "-resource", cliCluster(name), "-notification-uri", uri)
		m := regexp.MustCompile(`(?m)^operation (\S+)$`).FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("submit %s: %s%s", name, r.stdout, r.stderr)
		}
		return m[1]
	}
	submit := func(name string) string { t.Helper(); return submitTo(name, d.sink+"/"+name) }
	status := func(op string) string {
		r := w.hcpops(t, "", "status", op, "-subscription", cliSub)
		m := regexp.MustCompile(`"status": "(\w+)"`).FindStringSubmatch(r.stdout)
		if m == nil {
			return ""
		}
		return m[1]
	}
	put("/_sim/clusters/broken/fail", `{"code":"OCM3055","message":"quota exceeded in eastus"}`)
	ok, failed := submit("fine"), submit("broken")
	// ARM's URI not on the allow-list: refused, never sent. One where
	// nothing listens: failing, retried.
	refused, unreachable := submitTo("unheard", "https://not-arm.example/notify"), submitTo("unreached", "http://127.0.0.1:1/notify")
	waitFor(t, "all four to end", func() bool {
		return status(ok) == "Succeeded" && status(failed) == "Failed" && status(refused) == "Succeeded" && status(unreachable) == "Succeeded"
	})
	put("/_sim/faults", `{"error_rate":1,"error_status":503}`)
	stuck := submit("stuck")
	waitFor(t, "the stuck cluster's failed dispatch in the log", func() bool {
		found := false
		if err := devlog.Scan(w.dir+"/.data", func(r devlog.Record) { found = found || r.OperationID == stuck && r.Problem() }, stuck); err != nil {
			t.Fatal(err)
		}
		return found
	})

	// The active ones, everywhere: the stuck one, past its threshold, with
	// its deadline and why; the one still notifying ARM, with why; the
	// one whose notification was refused.
	var r result
	waitFor(t, "ops to mark the stuck cluster", func() bool {
		r = w.hcpops(t, "", "ops")
		return strings.Contains(r.stdout, "STUCK>3s") && strings.Contains(r.stdout, unreachable)
	})
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 4 || !regexp.MustCompile(`^OPERATION +SUBSCRIPTION +REQUEST +RESOURCE +STATUS +AGE +DEADLINE +LAST ERROR$`).MatchString(lines[0]) {
		t.Fatalf("ops:\n%s%s", r.stdout, r.stderr)
	}
	for _, re := range []string{
		`(?m)^` + stuck + ` +` + cliSub + ` +Create +cluster demo/stuck +Accepted STUCK>3s +\d+s +fails in (59|60)m +\(retrying\) dispatch failed; the batch is retried: dispatching operation`,
		`(?m)^` + refused + ` +` + cliSub + ` +Create +cluster demo/unheard +Succeeded \(ARM not told\) +\d+s +- +notification refused: attempt 1 to not-arm\.example: .*not on the allow-list`,
		`(?m)^` + unreachable + ` +` + cliSub + ` +Create +cluster demo/unreached +Succeeded \(notifying\) +\d+s +- +notification failed: attempt \d+ to 127\.0\.0\.1:1 \(next attempt \d\d:\d\d:\d\d\): posting notification`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("ops lacks %s:\n%s", re, r.stdout)
		}
	}
	// A subscription's every operation, newest first, with the failure's
	// own error.
	r = w.hcpops(t, "", "ops", "-subscription", cliSub)
	rows := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(rows) != 6 || !strings.HasPrefix(rows[1], stuck) || !strings.HasPrefix(rows[5], ok) ||
		!regexp.MustCompile(failed+` +Create +cluster demo/broken +Failed +\d+s +- +OCM3055: .*quota exceeded in eastus`).MatchString(rows[4]) ||
		strings.Contains(rows[0], "SUBSCRIPTION") {
		t.Errorf("ops -subscription:\n%s", r.stdout)
	}
	r = w.hcpops(t, "", "ops", "-subscription", cliSub, "-active", "-o", "json")
	// The -o json row, as a script reads it.
	var js []struct {
		OperationID      string     `json:"operationId"`
		StatusPath       string     `json:"statusPath"`
		StuckPastSeconds float64    `json:"stuckPastSeconds"`
		Deadline         *time.Time `json:"deadline"`
		LastProblem      *struct {
			Message string `json:"message"`
		} `json:"lastProblem"`
		Notification *struct {
			Outcome string `json:"outcome"`
		} `json:"notification"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &js); err != nil || len(js) != 2 || js[0].OperationID != stuck || js[0].LastProblem == nil || js[0].StatusPath == "" ||
		js[0].StuckPastSeconds != 3 || js[0].Deadline == nil || js[1].OperationID != unreachable || js[1].Notification == nil || js[1].Notification.Outcome != "failed" {
		t.Errorf("ops -active -o json: %v\n%s", err, r.stdout)
	}
	if msg := oneLine(t, w.hcpops(t, "", "ops", "-o", "yaml"), "ops"); !strings.Contains(msg, `-o "yaml": want table or json`) {
		t.Errorf("ops -o yaml: %q", msg)
	}
	// The SDK's own retries of the 503s are in the stuck operation's
	// history: they carry its id.
	if h := w.hcpops(t, "", "history", stuck); !regexp.MustCompile(`(?m)warn: Request for method \w+ and URL '\S+' failed with code 503, will try again`).MatchString(h.stdout) {
		t.Errorf("history of the stuck operation lacks the CS client's retries:\n%s%s", h.stdout, h.stderr)
	}
	put("/_sim/faults", `{}`)

	// The succeeded operation's history: dispatched, each transition with
	// the time in the state it left and since its start.
	r = w.hcpops(t, "", "history", ok)
	if r.code != 0 {
		t.Fatalf("history: %s%s", r.stdout, r.stderr)
	}
	for _, re := range []string{
		`(?m)^operation ` + ok + `$`,
		`(?m)^recorded  \.data/dev\.log$`,
		`(?m)^TIME +EVENT +IN STATE +SINCE START +DETAIL$`,
		`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} +dispatched by dispatchOperations +- +\d[\d.]*m?s +/api/aro_hcp/v1alpha1/clusters/\w+$`,
		`(?m)^\S+ \S+ +Accepted -> \w+ +\d[\d.]*m?s +\d[\d.]*m?s +-$`,
		`(?m)^\S+ \S+ +\w+ -> Succeeded +\d[\d.]*m?s +\d[\d.]*m?s +-$`,
		`(?m)^\S+ \S+ +notification delivered +- +\d[\d.]*m?s +host 127\.0\.0\.1:\d+$`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("history lacks %s:\n%s", re, r.stdout)
		}
	}
	path := "/subscriptions/" + cliSub + "/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/" + failed
	r = w.hcpops(t, "", "history", path)
	if !regexp.MustCompile(`-> Failed +\d[\d.]*m?s +\d[\d.]*m?s +OCM3055: .*quota exceeded in eastus`).MatchString(r.stdout) || !strings.Contains(r.stdout, "now       Failed") {
		t.Errorf("history of the failed operation:\n%s%s", r.stdout, r.stderr)
	}
	if msg := oneLine(t, w.hcpops(t, "", "history", "6e34c52d-4115-4834-abff-933590456a6e"), "history"); !strings.Contains(msg, "nothing recorded about operation 6e34c52d") {
		t.Errorf("history of an unknown operation: %q", msg)
	}

	// The history query for Application Insights reads only what the
	// records carry.
	checkHistoryQuery(t, w.dir+"/.data")

	// With no dev running, ops says so, and a warning from the last run
	// is not shown as work under way.
	put("/_sim/faults", `{"error_rate":1,"error_status":503}`)
	late := submit("late")
	waitFor(t, "the late cluster's failed dispatch in the log", func() bool {
		found := false
		_ = devlog.Scan(w.dir+"/.data", func(r devlog.Record) { found = found || r.OperationID == late && r.Problem() }, late)
		return found
	})
	d.stop(t, w)
	r = w.hcpops(t, "", "ops")
	lines = strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) < 3 || lines[0] != "no hcpopsctl dev or serve runs on .data: nothing works on these operations until one starts there" ||
		strings.Contains(r.stdout, "(retrying)") || !regexp.MustCompile(late+`.*\(when it last ran\) `).MatchString(r.stdout) {
		t.Errorf("ops with no dev running:\n%s%s", r.stdout, r.stderr)
	}
}

// checkHistoryQuery holds docs/operating.md's history query to the records
// a real run wrote: every message it names and every r.<key> it reads.
func checkHistoryQuery(t *testing.T, dataDir string) {
	t.Helper()
	b, err := os.ReadFile("docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```kusto\n(// query: history\n.*?)```").FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("docs/operating.md has no `// query: history` block")
	}
	q := m[1]
	keys := map[string]map[string]bool{}
	all := map[string]bool{}
	err = devlog.Scan(dataDir, func(r devlog.Record) {
		if keys[r.Msg] == nil {
			keys[r.Msg] = map[string]bool{}
		}
		for k := range r.Attrs {
			keys[r.Msg][k], all[k] = true, true
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, m := range regexp.MustCompile(`"([a-z]+\.[a-z_]+)"`).FindAllStringSubmatch(q, -1) {
		if keys[m[1]] == nil {
			t.Errorf("the history query names %q, which the run never wrote", m[1])
		}
		msgs = append(msgs, m[1])
	}
	for _, m := range regexp.MustCompile(`\br(?:\.|\['|\[")([a-z_0-9]+)`).FindAllStringSubmatch(q, -1) {
		found := slices.ContainsFunc(msgs, func(msg string) bool { return keys[msg][m[1]] }) || m[1] == "level" || m[1] == "error" && all["error"]
		if !found {
			t.Errorf("the history query reads r.%s, which no %v record carries", m[1], msgs)
		}
	}
}
