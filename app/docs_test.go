package app_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/harness/apptest"
)

// docsQueriesMatch reads the KQL blocks of docs/functions.md: each named
// query has a Go evaluation above, and every message name and r.<key> it
// uses exists in the records the code wrote.
func docsQueriesMatch(t *testing.T, recs []map[string]any) {
	doc, err := os.ReadFile("../docs/functions.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```kusto\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	var named []string
	keys := map[string]map[string]bool{} // msg -> keys seen
	all := map[string]bool{}
	for _, r := range recs {
		m := apptest.Str(r, "msg")
		if keys[m] == nil {
			keys[m] = map[string]bool{}
		}
		for k := range r {
			keys[m][k] = true
			all[k] = true
		}
	}
	prelude := blocks[0][1]
	for _, b := range blocks {
		// The prelude's own keys are read from every record.
		q := strings.Replace(b[1], prelude, "", 1)
		name := ""
		if m := regexp.MustCompile(`^// query: (\w+)`).FindStringSubmatch(q); m != nil {
			name = m[1]
			named = append(named, name)
		}
		var msgs []string
		for _, m := range regexp.MustCompile(`"([a-z]+\.[a-z_]+)"`).FindAllStringSubmatch(q, -1) {
			msgs = append(msgs, m[1])
		}
		for _, m := range msgs {
			if keys[m] == nil && writtenElsewhere[m] == "" {
				t.Errorf("query %q names message %q, which the code never wrote", name, m)
			}
		}
		for _, m := range regexp.MustCompile(`\br\.([a-z_0-9]+)`).FindAllStringSubmatch(q, -1) {
			k := m[1]
			found := all[k] && len(msgs) == 0
			for _, msg := range msgs {
				found = found || keys[msg][k]
			}
			// Keys read from Warn/Error lines about an operation (stuck's join).
			found = found || (k == "level" || k == "error") && all[k]
			for _, msg := range msgs {
				found = found || writtenElsewhere[msg] != ""
			}
			if !found {
				t.Errorf("query %q reads r.%s, which no %v record carries", name, k, msgs)
			}
		}
	}
	want := []string{"cs_anomalies", "cs_errors", "given_up", "notification_failures", "problems", "stuck", "ticks", "transitions", "view_rebuilds"}
	slices.Sort(named)
	if !slices.Equal(named, want) {
		t.Errorf("docs/functions.md has queries %v; the Go evaluations here are %v", named, want)
	}
}

// docsRecordsTable: the records table of docs/functions.md names every
// attribute each documented record carries (beyond the ones every record
// has), and no record the code does not write.
func docsRecordsTable(t *testing.T, shapes map[string]map[string]string) {
	doc, err := os.ReadFile("../docs/functions.md")
	if err != nil {
		t.Fatal(err)
	}
	common := map[string]bool{"time": true, "level": true, "msg": true, "invocation_id": true, "function": true}
	text := string(doc)
	i := strings.Index(text, "\n### Records\n")
	if i < 0 {
		t.Fatal("docs/functions.md has no ### Records section")
	}
	text = text[i:]
	text, _, _ = strings.Cut(text, "\n## ") // the section runs to the next, or to the end
	rows := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z]+\\.[a-z_]+)` \\|(.*)$").FindAllStringSubmatch(text, -1) {
		rows[m[1]] = m[2]
	}
	for name, shape := range shapes {
		row, ok := rows[name]
		if !ok {
			t.Errorf("docs/functions.md's records table has no row for %s", name)
			continue
		}
		for key := range shape {
			key = key[strings.LastIndex(key, ".")+1:] // groups[].count: "count"
			if !common[key] && !strings.Contains(row, "`"+key+"`") {
				t.Errorf("docs/functions.md's row for %s does not name its attribute %s", name, key)
			}
		}
	}
	for name := range rows {
		if shapes[name] == nil && writtenElsewhere[name] == "" {
			t.Errorf("docs/functions.md documents record %s, which no run wrote", name)
		}
	}
}
