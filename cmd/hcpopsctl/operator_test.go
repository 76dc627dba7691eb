package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

func TestMain(m *testing.M) { os.Exit(cosmostest.Main(m)) }

const (
	sub     = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	cluster = "/subscriptions/" + sub + "/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/lost"
)

// The operator's CLI, built as make package builds it, run as an SRE runs
// it against production: on a Cosmos DB database (the project's
// Cosmos-compatible server) with the Function App's settings and nothing
// local. It lists the operation, reads its status and its resource,
// ends it by hand, and refuses a document the tick could not parse.
func TestOperatorCLIOnCosmos(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, got := clusterBeingCreated(ctx, t, clock.Real{})
	op, path := got.Operation.Name(), got.StatusPath()

	run := operatorCLI(ctx, t, operatorEnv(cfg))
	if out, errOut, code := run("", "ops"); code != 0 || !strings.Contains(out, op) || !strings.Contains(out, "cluster rg/lost") || !strings.Contains(out, "Accepted") {
		t.Errorf("ops: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := run("", "status", path); code != 0 || !strings.Contains(out, `"status": "Accepted"`) {
		t.Errorf("status: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code := run("", "doc", "get", cluster)
	if code != 0 || !strings.Contains(out, `"provisioningState": "Accepted"`) {
		t.Fatalf("doc get: exit %d\n%s%s", code, out, errOut)
	}
	// A document the tick could not parse is refused, nothing written.
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	doc["properties"].(map[string]any)["serviceProviderProperties"].(map[string]any)["provisioningState"] = 12
	bad, _ := json.Marshal(doc)
	if _, errOut, code := run(string(bad), "doc", "put", "-"); code == 0 || !strings.Contains(errOut, "provisioningState") || !strings.Contains(errOut, "nothing was written") {
		t.Errorf("doc put of a resource the tick cannot parse: exit %d %s", code, errOut)
	}
	out, errOut, code = run("", "ops", "fail", op, "-subscription", sub, "-reason", "Clusters Service lost the cluster", "-by", "oncall")
	if code != 0 || !strings.Contains(out, "failed     "+op+" Failed (was Accepted): OperationAbandoned") ||
		!strings.Contains(out, "resource   cluster rg/lost provisioningState Failed") || !strings.Contains(errOut, `"msg":"operation.abandoned"`) {
		t.Errorf("ops fail: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := run("", "status", path); code != 0 || !strings.Contains(out, `"status": "Failed"`) || !strings.Contains(out, "Clusters Service lost the cluster") {
		t.Errorf("status after ops fail: exit %d\n%s%s", code, out, errOut)
	}
	// history, from a file of the handler's records (its log stream, or
	// Application Insights' traces exported one a line).
	logFile := filepath.Join(t.TempDir(), "records.json")
	records := fmt.Sprintf(`{"time":%q,"level":"INFO","msg":"operation.dispatched","operation_id":%q,"function":"dispatchOperations","cluster_service_id":"/api/aro_hcp/v1alpha1/clusters/abc"}`+"\n"+
		`not a record`+"\n", time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano), op)
	if err := os.WriteFile(logFile, []byte(records), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := run("", "history", op, "-subscription", sub, "-log", logFile); code != 0 || !strings.Contains(out, "dispatched by dispatchOperations") ||
		!strings.Contains(out, "now       Failed") || !strings.Contains(out, "recorded  "+logFile) {
		t.Errorf("history -log: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := run("", "history", op, "-subscription", sub); code == 0 || !strings.Contains(errOut, "-log FILE") {
		t.Errorf("history without -log on the operator CLI: exit %d %s, want it to say where records come from", code, errOut)
	}
	// top, from a file of the handler's poll.tick records.
	ticks := fmt.Sprintf(`{"time":%q,"level":"INFO","msg":"poll.tick","invocation_id":"i1","outcome":"ok","wall_ms":12.5,"budget_ms":240000,"budget_used":0.0001,"polled":1}`+"\n",
		time.Now().Add(-5*time.Second).UTC().Format(time.RFC3339Nano))
	if err := os.WriteFile(logFile, []byte(ticks), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := run("", "top", "-once", "-log", logFile); code != 0 || !strings.Contains(out, "hcpopsctl top: "+logFile) ||
		!strings.Contains(out, "last tick 5s ago: ok in 12ms of its 4m0s budget") {
		t.Errorf("top -once -log: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := run("", "top", "-once"); code == 0 || !strings.Contains(errOut, "-log FILE") {
		t.Errorf("top without -log on the operator CLI: exit %d %s", code, errOut)
	}
	if _, errOut, code := run("", "dev"); code == 0 || !strings.Contains(errOut, "developer binary") {
		t.Errorf("dev on the operator CLI: exit %d %s, want it refused, naming the developer binary", code, errOut)
	}
}

// operatorEnv is the Function App's settings, and nothing of a local run.
func operatorEnv(cfg cosmos.Config) []string {
	return []string{"PATH=" + os.Getenv("PATH"),
		"CosmosDB=AccountEndpoint=" + cfg.Endpoint + ";AccountKey=" + cfg.Key + ";",
		"COSMOS_DATABASE=" + cfg.Database, "COSMOS_INSECURE_LOOPBACK=true"}
}

// operatorCLI builds the operator CLI as make package builds it and returns a
// runner of it with env: see runner.
func operatorCLI(ctx context.Context, t *testing.T, env []string) func(stdin string, args ...string) (string, string, int) {
	t.Helper()
	return runner(ctx, t, buildCLI(t), env)
}

func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hcpopsctl")
	build := testsupport.GoCommand(t, []string{"CGO_ENABLED=0"}, "build", "-trimpath", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the operator CLI: %v\n%s", err, out)
	}
	return bin
}

// runner runs bin with env (and a HOME of its own): stdin, then
// arguments; stdout, stderr and the exit code.
func runner(ctx context.Context, t *testing.T, bin string, env []string) func(stdin string, args ...string) (string, string, int) {
	t.Helper()
	env = append(env, "HOME="+t.TempDir())
	return func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env, cmd.Dir, cmd.Stdin = env, t.TempDir(), strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("hcpopsctl %v: %v", args, err)
		}
		return out.String(), errOut.String(), code
	}
}

// clusterBeingCreated is a database on the Cosmos-compatible server, its
// containers as deploy/main.bicep creates them, holding one cluster create
// the frontend accepted at clk's time.
func clusterBeingCreated(ctx context.Context, t *testing.T, clk clock.Clock) (cosmos.Config, frontend.Accepted) {
	t.Helper()
	cfg := cosmostest.Config(t)
	s, err := cosmos.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureContainers(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.DropDatabase(context.Background())
		_ = s.Close()
	})
	got, err := frontend.New(s, clk, uuid.NewString).PutCluster(ctx, cluster,
		frontend.ClusterSpec{Location: "eastus", VersionID: "4.20"}, frontend.Options{Location: "eastus"})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, got
}
