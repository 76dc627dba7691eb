package devhost

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/devhost/functionapp"
)

const runCosmosChild = "DEVHOST_RUN_COSMOS_CHILD"

// TestRunCosmosThroughIdentity is make run-cosmos as it runs: the
// project's with-server.sh starts the Cosmos-compatible server over https
// with its local managed-identity endpoint and runs dev beside it (here
// this test binary, as a child), which reaches the database through
// azidentity's managed identity with the server's certificate verified
// against the CA it made, and runs every sample to its end.
func TestRunCosmosThroughIdentity(t *testing.T) {
	if os.Getenv(runCosmosChild) == "1" {
		runCosmosAsChild(t)
		return
	}
	fastOptions(t) // skips under -short, as every real-stack test
	for _, tool := range []string{"node", "npm", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: make run-cosmos needs it", tool)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "../../tools/cosmos-test-server/with-server.sh", "0",
		os.Args[0], "-test.run=^TestRunCosmosThroughIdentity$", "-test.v", "-test.count=1")
	envFile := filepath.Join(t.TempDir(), "run-cosmos.env")
	cmd.Env = append(os.Environ(), runCosmosChild+"=1", "COSMOS_ENV_FILE="+envFile,
		"CosmosDB=AccountEndpoint=https://elsewhere.example/;AccountKey=eA==;")
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err != nil {
		t.Fatalf("with-server.sh: %v\n%s", err, text)
	}
	t.Logf("with-server.sh and dev:\n%s", text)
	for _, want := range []string{
		"with-server: Cosmos-compatible server at https://127.0.0.1:",
		"with-server: managed identity at IDENTITY_ENDPOINT=http://127.0.0.1:",
		"access         managed identity (azidentity), TLS verified against /",
		"--- PASS: TestRunCosmosThroughIdentity",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if _, err := os.Stat(envFile); !os.IsNotExist(err) {
		t.Errorf("the environment file outlived the server: %v", err)
	}
}

// runCosmosAsChild is dev under with-server.sh, on the environment it set.
func runCosmosAsChild(t *testing.T) {
	env := functionapp.EnvironMap(os.Environ())
	for _, k := range []string{"IDENTITY_ENDPOINT", "IDENTITY_HEADER", "COSMOS_CA_FILE", "CosmosDB__accountEndpoint"} {
		if env[k] == "" {
			t.Fatalf("with-server.sh did not set %s", k)
		}
	}
	if env["CosmosDB"] != "" || env["COSMOS_INSECURE_LOOPBACK"] != "" {
		t.Fatalf("with-server.sh left a key connection or skipped verification: %v", env)
	}
	// The file a frontend beside it sources names the same identity and CA.
	b, err := os.ReadFile(env["COSMOS_ENV_FILE"])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"IDENTITY_ENDPOINT=" + env["IDENTITY_ENDPOINT"], "SSL_CERT_FILE=" + env["COSMOS_CA_FILE"],
		"AZURE_TOKEN_CREDENTIALS=ManagedIdentityCredential", "DB_URL=" + env["CosmosDB__accountEndpoint"]} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q:\n%s", env["COSMOS_ENV_FILE"], want, b)
		}
	}
	if fi, err := os.Stat(env["COSMOS_ENV_FILE"]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v, %v; want 0600 (it holds IDENTITY_HEADER)", env["COSMOS_ENV_FILE"], fi.Mode(), err)
	}
	var out, logs syncBuffer
	o := fastOptions(t)
	if err := run(context.Background(), o, &out, &logs, env); err != nil {
		t.Fatalf("dev: %v\n--- stdout\n%s\n--- logs\n%s", err, out.String(), logs.String())
	}
	text := out.String()
	t.Logf("stdout:\n%s", text)
	_, table, ok := strings.Cut(text, "OPERATION")
	if !ok {
		t.Fatalf("no table in the output:\n%s", text)
	}
	for _, label := range []string{"create-cluster", "upgrade-cluster", "upgrade-nodepool", "delete-doomed-cluster"} {
		found := false
		for _, line := range strings.Split(table, "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == label && strings.Contains(line, " Succeeded ") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s did not succeed:\n%s", label, table)
		}
	}
}
