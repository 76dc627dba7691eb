package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The README fits a screenful or two (130 lines at most), puts the
// toolchain a fresh shell needs beside its two commands, leads on-call to
// the runbooks, and writes no count of sample operations or tests that
// nothing checks.
func TestREADMEShape(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := strings.Count(readme, "\n"); n > 130 {
		t.Errorf("README.md is %d lines, want at most 130", n)
	}
	_, two, ok := strings.Cut(readme, "\n## Two commands\n")
	if !ok {
		t.Fatal("README.md has no Two commands section")
	}
	two, _, _ = strings.Cut(two, "\n## ")
	_, block, _ := strings.Cut(two, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	for _, want := range []string{"export GOTOOLCHAIN=go1.27.3", "make run", "make test"} {
		if !strings.Contains(block, want) {
			t.Errorf("the Two commands block lacks %q:\n%s", want, block)
		}
	}
	_, next, ok := strings.Cut(readme, "**Next:**")
	if next, _, _ = strings.Cut(next, "\n\n"); !ok || !strings.Contains(next, "(docs/runbooks.md)") {
		t.Errorf("README's Next line does not link docs/runbooks.md: %q", next)
	}
	counted := regexp.MustCompile(`(?i)\b(\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen) sample operations`)
	tests := regexp.MustCompile(`\b\d[\d,]* (passed|tests|packages)\b`)
	for _, f := range append([]string{"README.md"}, "docs/testing.md", "docs/local.md") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range []*regexp.Regexp{counted, tests} {
			if m := re.FindString(string(b)); m != "" {
				t.Errorf("%s writes a count nothing checks: %q", f, m)
			}
		}
	}
}
