package handlers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// A check's report is in the health body beside the fields a probe reads
// already; a check cannot take those names, nor one name twice.
func TestHealthChecks(t *testing.T) {
	s, ts, _ := newTestServer(t, Config{})
	calls := 0
	if err := s.HealthCheck("poll", func() any { calls++; return map[string]any{"lastTick": map[string]any{"outcome": "ok"}} }); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"status", "functions", "", "poll"} {
		if err := s.HealthCheck(bad, func() any { return nil }); err == nil {
			t.Errorf("HealthCheck(%q) was accepted", bad)
		}
	}
	if err := s.HealthCheck("other", nil); err == nil || !strings.Contains(err.Error(), "non-nil") {
		t.Errorf("a nil check: %v", err)
	}
	resp := do(t, ts, http.MethodGet, "/", nil, nil)
	var h struct {
		Status string
		Poll   struct{ LastTick struct{ Outcome string } }
	}
	if err := json.Unmarshal(resp.raw, &h); err != nil || resp.status != http.StatusOK || h.Status != "ok" || h.Poll.LastTick.Outcome != "ok" || calls != 1 {
		t.Errorf("health: %d %s (%v), check called %d times", resp.status, resp.raw, err, calls)
	}
}
