package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// A run with a passing, a failing and a skipped test, a package that does
// not build and one without tests: each package gets its line, the failed
// test its output, and the closing line the counts.
func TestSummarise(t *testing.T) {
	s, out := summariseFile(t, "testdata/run.jsonl")
	for _, want := range []string{
		"    a_test.go:9: got 1, want 2\n--- FAIL: TestBad",
		"FAIL\texample.com/a\t0.010s\n",
		"ok  \texample.com/b\t0.020s\n",
		"c/c.go:3:1: syntax error\n",
		"FAIL\texample.com/c [build failed]\n",
		"?   \texample.com/d\t[no test files]\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "=== RUN   TestOK") {
		t.Errorf("a passing test's output was printed:\n%s", out.String())
	}
	line := s.line(4*time.Minute+12*time.Second, "")
	want := "failed tests:\n  example.com/a TestBad\nmake test: 2 passed, 1 failed, 1 skipped; 4 packages (2 failed, 1 without tests) in 4m12s"
	if line != want {
		t.Errorf("closing line\n%s\nwant\n%s", line, want)
	}
}

// A test binary that timed out (recorded from go test -json -timeout 2s
// over a test that waits on a lock forever): test2json gives the hung test
// no event, so its output, the timeout's stacks, is printed under the
// package's FAIL and it is counted failed.
func TestSummariseTimeout(t *testing.T) {
	s, out := summariseFile(t, "testdata/timeout.jsonl")
	for _, want := range []string{"panic: test timed out after 2s", "example.com/e.TestHangs", "FAIL\texample.com/e"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	line := s.line(3*time.Second, "")
	want := "failed tests:\n  example.com/e TestHangs (did not finish)\nmake test: 1 passed, 1 failed, 0 skipped; 1 packages (1 failed, 0 without tests) in 3s"
	if line != want {
		t.Errorf("closing line\n%s\nwant\n%s", line, want)
	}
}

// summariseFile is summarise over a recorded stream, with what it printed.
func summariseFile(t *testing.T, path string) (summary, *strings.Builder) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	s, err := summarise(f, &out)
	if err != nil {
		t.Fatal(err)
	}
	return s, &out
}
