package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/apptest"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
)

var update = flag.Bool("update", false, "rewrite the golden host payloads in testdata/")

// The create apptest's rig submits, by the names these tests use.
const (
	sub       = apptest.Subscription
	clusterID = apptest.ClusterID
	opName    = apptest.OpName
	tenant    = apptest.Tenant
	armAppID  = apptest.ARMAppID
)

// golden returns testdata/name; with -update it first writes it as the
// Functions host would send the given documents (double-encoded).
func golden(t *testing.T, name string, docs func() []json.RawMessage) []byte {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		var items []store.Item
		for _, d := range docs() {
			items = append(items, store.Item{Body: d})
		}
		// The local host's encoder is the one place that knows the host's
		// double encoding.
		documents, err := triggerhost.EncodeDocuments(items)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.MarshalIndent(map[string]any{
			"Data":     map[string]any{"documents": documents},
			"Metadata": map[string]any{"sys": map[string]any{"MethodName": "dispatchOperations", "UtcNow": "2026-03-14T01:59:27.0000000Z", "RandGuid": "6f3c1c55-5f0e-4f47-9a53-0b1d3c2f9e11"}},
		}, "", "  ")
		if err := os.WriteFile(path, append(body, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	return b
}

// feedCursor is the change feed's position: anything written after it shows
// up as a change, which is how the tests see "no store writes".
func feedCursor(t *testing.T, s store.Store) string {
	t.Helper()
	cont := ""
	for {
		p, err := s.ChangeFeed(context.Background(), cont, 1000)
		if err != nil {
			t.Fatal(err)
		}
		cont = p.Continuation
		if len(p.Items) == 0 {
			return cont
		}
	}
}

func changesSince(t *testing.T, s store.Store, cont string) int {
	t.Helper()
	p, err := s.ChangeFeed(context.Background(), cont, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(p.Items)
}

// logLines decodes JSON log lines.
func logLines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ensureJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, b)
	}
	return m
}

func statusPath() string {
	return fmt.Sprintf("/subscriptions/%s/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/%s", sub, opName)
}
