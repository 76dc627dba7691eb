package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// doc put parses an operation or resource document as the poll tick does
// and refuses one it cannot parse, naming the field and the value, with
// nothing written; -unchecked writes it anyway (to see how the tick copes).
func TestDocPutRefusesWhatTheTickCannotParse(t *testing.T) {
	env := envFor(t.TempDir())
	out, err := runCmd(t, env, "", "submit", "-create", "-resource", testCluster)
	if err != nil {
		t.Fatal(err)
	}
	statusPath := regexp.MustCompile(`statusURL (\S+)`).FindStringSubmatch(out)[1]
	get := func(t *testing.T, id string) map[string]any {
		t.Helper()
		out, err := runCmd(t, env, "", "doc", "get", id)
		if err != nil {
			t.Fatalf("doc get %s: %v", id, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	bend := func(id string, f func(props map[string]any)) func(t *testing.T) string {
		return func(t *testing.T) string {
			m := get(t, id)
			f(m["properties"].(map[string]any))
			b, _ := json.Marshal(m)
			return string(b)
		}
	}
	for _, tc := range []struct {
		name  string
		doc   func(t *testing.T) string
		wants []string
	}{
		{"an operation's startTime", bend(statusPath, func(p map[string]any) { p["startTime"] = "not-a-time" }), []string{"properties.startTime", `"not-a-time"`}},
		{"an operation's status", bend(statusPath, func(p map[string]any) { p["status"] = "Bogus" }), []string{"properties.status", `"Bogus"`}},
		{"an operation's request", bend(statusPath, func(p map[string]any) { p["request"] = 7 }), []string{"properties.request", "7"}},
		{"an operation's target in another partition", bend(statusPath, func(p map[string]any) {
			p["externalId"] = strings.Replace(testCluster, "1d3378d3-5a3f-4712-85a1-2485495dfc4b", "00000000-0000-0000-0000-000000000001", 1)
		}), []string{"properties.externalId", "00000000-0000-0000-0000-000000000001"}},
		{"a cluster's provisioning state", bend(testCluster, func(p map[string]any) {
			p["serviceProviderProperties"].(map[string]any)["provisioningState"] = 12
		}), []string{"provisioningState", "12"}},
		{"a resource type that is not a string", func(*testing.T) string {
			return `{"id":"x","partitionKey":"1d3378d3-5a3f-4712-85a1-2485495dfc4b","resourceType":5}`
		}, []string{"resourceType", "5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := tc.doc(t)
			before, _ := runCmd(t, env, "", "doc", "list", "-subscription", "1d3378d3-5a3f-4712-85a1-2485495dfc4b")
			out, err := runCmd(t, env, doc, "doc", "put", "-")
			if err == nil {
				t.Fatalf("doc put wrote a document the tick cannot parse: %s", out)
			}
			for _, want := range append(tc.wants, "cannot parse", "nothing was written") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q lacks %q", err, want)
				}
			}
			if after, _ := runCmd(t, env, "", "doc", "list", "-subscription", "1d3378d3-5a3f-4712-85a1-2485495dfc4b"); after != before {
				t.Errorf("a refused doc put changed the store:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	t.Run("unchecked", func(t *testing.T) {
		doc := bend(statusPath, func(p map[string]any) { p["startTime"] = "not-a-time" })(t)
		if out, err := runCmd(t, env, doc, "doc", "put", "-unchecked", "-"); err != nil || !strings.HasPrefix(out, "replaced ") {
			t.Fatalf("doc put -unchecked: %v %q", err, out)
		}
		if p := get(t, statusPath)["properties"].(map[string]any); p["startTime"] != "not-a-time" {
			t.Errorf("doc put -unchecked did not write it: startTime %v", p["startTime"])
		}
	})
}
