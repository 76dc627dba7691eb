package app

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/appsettings"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
	"github.com/hcpops/hcpops/harness/store/memory"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// recordWith runs recordSettings of an app on s and returns its records.
func recordWith(t *testing.T, s store.Store, env map[string]string) string {
	t.Helper()
	var out testsupport.Buffer
	getenv := func(k string) string { return env[k] }
	a := &App{Logger: slog.New(slog.NewJSONHandler(&out, nil)), clock: testsupport.NewClock(time.Date(2026, 12, 5, 4, 30, 0, 0, time.UTC)),
		set: settings{judging: lifecycle.Settings(getenv), instance: getenv(EnvInstance)}}
	a.Store = s
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	select {
	case <-a.recordSettings(ctx):
	case <-ctx.Done():
		t.Fatal("recordSettings never ended")
	}
	return out.String()
}

// The record is written on the first start and after a change, not by a
// start with the same settings; a database that cannot take it costs a
// warning naming the record, never the start; a local store has none.
func TestSettingsRecord(t *testing.T) {
	env := map[string]string{"HCPOPS_STUCK_AFTER": "any=30s", EnvInstance: "instance-a"}
	s := cosmostest.NewStore(t)
	if got := recordWith(t, s, env); !contains(got, `"msg":"settings.recorded"`, `"HCPOPS_STUCK_AFTER":"any=30s"`, `"instance":"instance-a"`) {
		t.Errorf("first start: %s", got)
	}
	if got := recordWith(t, s, env); got != "" {
		t.Errorf("a start with the same settings logged %s, want no write and no record", got)
	}
	l, err := s.Leases()
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := appsettings.Load(t.Context(), l); err != nil || rec.Settings["HCPOPS_STUCK_AFTER"] != "any=30s" || rec.RecordedBy != "instance-a" {
		t.Errorf("the record = %+v, %v", rec, err)
	}
	env["HCPOPS_STUCK_AFTER"] = "any=1m"
	if got := recordWith(t, s, env); !contains(got, `"msg":"settings.recorded"`, `"HCPOPS_STUCK_AFTER":"any=1m"`) {
		t.Errorf("a start with changed settings: %s", got)
	}
	if got := recordWith(t, memory.New(), env); got != "" {
		t.Errorf("a local store: %s, want nothing (its process announces its settings itself)", got)
	}
}

// TestSettingsNotRecordedIsLogged: a database without the leases
// container (an older deployment) is a warning with the record's id.
func TestSettingsNotRecordedIsLogged(t *testing.T) {
	s, err := cosmos.New(cosmostest.Config(t)) // no containers created
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := recordWith(t, s, map[string]string{EnvInstance: "instance-a"})
	if !contains(got, `"level":"WARN"`, `"msg":"settings.not_recorded"`, `"record":"hcpops.settings"`, `"error":"`) {
		t.Errorf("recording into a database without its containers: %s", got)
	}
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
