package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/npm"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// kqlQuery is one KQL text for tools/kql-check.
type kqlQuery struct {
	Name  string `json:"name"`
	Query string `json:"query"`
}

type kqlDiagnostic struct {
	Severity string `json:"severity"`
	Line     int    `json:"line"`
	Text     string `json:"text"`
	Message  string `json:"message"`
}

// kqlCheck runs Microsoft's Kusto language service (tools/kql-check, npm
// ci'd on first use) over qs and returns each query's diagnostics. Like the
// Cosmos DB tests it needs node and npm, and the same opt-out skips it.
func kqlCheck(t *testing.T, qs []kqlQuery) map[string][]kqlDiagnostic {
	t.Helper()
	testsupport.RealStack(t, "node and Microsoft's Kusto language service")
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv(cosmostest.EnvSkip) == "1" {
				t.Skipf("\n*** SKIPPING KQL CHECK (%s=1): %s is not installed ***", cosmostest.EnvSkip, tool)
			}
			t.Fatalf("%s is not installed (%v): the KQL check needs node >= 20 and npm; install them, or set %s=1 to skip it",
				tool, err, cosmostest.EnvSkip)
		}
	}
	dir, err := filepath.Abs(filepath.Join("..", "tools", "kql-check"))
	if err != nil {
		t.Fatal(err)
	}
	// npm ci'd on first use, under a lock: several test binaries may start at once.
	if err := npm.CI(context.Background(), dir, "node_modules/@kusto/language-service-next/package.json", "kql-check"); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(qs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "kql-check.js")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kql-check: %v\n%s", err, stderr.String())
	}
	var res []struct {
		Name        string          `json:"name"`
		Diagnostics []kqlDiagnostic `json:"diagnostics"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("kql-check answered %q: %v", out, err)
	}
	got := map[string][]kqlDiagnostic{}
	for _, r := range res {
		got[r.Name] = r.Diagnostics
	}
	if len(got) != len(qs) {
		t.Fatalf("kql-check answered for %d queries, asked %d (names must be unique)", len(got), len(qs))
	}
	return got
}

// kustoBlocks are the ```kusto blocks of a markdown file.
func kustoBlocks(t *testing.T, path string) []string {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```kusto\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		out = append(out, m[1])
	}
	return out
}

// everyQuery is every KQL text the project ships: the queries and alert
// blocks of docs/functions.md, the runbooks' and operating.md's queries, the template's alert
// rules (monitoring.bicep's and slo.bicep's) as deployed and the workbook's panels. A text that reads the
// hcpops records without defining them gets the prelude in front, as the
// docs tell the reader to paste it.
func everyQuery(t *testing.T) []kqlQuery {
	t.Helper()
	docs := kustoBlocks(t, "../docs/functions.md")
	prelude := docs[0]
	if !strings.HasPrefix(prelude, "let hcpops = traces") {
		t.Fatalf("docs/functions.md's first kusto block is not the prelude:\n%s", prelude)
	}
	var qs []kqlQuery
	add := func(name, q string) {
		if !strings.Contains(q, "let hcpops = traces") && !strings.HasPrefix(q, "traces") {
			q = prelude + q
		}
		qs = append(qs, kqlQuery{Name: name, Query: q})
	}
	for i, b := range docs[1:] {
		add(fmt.Sprintf("functions.md block %d", i+2), b)
	}
	for i, b := range kustoBlocks(t, "../docs/runbooks.md") {
		add(fmt.Sprintf("runbooks.md block %d", i+1), b)
	}
	for i, b := range kustoBlocks(t, "../docs/operating.md") {
		add(fmt.Sprintf("operating.md block %d", i+1), b)
	}
	for _, a := range templateAlerts(t) {
		add("template "+a.name, a.query)
	}
	for _, a := range sloAlerts(t) {
		add("template "+a.name, a.query)
	}
	for _, p := range workbookPanels(t) {
		add("workbook "+p.name, p.query)
	}
	return qs
}

// TestKQLAnalyzes: every query parses and every name and type in it
// resolves against Application Insights' traces table. A query written
// against the records alone cannot show this: the first run in the
// portal would.
func TestKQLAnalyzes(t *testing.T) {
	qs := everyQuery(t)
	// The checker must see what it is for: the prelude as first written
	// (r.time: "time" is a keyword) and an unknown column.
	broken := []kqlQuery{
		{Name: "control: keyword", Query: "traces | extend r = parse_json(message) | extend at = todatetime(r.time)"},
		{Name: "control: unknown column", Query: "traces | where no_such_column == 1"},
	}
	got := kqlCheck(t, append(qs, broken...))
	for _, b := range broken {
		if len(got[b.Name]) == 0 {
			t.Errorf("kql-check found nothing wrong with %q: it is not checking", b.Query)
		}
	}
	for _, q := range qs {
		for _, d := range got[q.Name] {
			lines := strings.Split(q.Query, "\n")
			line := ""
			if d.Line >= 1 && d.Line <= len(lines) {
				line = lines[d.Line-1]
			}
			t.Errorf("%s, line %d (%q): %s: %s\n  %s", q.Name, d.Line, d.Text, d.Severity, d.Message, line)
		}
	}
	if len(qs) < 30 {
		t.Errorf("only %d queries checked; the docs, runbooks, template or workbook lost some", len(qs))
	}
}
