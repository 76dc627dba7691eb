package devhost

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is written by the run and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// fastOptions run the repository's real app (host.json and function.json
// files) with short simulator phases and a poll tick every second.
func fastOptions(t *testing.T) options {
	return options{
		scriptRoot:    "..",
		dataDir:       t.TempDir(),
		httpAddr:      "127.0.0.1:0",
		feedPollDelay: 50 * time.Millisecond,
		phase:         200 * time.Millisecond,
		// Longer than a tick, so progress shows the cluster Provisioning.
		simDurations: "cluster_installing=1500ms",
		schedules:    map[string]string{"pollOperations": "* * * * * *"},
		samples:      true,
		exitWhenDone: true,
		timeout:      90 * time.Second,
	}
}

func TestDevRunsEverySampleToItsExpectedEnd(t *testing.T) {
	var out, logs syncBuffer
	start := time.Now()
	err := run(context.Background(), fastOptions(t), &out, &logs, map[string]string{})
	t.Logf("run took %s", time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("run: %v\n--- stdout\n%s\n--- logs\n%s", err, out.String(), logs.String())
	}
	text := out.String()
	t.Logf("stdout:\n%s", text)
	want := map[string]string{
		"create-cluster": "Succeeded", "create-nodepool": "Succeeded", "create-externalauth": "Succeeded",
		"request-credential": "Succeeded", "update-cluster": "Succeeded", "create-failing-nodepool": "Failed",
		"create-failing-cluster": "Failed", "create-doomed-cluster": "Succeeded", "create-doomed-nodepool": "Succeeded",
		"delete-doomed-cluster": "Succeeded",
	}
	table := text[strings.Index(text, "OPERATION"):]
	rows := map[string][]string{}
	implicit := 0
	for _, line := range strings.Split(table, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		if f[0] == implicitLabel {
			implicit++
			if f[2] != "Delete" || f[len(f)-1] != "-" {
				t.Errorf("implicit operation row %q: want a Delete without notification", line)
			}
		}
		rows[f[0]] = f
	}
	for label, status := range want {
		f, ok := rows[label]
		if !ok {
			t.Errorf("no table row for %s", label)
			continue
		}
		if !strings.Contains(strings.Join(f, " "), " "+status+" ") || f[len(f)-1] != "y" {
			t.Errorf("row %s = %v, want status %s and notified y", label, f, status)
		}
	}
	if implicit != 1 {
		t.Errorf("%d implicit operations in the table, want 1 (the doomed cluster's node pool delete)", implicit)
	}
	for _, change := range []string{"Accepted -> Provisioning", "Provisioning -> Succeeded", "Deleting -> Succeeded", "-> Failed"} {
		if !strings.Contains(text, change) {
			t.Errorf("progress never showed %q", change)
		}
	}
}
