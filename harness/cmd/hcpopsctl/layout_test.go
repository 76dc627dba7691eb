package main

import (
	"os"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/harness/testsupport"
)

// layoutEntry is one line of the README's layout: a directory, and
// whether it is in the harness tree (harness/ and what is under it).
type layoutEntry struct {
	dir     string
	harness bool
}

// readmeLayout reads the README's one layout table. An entry is a line
// whose first word is a directory (ending in /), indented two spaces per
// level below its parent; other lines continue the entry above.
func readmeLayout(t *testing.T) []layoutEntry {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no Layout section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	blocks := strings.Split(section, "```")
	if len(blocks) != 3 {
		t.Fatalf("README's Layout has %d fenced blocks, want the one table", (len(blocks)-1)/2)
	}
	var entries []layoutEntry
	var parents []string
	for _, line := range strings.Split(strings.Trim(blocks[1], "\n"), "\n") {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasSuffix(f[0], "/") || indent%2 != 0 || indent/2 > len(parents) {
			continue
		}
		parents = append(parents[:indent/2], strings.TrimSuffix(f[0], "/"))
		dir := strings.Join(parents, "/")
		entries = append(entries, layoutEntry{dir: dir, harness: parents[0] == "harness"})
	}
	return entries
}

// TestLayout holds the README's layout to the tree: every entry is a
// directory of the repository, every package of the module falls under
// one (the longest that holds it), and a package is outside harness/
// exactly when a binary make package ships links it (the Function App's
// hcpops, the operator's hcpopsctl): the product tree holds what ships
// and nothing else. A package of tests alone (deploy/'s, beside the
// template it holds) links into nothing and may sit beside what it tests.
func TestLayout(t *testing.T) {
	entries := readmeLayout(t)
	for _, e := range entries {
		if fi, err := os.Stat(e.dir); err != nil || !fi.IsDir() {
			t.Errorf("README's layout names %s/, which is not a directory here", e.dir)
		}
	}
	const module = "github.com/hcpops/hcpops"
	shipped := map[string]bool{}
	for _, p := range goList(t, "-deps", "./cmd/hcpops", "./cmd/hcpopsctl") {
		if rel, ok := strings.CutPrefix(p, module+"/"); ok {
			shipped[rel] = true
		}
	}
	testsOnly := map[string]bool{}
	for _, p := range goList(t, "-f", `{{if not .GoFiles}}{{.ImportPath}}{{end}}`, "./...") {
		testsOnly[p] = true
	}
	for _, p := range goList(t, "./...") {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		var best *layoutEntry
		for i, e := range entries {
			if (rel == e.dir || strings.HasPrefix(rel, e.dir+"/")) && (best == nil || len(e.dir) > len(best.dir)) {
				best = &entries[i]
			}
		}
		switch {
		case best == nil:
			t.Errorf("package %s is in no entry of README's layout", orRoot(rel))
		case !best.harness && !shipped[rel] && !testsOnly[p]:
			t.Errorf("%s is in the product tree (README's layout: %s/), but no shipped binary links it: move it under harness/", orRoot(rel), best.dir)
		case best.harness && shipped[rel]:
			t.Errorf("a shipped binary links %s, which is in the harness tree", orRoot(rel))
		}
	}
}

func orRoot(rel string) string {
	if rel == "" {
		return "the root package"
	}
	return rel
}

// goList is go list's import paths (or what a leading -f format says),
// for the Function App's platform.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	if len(args) == 0 || args[0] != "-f" {
		args = append([]string{"-f", "{{.ImportPath}}"}, args...)
	}
	cmd := testsupport.GoCommand(t, []string{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0"}, append([]string{"list"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}
