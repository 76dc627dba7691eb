package deploy_test

import (
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/harness/apptest"
	"github.com/hcpops/hcpops/harness/simulator"
)

// ---- the provisioning SLO's burn-rate rules (deploy/slo.bicep)

// burnWindow is one entry of slo.bicep's burnWindows.
type burnWindow struct {
	name, burnRate, longWindow, shortWindow, windowSize, frequency string
}

// sloAlerts are slo.bicep's rules as the template sends them, with
// main.bicep's default target: one a burn window.
func sloAlerts(t *testing.T) []templateAlert {
	t.Helper()
	slo := readDeploy(t, "slo.bicep")
	scalars, _ := bicepDefaults(t)
	target, ok := scalars["provisioningSloTarget"]
	if !ok {
		t.Fatal("main.bicep has no provisioningSloTarget default")
	}
	m := regexp.MustCompile(`(?m)^\s+query: '(.*)\$\{loadTextContent\('slo/(\w+)\.kql'\)\}'$`).FindStringSubmatch(slo)
	if m == nil {
		t.Fatal("slo.bicep has no query line loading slo/*.kql")
	}
	body := readDeploy(t, filepath.Join("slo", m[2]+".kql"))
	var out []templateAlert
	for _, w := range burnWindows(t, slo) {
		vars := map[string]string{"sloTarget": target, "w.burnRate": w.burnRate, "w.longWindow": w.longWindow, "w.shortWindow": w.shortWindow}
		prefix := regexp.MustCompile(`\$\{([\w.]+)\}`).ReplaceAllStringFunc(m[1], func(s string) string {
			v, ok := vars[s[2:len(s)-1]]
			if !ok {
				t.Fatalf("slo.bicep's query uses %s, which the test does not know", s)
			}
			return v
		})
		prefix = strings.ReplaceAll(prefix, `\n`, "\n")
		a := templateAlert{name: "slo:" + w.name, file: m[2], params: map[string]string{}, query: prefix + body}
		for _, l := range strings.Split(strings.TrimSuffix(prefix, "\n"), "\n") {
			lm := regexp.MustCompile(`^let (\w+) = (.+);$`).FindStringSubmatch(l)
			if lm == nil {
				t.Fatalf("slo.bicep prefixes %q, not a let statement", l)
			}
			a.params[lm[1]] = lm[2]
		}
		out = append(out, a)
	}
	return out
}

func burnWindows(t *testing.T, slo string) []burnWindow {
	t.Helper()
	i := strings.Index(slo, "var burnWindows = [\n")
	block, _, ok := strings.Cut(slo[max(i, 0):], "\n]\n")
	if i < 0 || !ok {
		t.Fatal("slo.bicep has no `var burnWindows = [ ... ]`")
	}
	var out []burnWindow
	for _, obj := range strings.Split(block, "\n  }")[:strings.Count(block, "\n  }")] {
		field := func(k string) string {
			m := regexp.MustCompile(`(?m)^\s+` + k + `: '?([^'\s]+)'?`).FindStringSubmatch(obj)
			if m == nil {
				t.Fatalf("a burn window lacks %s:\n%s", k, obj)
			}
			return m[1]
		}
		out = append(out, burnWindow{field("name"), field("burnRate"), field("longWindow"), field("shortWindow"), field("windowSize"), field("evaluationFrequency")})
	}
	return out
}

// burnAlert is slo/provisioning_burn.kql: whether the share of cluster
// creates that ended Failed, over both the long and the short window
// before now, spends the error budget (1 - target) at least burn times.
func burnAlert(q shipped, recs []map[string]any, now time.Time, target, burn float64, long, short time.Duration) (fires bool, longBurn, shortBurn float64) {
	if !slices.Equal(q.Windows, []string{"long_window", "short_window"}) {
		q.t.Fatalf("provisioning_burn.kql's ago() windows are %v; its evaluator reads long_window, then short_window", q.Windows)
	}
	var longTotal, longFailed, shortTotal, shortFailed float64
	for _, r := range since(recs, now, long) {
		if !apptest.MsgIn(r, q.event(0)) || apptest.Str(r, "kind") != "cluster" || apptest.Str(r, "request") != "Create" ||
			(apptest.Str(r, "to") != "Succeeded" && apptest.Str(r, "to") != "Failed") || apptest.At(r).After(now) {
			continue
		}
		failed := apptest.Str(r, "to") == "Failed"
		longTotal++
		recent := apptest.At(r).After(now.Add(-short))
		if failed {
			longFailed++
		}
		if recent {
			shortTotal++
			if failed {
				shortFailed++
			}
		}
	}
	rate := func(f, n float64) float64 {
		if n == 0 {
			return 0
		}
		return f / n / (1 - target)
	}
	longBurn, shortBurn = rate(longFailed, longTotal), rate(shortFailed, shortTotal)
	return q.cmp("long_burn", "burn_rate", longBurn, burn) && q.cmp("short_burn", "burn_rate", shortBurn, burn), longBurn, shortBurn
}

// failedCreateRun drives a cluster create CS fails (OCM3055) to Failed,
// through the production assembly, as driveCreate drives one to success.
func failedCreateRun(t *testing.T) []map[string]any {
	t.Helper()
	r := apptest.New(t, apptest.Options{Settings: func(string) map[string]string {
		return map[string]string{"HCPOPS_POLL_BACKOFF_MAX": "1ms", "HCPOPS_PENDING_ID_GRACE": "1ms", "HCPOPS_DISPATCH_GRACE": "1ms",
			"HCPOPS_NOTIFY_BACKOFF_BASE": "1ms", "HCPOPS_NOTIFY_BACKOFF_MAX": "1ms"}
	}})
	if _, err := r.Sim.FailCluster("myCluster", simulator.ClusterFailure{Code: "OCM3055", Message: "quota exceeded in eastus"}); err != nil {
		t.Fatal(err)
	}
	r.SubmitAt(time.Now())
	if resp, body := r.Post("/dispatchOperations", apptest.ReadFile(t, "app/testdata/dispatch-cluster-create.json")); resp.StatusCode != http.StatusOK {
		t.Fatalf("dispatch: %d %s", resp.StatusCode, body)
	}
	tick := apptest.ReadFile(t, "events/testdata/tick.json")
	for i := 1; r.Operation().Properties.Status != arm.ProvisioningStateFailed; i++ {
		if i > 100 {
			t.Fatalf("the create is %s after 100 ticks:\n%s", r.Operation().Properties.Status, r.Logs.String())
		}
		if resp, body := r.Post("/pollOperations", tick); resp.StatusCode != http.StatusOK {
			t.Fatalf("tick: %d %s", resp.StatusCode, body)
		}
		r.Logs.Named(t, "poll.tick", i)
		r.Sim.Advance(10 * time.Second)
	}
	return r.Logs.Records(t)
}

// TestSLOTemplate: two burn-rate rules, 14.4x over 1h and 5m and 6x over
// 6h and 30m, on main.bicep's 95% target; docs/functions.md shows the
// fast one word for word; main.bicep deploys the module with the target.
func TestSLOTemplate(t *testing.T) {
	slo := readDeploy(t, "slo.bicep")
	got := burnWindows(t, slo)
	want := []burnWindow{{"fast", "14.4", "1h", "5m", "PT1H", "PT5M"}, {"slow", "6", "6h", "30m", "PT6H", "PT15M"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("burn windows = %+v, want %+v", got, want)
	}
	alerts := sloAlerts(t)
	if len(alerts) != 2 || alerts[0].param(t, "slo_target") != "0.95" {
		t.Fatalf("slo rules = %+v", alerts)
	}
	var shown []string
	for _, b := range kustoBlocks(t, "../docs/functions.md") {
		if strings.Contains(b, "// slo alert: provisioning_burn.") {
			shown = append(shown, b)
		}
	}
	if len(shown) != 1 || shown[0] != alerts[0].query {
		t.Errorf("docs/functions.md shows %d provisioning_burn blocks; want the fast rule as deployed:\n%s", len(shown), alerts[0].query)
	}
	main := readDeploy(t, "main.bicep")
	if !strings.Contains(main, "module slo 'slo.bicep'") || !strings.Contains(main, "sloTarget: provisioningSloTarget") {
		t.Error("main.bicep does not deploy slo.bicep with provisioningSloTarget")
	}
	if !strings.Contains(slo, "${runbookUrl}#provisioning-slo-burning") {
		t.Error("the SLO rules' descriptions do not link their runbook")
	}
	runbooks := readDeploy(t, "../docs/runbooks.md")
	if !strings.Contains(runbooks, "\n## Provisioning SLO burning\n") {
		t.Error("docs/runbooks.md has no Provisioning SLO burning section")
	}
}

// TestSLOBurnFires evaluates both rules, at the template's defaults, over
// the records of real creates: one CS fails, one that succeeds (the clean
// run), and both together.
func TestSLOBurnFires(t *testing.T) {
	failed := failedCreateRun(t)
	clean := runs.Get(t).Clean.All
	both := append(append([]map[string]any{}, failed...), clean...)
	end := func(recs []map[string]any) time.Time { return apptest.Latest(recs).Add(time.Second) }
	q := shippedQuery(t, "provisioning_burn")
	for _, a := range sloAlerts(t) {
		target, _ := strconv.ParseFloat(a.param(t, "slo_target"), 64)
		burn, _ := strconv.ParseFloat(a.param(t, "burn_rate"), 64)
		long, err1 := time.ParseDuration(a.param(t, "long_window"))
		short, err2 := time.ParseDuration(a.param(t, "short_window"))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: windows %v %v", a.name, err1, err2)
		}
		check := func(what string, recs []map[string]any, now time.Time, want bool) {
			t.Helper()
			if fires, lb, sb := burnAlert(q, recs, now, target, burn, long, short); fires != want {
				t.Errorf("%s on %s: fires %v (burn %.1f over %s, %.1f over %s), want %v", a.name, what, fires, lb, long, sb, short, want)
			}
		}
		check("the failed create", failed, end(failed), true)
		check("the succeeded create", clean, end(clean), false)
		// Half of the creates failed: 10x the allowed rate, past the slow
		// rule's 6 and short of the fast rule's 14.4.
		check("one failed and one succeeded", both, end(both), a.name == "slo:slow")
		// Once the short window holds no failure, the rule stops, though
		// its long window still burns.
		check("the failed create, a short window later", failed, end(failed).Add(short+time.Minute), false)
	}
}
