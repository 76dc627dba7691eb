package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/internal/cli"
)

const testCluster = "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1"

func envFor(dir string) func(string) string {
	return func(k string) string {
		if k == "HCPOPS_DATA_DIR" {
			return dir
		}
		return ""
	}
}

func runCmd(t *testing.T, env func(string) string, stdin string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), args, env, strings.NewReader(stdin), &out)
	return out.String(), err
}

func TestSubmitStatusDoc(t *testing.T) {
	env := envFor(t.TempDir())
	out, err := runCmd(t, env, "", "submit", "-create", "-resource", testCluster, "-notification-uri", "http://127.0.0.1:9/n")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`statusURL (\S+)`).FindStringSubmatch(out)
	if len(m) < 2 || !strings.Contains(m[1], "/locations/eastus/hcpOperationStatuses/") {
		t.Fatalf("submit printed %q", out)
	}
	out, err = runCmd(t, env, "", "status", m[1])
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ ID, Name, Status string }
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Status != "Accepted" || st.ID != m[1] {
		t.Fatalf("status printed %q (%v)", out, err)
	}
	// A second create while the first is in flight is ARM's 409.
	if _, err := runCmd(t, env, "", "submit", "-resource", testCluster); err == nil || !strings.Contains(err.Error(), "conflict") {
		t.Fatalf("second submit: %v, want a conflict", err)
	}
	out, err = runCmd(t, env, "", "doc", "list", "-subscription", "1d3378d3-5a3f-4712-85a1-2485495dfc4b")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "\n"); n != 2 {
		t.Fatalf("doc list printed %d documents, want the operation and the cluster:\n%s", n, out)
	}
	out, err = runCmd(t, env, "", "doc", "get", testCluster)
	if err != nil || !strings.Contains(out, `"provisioningState": "Accepted"`) {
		t.Fatalf("doc get: %v\n%s", err, out)
	}
	// Load the cluster back with a change: replaced under its etag.
	edited := strings.Replace(out, `"provisioningState": "Accepted"`, `"provisioningState": "Succeeded"`, 1)
	if out, err = runCmd(t, env, edited, "doc", "put", "-"); err != nil || !strings.HasPrefix(out, "replaced ") {
		t.Fatalf("doc put: %v %q", err, out)
	}
	if out, _ = runCmd(t, env, "", "doc", "get", testCluster); !strings.Contains(out, `"provisioningState": "Succeeded"`) {
		t.Fatalf("doc put did not replace: %s", out)
	}
}

func TestCommandErrors(t *testing.T) {
	env := envFor(t.TempDir())
	file := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(file, []byte(`{"id":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{nil, "no command"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"submit"}, "-resource is required"},
		{[]string{"submit", "-resource", "not-an-id"}, "-resource"},
		{[]string{"submit", "-resource", testCluster, "-request", "explode"}, `-request "explode"`},
		{[]string{"submit", "-resource", testCluster + "/nodePools/np", "-request", "create"}, "no store at"},
		{[]string{"submit", "-create", "-resource", testCluster + "/nodePools/np", "-request", "create"}, "not found"},
		{[]string{"status"}, "usage"},
		{[]string{"status", "abc"}, "-subscription"},
		{[]string{"status", "-subscription", "1d3378d3-5a3f-4712-85a1-2485495dfc4b", "abc"}, `OPERATION "abc": an operation id is a UUID`},
		{[]string{"status", "-subscription", "1d3378d3-5a3f-4712-85a1-2485495dfc4b", "6e34c52d-4115-4834-abff-933590456a6e"}, "not found in subscription"},
		{[]string{"status", "6e34c52d-4115-4834-abff-933590456a6e", "-subscription", "abc"}, `-subscription "abc": a subscription ID is a UUID`},
		{[]string{"doc", "list", "-subscription", "abc"}, `-subscription "abc"`},
		{[]string{"doc", "get", "/subscriptions/abc/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1"}, `subscription "abc"`},
		{[]string{"submit", "-resource", "/subscriptions/abc/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1"}, `subscription "abc"`},
		{[]string{"submit", "-bogus"}, "flag provided but not defined: -bogus ('hcpopsctl submit -h' lists flags)"},
		{[]string{"serve"}, "FUNCTIONS_CUSTOMHANDLER_PORT is not set: hcpops serve is normally started by the Azure Functions host"},
		{[]string{"doc"}, "usage"},
		{[]string{"doc", "list"}, "-subscription"},
		{[]string{"doc", "put", file}, "partitionKey"},
		{[]string{"doc", "zap"}, `unknown subcommand "zap"`},
	}
	for _, c := range cases {
		_, err := runCmd(t, env, "", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("hcpops %v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}

// Read-only commands on a data dir with no store say so and leave nothing
// behind; a bad setting stops serve before it creates anything.
func TestNothingCreatedOnDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	env := envFor(dir)
	for _, args := range [][]string{
		{"status", "/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/6e34c52d-4115-4834-abff-933590456a6e"},
		{"doc", "get", testCluster},
		{"doc", "list", "-active"},
	} {
		if _, err := runCmd(t, env, "", args...); err == nil || !strings.Contains(err.Error(), "no store at "+filepath.Join(dir, "store.db")) {
			t.Errorf("hcpops %v: %v, want 'no store at'", args, err)
		}
	}
	serveEnv := func(k string) string {
		switch k {
		case "HCPOPS_DATA_DIR":
			return dir
		case "FUNCTIONS_CUSTOMHANDLER_PORT":
			return "7999"
		case "HCPOPS_DISPATCH_GRACE":
			return "soon"
		}
		return ""
	}
	if _, err := runCmd(t, serveEnv, "", "serve"); err == nil || !strings.Contains(err.Error(), "CLUSTERS_SERVICE_URL") {
		t.Errorf("serve without a Clusters Service: %v", err)
	}
	withCS := func(k string) string {
		if k == "CLUSTERS_SERVICE_URL" {
			return "http://127.0.0.1:9"
		}
		return serveEnv(k)
	}
	if _, err := runCmd(t, withCS, "", "serve"); err == nil || !strings.Contains(err.Error(), `HCPOPS_DISPATCH_GRACE="soon"`) {
		t.Errorf("serve with a bad setting: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the data dir was created: %v", err)
	}
}

// Every command answers -h with its usage and exit status 0.
func TestHelpForEveryCommand(t *testing.T) {
	env := envFor(t.TempDir())
	for _, args := range [][]string{
		{"-h"}, {"help"}, {"serve", "-h"}, {"submit", "-h"}, {"status", "-h"}, {"status", "x", "-h"},
		{"doc", "-h"}, {"doc", "get", "-h"}, {"doc", "put", "-h"}, {"doc", "list", "-h"}, {"dev", "-h"},
	} {
		var out bytes.Buffer
		err := run(context.Background(), args, env, strings.NewReader(""), &out)
		if err != nil && !errors.Is(err, cli.ErrHelp) {
			t.Errorf("hcpopsctl %v: %v, want usage and exit 0", args, err)
		}
		if !strings.Contains(out.String(), "usage: hcpopsctl") {
			t.Errorf("hcpopsctl %v printed %q, want its usage, named hcpopsctl", args, out.String())
		}
	}
}

// hcpops -h lists every command run dispatches (main.go's cases).
func TestUsageListsEveryCommand(t *testing.T) {
	src, err := os.ReadFile("harness/cmd/hcpopsctl/main.go")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	usage(&out)
	var cases []string
	for _, m := range regexp.MustCompile(`(?m)^\tcase ("[a-z][a-z-]*"(?:, "[a-z][a-z-]*")*):`).FindAllStringSubmatch(string(src), -1) {
		for _, c := range strings.Split(m[1], ", ") {
			cases = append(cases, strings.Trim(c, `"`))
		}
	}
	if len(cases) < 10 {
		t.Fatalf("found %d commands in main.go; the pattern no longer reads its switch", len(cases))
	}
	for _, c := range cases {
		if c != "help" && !regexp.MustCompile(`(?m)^  `+c+` +\S`).MatchString(out.String()) {
			t.Errorf("hcpops -h does not list %q:\n%s", c, out.String())
		}
	}
}

// Flags may follow the arguments.
func TestFlagsAfterArguments(t *testing.T) {
	env := envFor(t.TempDir())
	out, err := runCmd(t, env, "", "submit", "-resource", testCluster, "-create")
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`operation (\S+)`).FindStringSubmatch(out)[1]
	out, err = runCmd(t, env, "", "status", name, "-subscription", "1d3378d3-5a3f-4712-85a1-2485495dfc4b")
	if err != nil || !strings.Contains(out, `"status": "Accepted"`) {
		t.Fatalf("status NAME -subscription SUB: %v\n%s", err, out)
	}
}
