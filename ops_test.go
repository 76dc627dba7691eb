package main

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/devhost/devlog"
)

// hcpops ops and hcpops history beside a running dev: a succeeded, a
// failed and a retrying operation, as a person lists and follows them.
func TestOpsAndHistory(t *testing.T) {
	w := newWorkspace(t)
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
	submit := func(name string) string {
		t.Helper()
		r := w.hcpops(t, "", "submit", "-resource", cliCluster(name), "-notification-uri", d.sink+"/"+name)
		m := regexp.MustCompile(`(?m)^operation (\S+)$`).FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("submit %s: %s%s", name, r.stdout, r.stderr)
		}
		return m[1]
	}
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
	waitFor(t, "both to end", func() bool { return status(ok) == "Succeeded" && status(failed) == "Failed" })
	put("/_sim/faults", `{"error_rate":1,"error_status":503}`)
	stuck := submit("stuck")
	waitFor(t, "the stuck cluster's failed dispatch in the log", func() bool {
		found := false
		if err := devlog.Scan(w.dir+"/.data", func(r devlog.Record) { found = found || r.OperationID == stuck && r.Problem() }, stuck); err != nil {
			t.Fatal(err)
		}
		return found
	})

	// The active ones, everywhere: only the stuck one, with why.
	r := w.hcpops(t, "", "ops")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 2 || !regexp.MustCompile(`^OPERATION +SUBSCRIPTION +REQUEST +RESOURCE +STATUS +AGE +LAST ERROR$`).MatchString(lines[0]) {
		t.Fatalf("ops:\n%s%s", r.stdout, r.stderr)
	}
	if !regexp.MustCompile(stuck + ` +` + cliSub + ` +Create +cluster demo/stuck +Accepted +\d+s +\(retrying\) dispatch failed; the batch is retried: dispatching operation`).MatchString(lines[1]) {
		t.Errorf("ops row of the stuck cluster:\n%s", r.stdout)
	}
	// A subscription's every operation, newest first, with the failure's
	// own error.
	r = w.hcpops(t, "", "ops", "-subscription", cliSub)
	rows := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(rows) != 4 || !strings.HasPrefix(rows[1], stuck) || !strings.HasPrefix(rows[3], ok) ||
		!regexp.MustCompile(failed+` +Create +cluster demo/broken +Failed +\d+s +OCM3055: .*quota exceeded in eastus`).MatchString(rows[2]) ||
		strings.Contains(rows[0], "SUBSCRIPTION") {
		t.Errorf("ops -subscription:\n%s", r.stdout)
	}
	r = w.hcpops(t, "", "ops", "-subscription", cliSub, "-active", "-o", "json")
	var js []opRow
	if err := json.Unmarshal([]byte(r.stdout), &js); err != nil || len(js) != 1 || js[0].OperationID != stuck || js[0].LastProblem == nil || js[0].StatusPath == "" {
		t.Errorf("ops -active -o json: %v\n%s", err, r.stdout)
	}
	if msg := oneLine(t, w.hcpops(t, "", "ops", "-o", "yaml"), "ops"); !strings.Contains(msg, `-o "yaml": want table or json`) {
		t.Errorf("ops -o yaml: %q", msg)
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
	if !regexp.MustCompile(`-> Failed +\d[\d.]*m?s +\d[\d.]*m?s +OCM3055`).MatchString(r.stdout) || !strings.Contains(r.stdout, "now       Failed") {
		t.Errorf("history of the failed operation:\n%s%s", r.stdout, r.stderr)
	}
	if msg := oneLine(t, w.hcpops(t, "", "history", "6e34c52d-4115-4834-abff-933590456a6e"), "history"); !strings.Contains(msg, "nothing recorded about operation 6e34c52d") {
		t.Errorf("history of an unknown operation: %q", msg)
	}

	// The history query for Application Insights reads only what the
	// records carry.
	checkHistoryQuery(t, w.dir+"/.data")
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
