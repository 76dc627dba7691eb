package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// bicepBlocks splits a template into its top-level resource and module
// declarations: symbolic name -> text up to the next declaration.
func bicepBlocks(bicep string) map[string]string {
	out := map[string]string{}
	decl := regexp.MustCompile(`(?m)^(?:resource|module) (\w+) '([^']+)'`)
	locs := decl.FindAllStringSubmatchIndex(bicep, -1)
	for i, l := range locs {
		end := len(bicep)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		out[bicep[l[2]:l[3]]] = bicep[l[0]:end]
	}
	return out
}

// githubAnchor is the id GitHub gives a markdown heading.
func githubAnchor(heading string) string {
	s := strings.ToLower(strings.TrimSpace(heading))
	s = regexp.MustCompile(`[^a-z0-9 _-]`).ReplaceAllString(s, "")
	return strings.ReplaceAll(s, " ", "-")
}

// TestTemplateAlerting holds what an SRE needs of the alerting part of the
// template and a Bicep compiler (not reachable here) would not check:
// every rule has a severity, an evaluation frequency, a window, a threshold
// parameter, its action group and a description linking its runbook
// section; one runbook section per rule and back; the per-resource rules
// carry the resource id as a dimension; main.bicep hands the module every
// parameter it declares; the workbook is deployed.
func TestTemplateAlerting(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	main, mon, runbooks := read("deploy/main.bicep"), read("deploy/monitoring.bicep"), read("docs/runbooks.md")

	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^## (.+)$`).FindAllStringSubmatch(runbooks, -1) {
		anchors[githubAnchor(m[1])] = true
	}
	linked := map[string]bool{}
	blocks := bicepBlocks(mon)
	rules := 0
	for name, b := range blocks {
		if !strings.Contains(b, "'Microsoft.Insights/scheduledQueryRules@") {
			continue
		}
		rules++
		for _, want := range []string{"kind: 'LogAlert'", "scopes: alertScopes", "actions: alertActions", "enabled: true",
			"autoMitigate: true", "timeAggregation: 'Count'", "operator: 'GreaterThan'"} {
			if !strings.Contains(b, want) {
				t.Errorf("rule %s lacks %q", name, want)
			}
		}
		for _, re := range []string{`severity: [0-4]\n`, `evaluationFrequency: 'PT\d+[MH]'`, `windowSize: 'PT\d+[MH]'`,
			`threshold: (0|[a-z]\w*)\n`, `query: .*loadTextContent\('alerts/\w+\.kql'\)`} {
			if !regexp.MustCompile(re).MatchString(b) {
				t.Errorf("rule %s has no %s", name, re)
			}
		}
		m := regexp.MustCompile(`description: '.*Runbook: \$\{runbookUrl\}#([a-z0-9-]+)'`).FindStringSubmatch(b)
		switch {
		case m == nil:
			t.Errorf("rule %s's description does not link its runbook section", name)
		case !anchors[m[1]]:
			t.Errorf("rule %s links #%s, which docs/runbooks.md has no section for (has %v)", name, m[1], anchors)
		default:
			linked[m[1]] = true
		}
		perResource := name == "stuckAlerts" || name == "notificationsAlert"
		if hasID := strings.Contains(b, "name: 'resource_id'"); hasID != perResource {
			t.Errorf("rule %s: resource_id dimension %v, want %v (one alert per resource where the alert is about one)", name, hasID, perResource)
		}
	}
	if rules != 8 {
		t.Errorf("%d scheduledQueryRules resources, want 8 (stuck per kind and request, tick, change feed, notifications, CS errors, CS latency, restarts, CS 404 wave)", rules)
	}
	// The provisioning SLO's burn-rate rules (slo.bicep, deploy/slo_test.go)
	// link theirs.
	for _, m := range regexp.MustCompile(`Runbook: \$\{runbookUrl\}#([a-z0-9-]+)'`).FindAllStringSubmatch(read("deploy/slo.bicep"), -1) {
		if !anchors[m[1]] {
			t.Errorf("slo.bicep links #%s, which docs/runbooks.md has no section for", m[1])
		}
		linked[m[1]] = true
	}
	for a := range anchors {
		if !linked[a] {
			t.Errorf("docs/runbooks.md section #%s is linked by no alert rule", a)
		}
	}
	// Every threshold the rules use is a parameter of main.bicep with a
	// default, handed to the module.
	var declared []string
	for _, m := range regexp.MustCompile(`(?m)^param (\w+) `).FindAllStringSubmatch(mon, -1) {
		declared = append(declared, m[1])
	}
	module := bicepBlocks(main)["monitoring"]
	for _, p := range declared {
		if p == "prefix" || p == "location" || p == "insightsId" {
			continue
		}
		if !strings.Contains(module, "    "+p+": "+p+"\n") {
			t.Errorf("main.bicep's monitoring module does not pass %s", p)
		}
		if !regexp.MustCompile(`(?m)^param ` + p + ` \w+ = `).MatchString(main) {
			t.Errorf("main.bicep has no parameter %s with a default", p)
		}
		if !strings.Contains(mon, "${"+p+"}") && !strings.Contains(mon, ": "+p+"\n") && !strings.Contains(mon, "("+p+")") &&
			!strings.Contains(mon, "items("+p+")") && !strings.Contains(mon, "empty("+p+")") {
			t.Errorf("monitoring.bicep declares %s and never uses it", p)
		}
	}
	for _, want := range []string{"module monitoring 'monitoring.bicep'", "insightsId: insights.id"} {
		if !strings.Contains(main, want) {
			t.Errorf("deploy/main.bicep lacks %q", want)
		}
	}
	ag := blocks["actionGroup"]
	for _, want := range []string{"'Microsoft.Insights/actionGroups@", "if (!empty(alertReceiver))", "emailAddress: alertReceiver",
		"serviceUri: alertReceiver", "useCommonAlertSchema: true", "startsWith(alertReceiver, 'https://')"} {
		if !strings.Contains(ag, want) {
			t.Errorf("the action group lacks %q", want)
		}
	}
	if wb := blocks["workbook"]; !strings.Contains(wb, "'Microsoft.Insights/workbooks@") || !strings.Contains(wb, "loadTextContent('workbook.json')") {
		t.Errorf("monitoring.bicep deploys no workbook from workbook.json:\n%s", wb)
	}
	if !slices.Contains(declared, "runbookUrl") {
		t.Error("monitoring.bicep has no runbookUrl parameter")
	}
}
