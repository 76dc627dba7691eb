package main

import (
	"os"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/internal/testsupport"
)

// layoutEntry is one line of the README's layout: a directory (or *.go,
// the root package) and whether it is in the table of what ships.
type layoutEntry struct {
	dir     string
	shipped bool
}

// readmeLayout reads the two tables of the README's Layout section: what
// the Function App's binary is built from, then what runs beside it. An
// entry's sub-lines (indented two spaces) name directories inside it;
// deeper indents continue the line above.
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
	if len(blocks) != 5 {
		t.Fatalf("README's Layout has %d fenced blocks, want 2 (what ships, what runs beside it)", (len(blocks)-1)/2)
	}
	var entries []layoutEntry
	for i, block := range []string{blocks[1], blocks[3]} {
		parent := ""
		for _, line := range strings.Split(strings.Trim(block, "\n"), "\n") {
			indent := len(line) - len(strings.TrimLeft(line, " "))
			f := strings.Fields(line)
			if len(f) == 0 || indent > 2 {
				continue
			}
			dir := strings.TrimSuffix(f[0], "/")
			if indent == 2 {
				dir = parent + "/" + dir
			} else {
				parent = dir
			}
			entries = append(entries, layoutEntry{dir: dir, shipped: i == 0})
		}
	}
	return entries
}

// TestLayout holds the README's layout to the tree: every entry is a
// directory of the repository, every package of the module falls under
// one (the longest that holds it), and a package is in the first table
// exactly when the Function App's binary links it.
func TestLayout(t *testing.T) {
	entries := readmeLayout(t)
	for _, e := range entries {
		if e.dir == "*.go" {
			continue
		}
		if fi, err := os.Stat(e.dir); err != nil || !fi.IsDir() {
			t.Errorf("README's layout names %s/, which is not a directory here", e.dir)
		}
	}
	const module = "github.com/hcpops/hcpops"
	shipped := map[string]bool{}
	for _, p := range goList(t, "-deps", "./cmd/hcpops") {
		if rel, ok := strings.CutPrefix(p, module+"/"); ok {
			shipped[rel] = true
		}
	}
	for _, p := range goList(t, "./...") {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		var best *layoutEntry
		for i, e := range entries {
			match := rel == e.dir || strings.HasPrefix(rel, e.dir+"/") || (e.dir == "*.go" && rel == "")
			if match && (best == nil || len(e.dir) > len(best.dir)) {
				best = &entries[i]
			}
		}
		switch {
		case best == nil:
			t.Errorf("package %s is in no entry of README's layout", orRoot(rel))
		case best.shipped && !shipped[rel]:
			t.Errorf("README's layout lists %s (for %s) with what ships, but the Function App's binary does not link it", best.dir, orRoot(rel))
		case !best.shipped && shipped[rel]:
			t.Errorf("the Function App's binary links %s, which README's layout lists (as %s) with what runs beside it", orRoot(rel), best.dir)
		}
	}
}

func orRoot(rel string) string {
	if rel == "" {
		return "the root package"
	}
	return rel
}

// goList is go list's import paths, for the Function App's platform.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := testsupport.GoCommand(t, []string{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0"}, append([]string{"list", "-f", "{{.ImportPath}}"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}
