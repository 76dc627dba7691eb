package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/store/cosmostest"

	"github.com/hcpops/hcpops/harness/devhost"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// envAsMain makes the test binary act as hcpops: the docs run the same
// code a user's binary does, without a second build.
const envAsMain = "HCPOPS_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envAsMain) == "1" {
		main()
		os.Exit(0)
	}
	// These tests read and run the repository as a whole (its README, docs,
	// deploy/ and both binaries), so they run from its root.
	if err := os.Chdir("../../.."); err != nil {
		fmt.Fprintln(os.Stderr, "hcpopsctl tests: to the repository root:", err)
		os.Exit(2)
	}
	code := cosmostest.Main(m)
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// Marks before a shell block of the docs: run by a test beside a running
// hcpopsctl dev, run alone, or not run (and why).
const (
	markBesideDev = "<!-- run: beside hcpopsctl dev"
	markAlone     = "<!-- run: alone"
	markNotRun    = "<!-- not run:"
)

// shellBlock is one ```sh block of a markdown file, with its mark.
type shellBlock struct {
	file, mark, script string
	line               int
}

// docFiles are the markdown files of the repository.
func docFiles(t *testing.T) []string {
	t.Helper()
	testsupport.RealStack(t, "git ls-files")
	out, err := exec.Command("git", "ls-files", "*.md").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Fields(string(out))
	// Files added in this change but not yet committed count too.
	extra, _ := filepath.Glob("docs/*.md")
	more, _ := filepath.Glob("docs/*/*.md")
	for _, f := range append(extra, more...) {
		if !strings.Contains(" "+strings.Join(files, " ")+" ", " "+f+" ") {
			files = append(files, f)
		}
	}
	return files
}

// shellBlocks reads every ```sh block of README.md and docs/, with the
// mark on the line before it.
func shellBlocks(t *testing.T) []shellBlock {
	t.Helper()
	var blocks []shellBlock
	for _, f := range docFiles(t) {
		if f != "README.md" && !strings.HasPrefix(f, "docs/") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "```sh" {
				continue
			}
			blk := shellBlock{file: f, line: i + 1}
			if i > 0 {
				blk.mark = strings.TrimSpace(lines[i-1])
			}
			var body []string
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
				body = append(body, lines[i])
			}
			blk.script = strings.Join(body, "\n") + "\n"
			blocks = append(blocks, blk)
		}
	}
	return blocks
}

// A go command the docs give to type runs as written on a machine whose
// own Go is older than go.mod's: it names the toolchain the Makefile does.
func TestDocsGoCommandsNameTheToolchain(t *testing.T) {
	command := regexp.MustCompile(`^(\w+=\S* )*go (test|run|build|install|vet|generate)\b`)
	check := func(where, cmd string) {
		if command.MatchString(cmd) && !strings.Contains(cmd, "GOTOOLCHAIN=go1.27.3") {
			t.Errorf("%s: %q runs go without GOTOOLCHAIN=go1.27.3", where, cmd)
		}
	}
	for _, b := range shellBlocks(t) {
		for i, l := range strings.Split(b.script, "\n") {
			check(fmt.Sprintf("%s:%d", b.file, b.line+1+i), strings.TrimSpace(l))
		}
	}
	for _, f := range docFiles(t) {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(body), "\n") {
			for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(l, -1) {
				check(fmt.Sprintf("%s:%d", f, i+1), m[1])
			}
		}
	}
}

// The README's first screen says what a new user needs before anything
// else: the port, how to stop, where state lives, that two samples fail
// on purpose, and what the first make test spends on golangci-lint; the
// port and the data dir are what dev's flags default to.
func TestREADMEFirstScreen(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	first := strings.Join(lines[:min(45, len(lines))], "\n")
	for _, want := range []string{"http://127.0.0.1:7071", "Ctrl-C", "`.data/`", "two fail on purpose",
		"create-failing-cluster", "create-failing-nodepool", "builds golangci-lint (about 5 minutes)"} {
		if !strings.Contains(first, want) {
			t.Errorf("the README's first 45 lines do not say %q", want)
		}
	}
	w := newWorkspace(t)
	r := w.hcpops(t, "", "dev", "-h")
	for _, want := range []string{`(default "127.0.0.1:7071")`, `(default ".data")`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dev -h lacks %s, which the README states:\n%s", want, r.stdout)
		}
	}
	if n := strings.Count(r.stdout, ".data"); n != 1 {
		t.Errorf("dev -h names the data dir default %d times, want once:\n%s", n, r.stdout)
	}
}

// Every shell block says whether it is run, and why not when it is not.
func TestEveryShellBlockIsMarked(t *testing.T) {
	n := 0
	for _, b := range shellBlocks(t) {
		switch {
		case strings.HasPrefix(b.mark, markBesideDev), strings.HasPrefix(b.mark, markAlone):
			n++
		case strings.HasPrefix(b.mark, markNotRun) && len(strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(b.mark, markNotRun), "-->"))) > 10:
		default:
			t.Errorf("%s:%d: a ```sh block without %q, %q or %q (with the reason) on the line before it", b.file, b.line, markBesideDev+" -->", markAlone+" -->", markNotRun+" why -->")
		}
	}
	if n < 4 {
		t.Errorf("only %d blocks are run", n)
	}
}

// runScript runs a docs block with bash in dir, in its own process group
// (servers it starts in the background end with it), and returns what it
// printed.
func runScript(t *testing.T, w *workspace, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	sh.Dir, sh.Env = w.dir, w.env
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	sh.Cancel = func() error { return syscall.Kill(-sh.Process.Pid, syscall.SIGKILL) }
	// A file, not a pipe: servers the block left in the background hold
	// their output open, and the block has ended when bash has.
	outFile, err := os.Create(filepath.Join(t.TempDir(), "output"))
	if err != nil {
		t.Fatal(err)
	}
	defer outFile.Close()
	sh.Stdout, sh.Stderr = outFile, outFile
	err = sh.Run()
	if sh.Process != nil {
		_ = syscall.Kill(-sh.Process.Pid, syscall.SIGTERM) // what the script left running, if anything
	}
	out, _ := os.ReadFile(outFile.Name())
	t.Logf("output:\n%s", out)
	if err != nil {
		t.Fatalf("the block failed as written: %v", err)
	}
	return string(out)
}

// freeAddr is a loopback port no one listens on, for a block's fixed one.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestDocsRun runs every block marked to be run, as written, but for its
// fixed ports (a shared machine may have them taken): beside a fresh
// hcpopsctl dev, or alone in a workspace that has the repository's
// functions/ (the payloads' testdata) and bin/hcpopsctl.
func TestDocsRun(t *testing.T) {
	for _, b := range shellBlocks(t) {
		if b.file == "README.md" && strings.HasPrefix(b.mark, markBesideDev) {
			continue // TestREADMEWalkthrough runs it, and checks more
		}
		switch {
		case strings.HasPrefix(b.mark, markBesideDev):
			t.Run(b.file+":"+strconv.Itoa(b.line), func(t *testing.T) {
				w := newWorkspace(t)
				d := w.startDev(t)
				script := strings.NewReplacer("127.0.0.1:7071", d.front, "http://127.0.0.1:7072", d.sim).Replace(b.script)
				out := runScript(t, w, script)
				checkBlock(t, b, out, d)
			})
		case strings.HasPrefix(b.mark, markAlone):
			t.Run(b.file+":"+strconv.Itoa(b.line), func(t *testing.T) {
				w := newWorkspace(t)
				// the payloads the blocks post
				if err := os.Symlink(filepath.Join(w.repo, "events"), filepath.Join(w.dir, "events")); err != nil {
					t.Fatal(err)
				}
				handler, sim := freeAddr(t), freeAddr(t)
				script := strings.NewReplacer("localhost:8080", handler, "FUNCTIONS_CUSTOMHANDLER_PORT=8080",
					"FUNCTIONS_CUSTOMHANDLER_PORT="+handler[strings.LastIndex(handler, ":")+1:], "127.0.0.1:8000", sim).Replace(b.script)
				before := dirNames(t, w.dir)
				out := runScript(t, w, script)
				checkBlock(t, b, out, nil)
				// Run in a checkout, a block leaves nothing behind there.
				for _, name := range dirNames(t, w.dir) {
					if !slices.Contains(before, name) {
						t.Errorf("%s:%d left %s in the directory it ran in", b.file, b.line, name)
					}
				}
			})
		}
	}
}

// dirNames are the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// checkBlock checks what a block printed says what its prose says.
func checkBlock(t *testing.T, b shellBlock, out string, d *devProcess) {
	t.Helper()
	var want []string
	switch {
	case strings.Contains(b.script, "/dispatchOperations"):
		want = []string{`"status":"ok"`, "created  6e7906b8-195a-5089-af7d-ff5988327ebe", `{"Outputs":{},"Logs":[],"ReturnValue":null}`, `"msg":"dispatch.batch","function":"dispatchOperations","documents":3,"operations":2,"dispatched":1`,
			`"name": "e2f8f733-dd90-49b0-8b2b-f390b42aa339"`}
		if strings.Contains(out, `"status": "Failed"`) {
			t.Errorf("the fresh cluster create failed:\n%s", out)
		}
	case strings.Contains(b.script, "X-MS-CLIENT-PRINCIPAL"):
		want = []string{`"code": "ResourceNotFound"`, `"code":"AuthenticationFailed"`}
	case strings.Contains(b.script, "/_sim/faults/next"):
		want = []string{`"routes":[`, `"applied":false`, `"count":3,"status":503`, `"by_pattern":{`}
		waitFor(t, "the failed and the retried cluster to end in dev's terminal", func() bool {
			o := devhost.Unwrap(d.out.String())
			return regexp.MustCompile(`cluster doomed .*-> Failed  OCM3055: .*quota exceeded in eastus`).MatchString(o) &&
				regexp.MustCompile(`cluster retried .*-> Succeeded`).MatchString(o) &&
				// the retrying line the prose promises, under an operation
				regexp.MustCompile(`(?m)^\S+ \(submitted\) [0-9a-f-]{36}( Create cluster \w+)? +retrying: Request for method \w+ and URL .* failed with code 503, will try again$`).MatchString(o)
		})
	default:
		t.Fatalf("%s:%d: a run block the test does not know what to expect of; add its checks here", b.file, b.line)
	}
	for _, s := range want {
		if !strings.Contains(out, s) {
			t.Errorf("%s:%d printed no %q", b.file, b.line, s)
		}
	}
}

// TestREADMEWalkthrough starts `hcpopsctl dev` with short timings in a fresh
// directory and runs the README's "try it" block there as written, the
// one change being the front door's port. It checks what each command
// printed and that the running dev showed both operations reaching
// Succeeded.
func TestREADMEWalkthrough(t *testing.T) {
	var script string
	for _, b := range shellBlocks(t) {
		if b.file == "README.md" && strings.HasPrefix(b.mark, markBesideDev) {
			script = b.script
			break
		}
	}
	if script == "" {
		t.Fatalf("README.md has no %q block", markBesideDev)
	}
	w := newWorkspace(t)
	d := w.startDev(t)
	text := runScript(t, w, strings.ReplaceAll(script, "127.0.0.1:7071", d.front))
	// The cluster's submit prints its operation; history prints the node
	// pool's, whose status bodies name it.
	ops := regexp.MustCompile(`(?m)^operation ([0-9a-f-]{36})$`).FindAllStringSubmatch(text, -1)
	np := regexp.MustCompile(`"name": "([0-9a-f-]{36})"`).FindStringSubmatch(text)
	if len(ops) != 2 || np == nil || np[1] == ops[0][1] || ops[1][1] != np[1] {
		t.Fatalf("want the cluster's submit output, the node pool's status and its history; got operations %v, status %v", ops, np)
	}
	ops[1] = np
	for _, want := range []string{
		"curl      curl -s '" + "http://" + d.front + "/subscriptions/", // submit prints a curl for the running dev
		`"name": "` + ops[1][1] + `"`,                                   // curl and status answer for the node pool
		`"status": "Succeeded"`,                                         // status once it finished
		`"resourceID": "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/demo/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/demo"`, // doc get
		"OPERATION                             REQUEST", // ops
		"cluster demo/demo",
		"node pool demo/demo/np1",
		"operation " + ops[1][1] + "\nrecorded  .data/dev.log", // history
		"-> Succeeded",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("walkthrough output lacks %q", want)
		}
	}
	// The running dev's live output followed both to Succeeded.
	for _, op := range ops {
		re := regexp.MustCompile(regexp.QuoteMeta(op[1]) + `.*-> Succeeded`)
		waitFor(t, "dev's terminal to show "+op[1]+" reach Succeeded", func() bool { return re.MatchString(devhost.Unwrap(d.out.String())) })
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// No link of the docs leaves the repository, and each one points at a
// file that exists (and a heading of it, for a #fragment).
func TestDocsLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				t.Errorf("%s links outside the repository: %s", f, target)
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			file := f
			if path != "" {
				file = filepath.Join(filepath.Dir(f), path)
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s links to %s, which does not exist", f, target)
					continue
				}
			}
			if frag != "" && !slices.Contains(headingSlugs(t, file), frag) {
				t.Errorf("%s links to %s, but %s has no heading %q", f, target, file, frag)
			}
		}
	}
}

// headingSlugs are the anchors a markdown renderer makes of file's
// headings: lower case, punctuation dropped, spaces to hyphens.
func headingSlugs(t *testing.T, file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		out = append(out, strings.ReplaceAll(drop.ReplaceAllString(h, ""), " ", "-"))
	}
	return out
}
