package devhost

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A make run restart does not submit the samples again, burying what a
// person follows: once a run in the data dir submitted them, the next
// runs skip them and say why, unless -samples (or -exit-when-done) asks
// for them; -reset forgets that they ran.
func TestSamplesRunOncePerDataDir(t *testing.T) {
	dir := t.TempDir()
	parse := func(args ...string) options {
		t.Helper()
		o, err := parseOptions(append(args, "-data-dir", dir), func(string) (string, bool) { return "", false }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	if run, note := sampleDecision(parse()); !run || note != "" {
		t.Fatalf("a fresh data dir: run %v %q, want the samples", run, note)
	}
	if err := os.WriteFile(filepath.Join(dir, samplesFile), []byte("2026-03-14T10:42:00Z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run, note := sampleDecision(parse())
	if run || !strings.Contains(note, "ran in "+dir+" on an earlier run (2026-03-14T10:42:00Z)") || !strings.Contains(note, "-samples runs them again") {
		t.Errorf("a restart: run %v %q, want them skipped, saying so", run, note)
	}
	for _, args := range [][]string{{"-samples"}, {"-samples=true"}, {"-exit-when-done"}} {
		if run, _ := sampleDecision(parse(args...)); !run {
			t.Errorf("%v after an earlier run: skipped, want them run", args)
		}
	}
	if run, note := sampleDecision(parse("-samples=false")); run || note != "" {
		t.Errorf("-samples=false: run %v %q", run, note)
	}
	if _, err := prepareDataDir(dir, true, true); err != nil {
		t.Fatal(err)
	}
	if run, _ := sampleDecision(parse()); !run {
		t.Error("after -reset: skipped, want the samples")
	}
}
