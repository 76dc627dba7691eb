package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// benchmarkFigure matches what a measurement writes and a configuration
// never does: a time or allocation count per operation, a share of the
// tick's CPU, a speed-up, bytes an operation, a heap size. Limits and
// settings (a 2 MB item, up to 30% jitter, 10 s) do not match.
var benchmarkFigure = regexp.MustCompile(`` +
	`\d[\d.,]*\s*(?:ns/op|B/op|allocs/op|us/op|µs|ns|allocations?|allocs)\b` +
	`|\d[\d.]*\s*%\s+of\s+(?:[\w']+\s+){0,3}?(?:CPU|tick)\b` +
	`|tick\s+\d[\d.]*\s*%` +
	`|\d[\d.]*\s*(?:times|×)\s+(?:as fast|faster|slower|the cost)\b` +
	`|\d[\d.,]*\s*(?:bytes|B|kB|KB|MB)\b(?:\s+[\w']+){0,4}?\s+(?:an?|per)\s+(?:operation|document|record|op|tick)\b` +
	`|\bcosts?\s+(?:[\w']+\s+){0,3}?\d[\d.,]*\s*(?:bytes|B|kB|KB|MB|%)` +
	`|\d[\d.,]*\s*(?:kB|KB|MB)\s+of\s+(?:garbage|heap|map)\b` +
	`|heap\D{0,20}\d[\d.,-]*\s*MB\b`)

// TestShippedCommentsCarryNoBenchmarkFigures holds the style rule that
// figures go in docs/decisions/, not in comments, where they go stale:
// no comment of a shipped (non-test, outside harness/) Go file carries a
// benchmark or profile figure.
func TestShippedCommentsCarryNoBenchmarkFigures(t *testing.T) {
	root := "../.."
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel == strings.TrimSuffix(harnessTree, "/") || name == "testdata" || name == "node_modules" ||
				(rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, group := range f.Comments {
			// A figure may run over a line break: match the group's text
			// as one line and name the line the match starts on.
			var text strings.Builder
			var starts, lines []int
			for _, c := range group.List {
				first := fset.Position(c.Pos()).Line
				for i, l := range strings.Split(c.Text, "\n") {
					starts = append(starts, text.Len())
					lines = append(lines, first+i)
					text.WriteString(strings.TrimLeft(l, "/ \t*"))
					text.WriteByte(' ')
				}
			}
			for _, m := range benchmarkFigure.FindAllStringIndex(text.String(), -1) {
				i := sort.SearchInts(starts, m[0]+1) - 1
				t.Errorf("%s:%d: a comment carries a benchmark figure (%q); say why in words and move the figure to docs/decisions/", rel, lines[i], text.String()[m[0]:m[1]])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d shipped Go files; is %s the repository root?", files, root)
	}
}
