package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/harness/testsupport"
)

const module = "github.com/hcpops/hcpops/"

// harnessTree holds everything that runs beside the handler (the developer
// binary, its local host, the simulator, fakes, test kits, soak, benchmark)
// and must never ship.
const harnessTree = "harness/"

// TestShippedDependencies is the one rule between the two trees: what
// `make package` ships links nothing under harness/, no test code, and no
// local store. Read with go list for the platform it is built for, so a
// file behind a build tag counts too.
func TestShippedDependencies(t *testing.T) {
	var ours []string
	for _, d := range listDeps(t, ".") {
		switch {
		case d == "testing" || d == "net/http/httptest":
			t.Errorf("the shipped binary links %s: test code reached it", d)
		case strings.HasPrefix(d, "go.etcd.io/bbolt"):
			t.Errorf("the shipped binary links %s: it runs on Cosmos DB alone", d)
		}
		if p, ok := strings.CutPrefix(d, module); ok {
			ours = append(ours, p)
			if strings.HasPrefix(p, harnessTree) {
				t.Errorf("the shipped binary links %s from the harness tree: %s", p, importer(t, p))
			}
		}
	}
	for _, want := range []string{"app", "handlers", "core/lifecycle", "core/store/cosmos", "core/clusterservice/ocm"} {
		if !slices.Contains(ours, want) {
			t.Errorf("the shipped binary does not link %s; is this the handler? hcpops packages: %v", want, ours)
		}
	}
}

// TestProductTreeHasNoTestCode: no non-test file outside harness/ imports
// testing, so nothing in the product tree is a test kit in disguise.
func TestProductTreeHasNoTestCode(t *testing.T) {
	out, err := goCommand(t, "list", "-f", `{{.ImportPath}}: {{join .Imports " "}}`, "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, imports, _ := strings.Cut(line, ": ")
		p := strings.TrimPrefix(name, module)
		if strings.HasPrefix(p, harnessTree) {
			continue
		}
		if slices.Contains(strings.Fields(imports), "testing") {
			t.Errorf("%s is in the product tree and imports testing in a non-test file: move it under harness/ or beside its subject as a _test.go", p)
		}
	}
}

// TestDeveloperBinaryHasTheHarness: the harness the shipped binary leaves
// out is where the developer commands need it, so the check above is
// about where it is linked, not whether it builds.
func TestDeveloperBinaryHasTheHarness(t *testing.T) {
	deps := listDeps(t, "../../harness/cmd/hcpopsctl")
	for _, want := range []string{"harness/simulator", "harness/devhost", "harness/benchmark", "harness/frontend", "harness/armsink", "harness/localstore"} {
		if !slices.Contains(deps, module+want) {
			t.Errorf("the developer binary does not link %s", want)
		}
	}
}

func listDeps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := goCommand(t, "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// importer names which packages of the shipped binary import p, so a
// failure says where to cut.
func importer(t *testing.T, p string) string {
	out, err := goCommand(t, "list", "-deps", "-f", `{{.ImportPath}}: {{join .Imports " "}}`, ".").Output()
	if err != nil {
		return "(go list failed)"
	}
	var by []string
	for _, line := range strings.Split(string(out), "\n") {
		name, imports, ok := strings.Cut(line, ": ")
		if ok && slices.Contains(strings.Fields(imports), module+p) {
			by = append(by, strings.TrimPrefix(name, module))
		}
	}
	return "imported by " + strings.Join(by, ", ")
}

// goCommand runs the go tool for the Function App's platform (make
// package's GOOS, GOARCH and CGO_ENABLED), with this test's toolchain
// unless the caller chose one.
func goCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := testsupport.GoCommand(t, []string{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0"}, args...)
	cmd.Stderr = os.Stderr
	return cmd
}

// operatorOnly matches the code only the operator CLI calls: an
// operator's abandon and the outlook its listing reckons.
var operatorOnly = regexp.MustCompile(`hcpops/core/lifecycle\..*(Abandon|abandon|Outlook)|hcpops/internal/operator\.`)

// TestShippedBinaryCarriesNoOperatorCode: the Function App's binary, as
// built, holds none of the code only the operator CLI calls, and the CLI
// holds it (so the pattern names real symbols). Read from the binaries'
// symbol tables: an exported method of a type the app uses is kept even
// when nothing calls it, which go list cannot see.
func TestShippedBinaryCarriesNoOperatorCode(t *testing.T) {
	testsupport.RealStack(t, "both binaries, built")
	app := symbols(t, ".", "hcpops")
	ctl := symbols(t, "../hcpopsctl", "hcpopsctl")
	for _, s := range app {
		if operatorOnly.MatchString(s) {
			t.Errorf("the Function App's binary carries %s, which only the operator CLI calls", s)
		}
	}
	var in []string
	for _, s := range ctl {
		if operatorOnly.MatchString(s) {
			in = append(in, s)
		}
	}
	for _, want := range []string{"lifecycle.Abandon", "lifecycle.Outlooker.Outlook", "operator.Run"} {
		if !slices.ContainsFunc(in, func(s string) bool { return strings.HasSuffix(s, want) }) {
			t.Errorf("the operator CLI does not carry %s; the pattern names no real symbol: %v", want, in)
		}
	}
}

// symbols are the function symbols of pkg built as make package builds it.
func symbols(t *testing.T, pkg, name string) []string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	build := testsupport.GoCommand(t, []string{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0"}, "build", "-trimpath", "-o", bin, pkg)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, out)
	}
	out, err := testsupport.GoCommand(t, nil, "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm %s: %v", bin, err)
	}
	var syms []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[len(f)-2] == "T" {
			syms = append(syms, f[len(f)-1])
		}
	}
	return syms
}
