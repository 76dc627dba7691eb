package lifecycle

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTerminalWritesTable holds docs/arm.md's table of every terminal
// write to the tests it names: each row names at least one, and each
// named test exists in the module. A row whose test is renamed or removed
// fails here instead of pointing at nothing.
func TestTerminalWritesTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/arm.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "## Every terminal write and its evidence")
	if !ok {
		t.Fatal("docs/arm.md has no section 'Every terminal write and its evidence'")
	}
	section, _, _ := strings.Cut(after, "\n## ")
	defined := map[string]bool{}
	funcRE := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range funcRE.FindAllStringSubmatch(string(b), -1) {
			defined[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| writes") {
			continue
		}
		rows++
		cells := strings.Split(line, "|")
		names := regexp.MustCompile("`(Test\\w+)`").FindAllStringSubmatch(cells[len(cells)-2], -1)
		if len(names) == 0 {
			t.Errorf("row without a test: %s", line)
		}
		for _, n := range names {
			if !defined[n[1]] {
				t.Errorf("docs/arm.md names %s, which no test file defines", n[1])
			}
		}
	}
	if rows < 15 {
		t.Errorf("the table has %d rows; every terminal write should have one", rows)
	}
}
