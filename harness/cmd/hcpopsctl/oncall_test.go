package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// On-call starts at docs/runbooks.md: a table at its top maps every alert
// rule the templates deploy, by its name, to the section its description
// links, and the README, operating.md and failures.md link it.
func TestAlertToRunbookTable(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	runbooks := read("docs/runbooks.md")
	top, _, ok := strings.Cut(runbooks, "\n## ")
	if !ok {
		t.Fatal("docs/runbooks.md has no sections")
	}
	var rows []string
	for _, l := range strings.Split(top, "\n") {
		if strings.HasPrefix(l, "| `") {
			rows = append(rows, l)
		}
	}
	// A rule: its name (prefix hcpops, each other ${...} any one word) and
	// the section its description links.
	ruleName := regexp.MustCompile(`(?m)^\s*name: '\$\{prefix\}-(.*)'$`)
	ruleLink := regexp.MustCompile(`description: '.*Runbook: \$\{runbookUrl\}#([a-z0-9-]+)'`)
	found := 0
	for _, f := range []string{"deploy/monitoring.bicep", "deploy/slo.bicep"} {
		for _, b := range bicepBlocks(read(f)) {
			n, l := ruleName.FindStringSubmatch(b), ruleLink.FindStringSubmatch(b)
			if !strings.Contains(b, "'Microsoft.Insights/scheduledQueryRules@") || n == nil || l == nil {
				continue // TestTemplateAlerting holds every rule to its link
			}
			m := []string{"", n[1], l[1]}
			found++
			parts := regexp.MustCompile(`\$\{[^}]*\}`).Split(m[1], -1)
			for i := range parts {
				parts[i] = regexp.QuoteMeta(parts[i])
			}
			name := regexp.MustCompile("`hcpops-" + strings.Join(parts, `<[a-z]+>(-<[a-z]+>)?`) + "`")
			var row string
			for _, r := range rows {
				if name.MatchString(r) {
					row = r
				}
			}
			switch {
			case row == "":
				t.Errorf("%s: rule hcpops-%s is in no row of the table at the top of docs/runbooks.md", f, m[1])
			case !strings.Contains(row, "](#"+m[2]+")"):
				t.Errorf("%s: rule hcpops-%s links #%s, but its table row does not: %s", f, m[1], m[2], row)
			}
		}
	}
	if found < 9 {
		t.Errorf("found %d alert rules in deploy/, want at least 9: the pattern no longer reads them", found)
	}
	for _, f := range []string{"README.md", "docs/operating.md", "docs/failures.md"} {
		if !regexp.MustCompile(`\]\((docs/)?runbooks\.md[)#]`).MatchString(read(f)) {
			t.Errorf("%s does not link docs/runbooks.md", f)
		}
	}
	// failures.md says, per failure, what you see and what to do.
	failures := read("docs/failures.md")
	sections := strings.Split(failures, "\n## ")[1:]
	for _, s := range sections {
		title, _, _ := strings.Cut(s, "\n")
		if !strings.Contains(s, "**What you see.**") || !strings.Contains(s, "**What to do.**") {
			t.Errorf("docs/failures.md: %q does not say what you see and what to do", title)
		}
	}
	if len(sections) < 5 {
		t.Errorf("docs/failures.md has %d sections", len(sections))
	}
}
