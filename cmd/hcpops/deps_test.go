package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/internal/testsupport"
)

const module = "github.com/hcpops/hcpops/"

// harness is what runs beside the handler in local runs, the soak, the
// benchmark and tests, and must never ship: matched as path elements.
var harness = []string{
	"simulator", "simtest", // the Clusters Service simulator
	"devhost",           // hcpops dev: the local Functions host and its terminal
	"benchmark", "soak", // make bench, make soak
	"testserver", "cosmostest", "embeddedtest", "storetest", // the Cosmos test server, store test kits
	"internal/dev",         // stand-ins for ARO-HCP's frontend and ARM's notification endpoint
	"internal/testsupport", // test helpers
}

// runtimePackages are the trees the handler is built from.
var runtimePackages = []string{
	"app", "cmd/hcpops", "core", "events", "functions", "handlers", "internal/atomicfile", "internal/cli", "logging", "storeapi", "auth",
}

// TestShippedDependencies: what `make package` ships links the runtime and
// nothing of the harness. Read with go list for the platform it is built
// for, so a file behind a build tag counts too.
func TestShippedDependencies(t *testing.T) {
	deps := listDeps(t, ".")
	var ours []string
	for _, d := range deps {
		switch d {
		case "testing", "net/http/httptest":
			t.Errorf("the shipped binary links %s: test code reached it", d)
		}
		if p, ok := strings.CutPrefix(d, module); ok {
			ours = append(ours, p)
		}
	}
	for _, p := range ours {
		for _, h := range harness {
			if p == h || strings.HasPrefix(p, h+"/") || strings.HasSuffix(p, "/"+h) || strings.Contains(p, "/"+h+"/") {
				t.Errorf("the shipped binary links %s (%s): %s", p, h, importer(t, p))
			}
		}
		if !slices.ContainsFunc(runtimePackages, func(r string) bool { return p == r || strings.HasPrefix(p, r+"/") }) {
			t.Errorf("the shipped binary links %s, which is in none of the runtime's trees %v: add it there if it belongs to the handler", p, runtimePackages)
		}
	}
	for _, want := range []string{"app", "handlers", "core/lifecycle", "core/store/cosmos", "core/clusterservice/ocm"} {
		if !slices.Contains(ours, want) {
			t.Errorf("the shipped binary does not link %s; is this the handler? hcpops packages: %v", want, ours)
		}
	}
	if t.Failed() {
		t.Logf("hcpops packages linked: %v", ours)
	}
}

// TestDeveloperBinaryHasTheHarness: the harness the shipped binary leaves
// out is where the developer commands need it, so the check above is
// about where it is linked, not whether it builds.
func TestDeveloperBinaryHasTheHarness(t *testing.T) {
	deps := listDeps(t, "../..")
	for _, want := range []string{"core/clusterservice/simulator", "devhost", "benchmark", "internal/dev/frontend", "internal/dev/armsink"} {
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
