package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/harness/testsupport"
)

const module = "github.com/hcpops/hcpops/"

// TestOperatorCLIDependencies: the operator's CLI, which make package
// ships, links nothing under harness/, no test code and no embedded store
// (bbolt): it runs on the Function App's Cosmos DB alone. Read with go
// list for every platform an operator may build it on, so a file behind a
// build tag counts too.
func TestOperatorCLIDependencies(t *testing.T) {
	for _, platform := range [][]string{{"GOOS=linux", "GOARCH=amd64"}, {"GOOS=darwin", "GOARCH=arm64"}, {"GOOS=windows", "GOARCH=amd64"}} {
		cmd := testsupport.GoCommand(t, append(platform, "CGO_ENABLED=0"), "list", "-deps", "-f", "{{.ImportPath}}", ".")
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps (%v): %v", platform, err)
		}
		deps := strings.Fields(string(out))
		for _, d := range deps {
			switch {
			case d == "testing" || d == "net/http/httptest":
				t.Errorf("%v: the operator CLI links %s: test code reached it", platform, d)
			case strings.HasPrefix(d, "go.etcd.io/bbolt"):
				t.Errorf("%v: the operator CLI links %s: it runs on Cosmos DB alone", platform, d)
			case strings.HasPrefix(d, module+"harness/"):
				t.Errorf("%v: the operator CLI links %s from the harness tree", platform, strings.TrimPrefix(d, module))
			}
		}
		for _, want := range []string{"internal/operator", "core/store/cosmos", "core/lifecycle"} {
			if !slices.Contains(deps, module+want) {
				t.Errorf("%v: the operator CLI does not link %s; is this the operator CLI?", platform, want)
			}
		}
	}
}
