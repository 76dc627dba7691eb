// Command testsummary turns `go test -json` into what `make test` prints:
// a line per package as it finishes (as go test prints them), the output
// of every failed test, and one closing line with the counts of tests and
// packages and the time taken.
//
// Why not gotestsum: its closing line counts tests but not packages, and
// on a fresh machine it is 14 more modules (golang.org/x/tools among them)
// to fetch and build before the first test runs: 37 s for
// `go install gotest.tools/gotestsum@v1.13.0` with empty module and build
// caches on the 2-core machine. This is the standard library only.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// pkgState is what one package has printed and done so far.
type pkgState struct {
	output map[string]*strings.Builder // by test; "" for the package itself
	failed bool
}

// summary counts what a run did.
type summary struct {
	passed, failed, skipped int
	pkgOK, pkgFailed        int
	pkgNoTests              int
	failedTests             []string
}

func main() {
	note := flag.String("note", "", "appended to the closing line (e.g. why a group of tests was skipped)")
	flag.Parse()
	start := time.Now()
	s, err := summarise(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	fmt.Fprintln(os.Stdout, s.line(time.Since(start), *note))
	if s.failed > 0 || s.pkgFailed > 0 || s.pkgOK == 0 {
		os.Exit(1)
	}
}

// summarise reads events from in and prints the per-package lines and
// failures to out as they come.
func summarise(in io.Reader, out io.Writer) (summary, error) {
	var s summary
	pkgs := map[string]*pkgState{}
	state := func(p string) *pkgState {
		if pkgs[p] == nil {
			pkgs[p] = &pkgState{output: map[string]*strings.Builder{}}
		}
		return pkgs[p]
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			fmt.Fprintln(out, string(line)) // go's own messages (a build error before any test)
			continue
		}
		p := state(e.Package)
		switch e.Action {
		case "build-output":
			fmt.Fprint(out, e.Output) // a compile error: shown as it comes
		case "output":
			b := p.output[e.Test]
			if b == nil {
				b = &strings.Builder{}
				p.output[e.Test] = b
			}
			b.WriteString(e.Output)
		case "pass", "fail", "skip":
			if e.Test != "" {
				countTest(&s, p, e, out)
				continue
			}
			finishPackage(&s, p, e, out)
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	sort.Strings(s.failedTests)
	return s, nil
}

func countTest(s *summary, p *pkgState, e event, out io.Writer) {
	switch e.Action {
	case "pass":
		s.passed++
	case "skip":
		s.skipped++
	case "fail":
		s.failed++
		p.failed = true
		s.failedTests = append(s.failedTests, e.Package+" "+e.Test)
		// A subtest's failure is printed under its parent's output too;
		// print each failed test's own lines as soon as it fails.
		if b := p.output[e.Test]; b != nil {
			fmt.Fprint(out, b.String())
		}
	}
	delete(p.output, e.Test)
}

func finishPackage(s *summary, p *pkgState, e event, out io.Writer) {
	own := ""
	if b := p.output[""]; b != nil {
		own = b.String()
	}
	switch {
	case e.Action == "fail" || p.failed:
		s.pkgFailed++
		// A test still running when its binary died (a timeout's panic, a
		// SIGQUIT) gets no event of its own: its lines hold the stacks
		// that say where it hung, so they are printed and it counts failed.
		var unfinished []string
		for name := range p.output {
			if name != "" {
				unfinished = append(unfinished, name)
			}
		}
		sort.Strings(unfinished)
		for _, name := range unfinished {
			fmt.Fprint(out, p.output[name].String())
			s.failed++
			s.failedTests = append(s.failedTests, e.Package+" "+name+" (did not finish)")
		}
		// The package's own lines: a build error, a panic, a timeout, FAIL.
		fmt.Fprint(out, own)
		if !strings.Contains(own, "FAIL\t"+e.Package) {
			fmt.Fprintf(out, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
		}
	default:
		s.pkgOK++
		if e.Action == "skip" {
			s.pkgNoTests++
		}
		last := strings.TrimSpace(own)
		if i := strings.LastIndex(last, "\n"); i >= 0 {
			last = last[i+1:]
		}
		if strings.HasPrefix(last, "ok") || strings.HasPrefix(last, "?") {
			fmt.Fprintln(out, last)
		} else {
			fmt.Fprintf(out, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
		}
	}
}

// line is the closing line.
func (s summary) line(took time.Duration, note string) string {
	l := fmt.Sprintf("make test: %d passed, %d failed, %d skipped; %d packages (%d failed, %d without tests) in %s",
		s.passed, s.failed, s.skipped, s.pkgOK+s.pkgFailed, s.pkgFailed, s.pkgNoTests, took.Round(time.Second))
	if len(s.failedTests) > 0 {
		l = "failed tests:\n  " + strings.Join(s.failedTests, "\n  ") + "\n" + l
	}
	if note != "" {
		l += "; " + note
	}
	return l
}
