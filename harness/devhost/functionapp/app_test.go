package functionapp

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLoadReadsEveryLayoutAndExpandsSettings(t *testing.T) {
	local, err := LocalSettings("testdata/app")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"COSMOS_DATABASE": "from-env", "LEASE_PREFIX": "dev"}
	app, err := Load("testdata/app", Settings(env, local))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range app.Functions {
		names = append(names, f.Name)
	}
	if want := []string{"feed", "status", "tick"}; !slices.Equal(names, want) {
		t.Fatalf("functions = %v, want %v", names, want)
	}
	if !slices.Equal(app.Disabled, []string{"off"}) {
		t.Errorf("disabled = %v, want [off]", app.Disabled)
	}
	if app.Host.RoutePrefix != "" || app.Host.FunctionTimeout != 5*time.Minute ||
		app.Host.CustomHandler == nil || !app.Host.CustomHandler.EnableForwardingHTTPRequest {
		t.Errorf("host = %+v", app.Host)
	}

	feed, _ := app.Function("feed")
	tr := feed.Trigger()
	if tr.Type != TypeCosmosDBTrigger || tr.Name != "documents" {
		t.Fatalf("feed trigger = %+v", tr)
	}
	if tr.DatabaseName != "from-env" {
		t.Errorf("databaseName = %q: the environment must win over local.settings.json", tr.DatabaseName)
	}
	if tr.LeaseContainerPrefix != "dev-" || tr.LeaseContainerName != DefaultLeaseContainerName {
		t.Errorf("lease = %q %q", tr.LeaseContainerPrefix, tr.LeaseContainerName)
	}
	if tr.MaxItemsPerInvocation != 3 || tr.FeedPollDelay != 250*time.Millisecond {
		t.Errorf("max items %d, poll delay %s", tr.MaxItemsPerInvocation, tr.FeedPollDelay)
	}
	if feed.Retry == nil || feed.Retry.Strategy != StrategyExponentialBackoff || feed.Retry.MaxRetryCount != 5 {
		t.Errorf("feed retry = %+v, want its own exponential policy", feed.Retry)
	}

	tick, _ := app.Function("tick")
	tt := tick.Trigger()
	if tt.Type != TypeTimerTrigger || tt.Schedule != "*/2 * * * * *" || tt.UseMonitor {
		t.Errorf("tick trigger = %+v", tt)
	}
	if tick.Retry == nil || tick.Retry.Strategy != StrategyFixedDelay || tick.Retry.DelayInterval != 2*time.Second {
		t.Errorf("tick retry = %+v, want host.json's fixed delay", tick.Retry)
	}

	status, _ := app.Function("status")
	st := status.Trigger()
	if !status.IsHTTPOnly() || st.Route != "things/{id}" || !slices.Equal(st.Methods, []string{"GET", "POST"}) {
		t.Errorf("status = %+v (http only %v)", st, status.IsHTTPOnly())
	}
}

func TestLoadHonoursDisabledSetting(t *testing.T) {
	env := map[string]string{"COSMOS_DATABASE": "x", "LEASE_PREFIX": "p", "TICK_SCHEDULE": "0 * * * * *",
		"AzureWebJobs.feed.Disabled": "True"}
	app, err := Load("testdata/app", Settings(env))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := app.Function("feed"); ok {
		t.Error("feed is disabled by setting but was loaded")
	}
	if !slices.Equal(app.Disabled, []string{"feed", "off"}) {
		t.Errorf("disabled = %v", app.Disabled)
	}
}

func TestLoadErrorsNameTheField(t *testing.T) {
	hostJSON := `{"version":"2.0"}`
	tests := []struct {
		name     string
		host     string
		function string
		want     []string
	}{
		{"unset setting", hostJSON,
			`{"bindings":[{"type":"timerTrigger","direction":"in","name":"t","schedule":"%NOPE%"}]}`,
			[]string{"bindings[0].schedule", "%NOPE%", "not set"}},
		{"two triggers", hostJSON,
			`{"bindings":[{"type":"timerTrigger","direction":"in","name":"t","schedule":"* * * * * *"},{"type":"httpTrigger","direction":"in","name":"r"}]}`,
			[]string{"2 trigger bindings"}},
		{"no schedule", hostJSON,
			`{"bindings":[{"type":"timerTrigger","direction":"in","name":"t"}]}`,
			[]string{`binding "t"`, "schedule is required"}},
		{"bad batch size", hostJSON,
			`{"bindings":[{"type":"cosmosDBTrigger","direction":"in","name":"d","containerName":"c","maxItemsPerInvocation":0}]}`,
			[]string{"maxItemsPerInvocation 0"}},
		{"bad strategy", hostJSON,
			`{"bindings":[{"type":"timerTrigger","direction":"in","name":"t","schedule":"* * * * * *"}],"retry":{"strategy":"linear","maxRetryCount":1}}`,
			[]string{"retry", `strategy "linear"`}},
		{"bad interval", hostJSON,
			`{"bindings":[{"type":"timerTrigger","direction":"in","name":"t","schedule":"* * * * * *"}],"retry":{"strategy":"fixedDelay","maxRetryCount":1,"delayInterval":"5s"}}`,
			[]string{"delayInterval", `"5s"`}},
		{"bad direction", hostJSON,
			`{"bindings":[{"type":"timerTrigger","direction":"sideways","name":"t","schedule":"* * * * * *"}]}`,
			[]string{`direction "sideways"`}},
		{"bad host version", `{"version":"1.0"}`,
			`{"bindings":[{"type":"timerTrigger","direction":"in","name":"t","schedule":"* * * * * *"}]}`,
			[]string{"host.json", `version "1.0"`}},
		{"bad host timeout", `{"version":"2.0","functionTimeout":"ten minutes"}`,
			`{"bindings":[{"type":"timerTrigger","direction":"in","name":"t","schedule":"* * * * * *"}]}`,
			[]string{"functionTimeout", `"ten minutes"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, filepath.Join(root, "host.json"), tc.host)
			write(t, filepath.Join(root, "fn", "function.json"), tc.function)
			_, err := Load(root, Settings())
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestLoadRefusesDuplicatesAndEmptyRoots(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "host.json"), `{"version":"2.0"}`)
	if _, err := Load(root, Settings()); err == nil || !strings.Contains(err.Error(), "no <function>/function.json") {
		t.Errorf("empty root: err = %v", err)
	}
	fn := `{"bindings":[{"type":"timerTrigger","direction":"in","name":"t","schedule":"* * * * * *"}]}`
	write(t, filepath.Join(root, "tick", "function.json"), fn)
	write(t, filepath.Join(root, "functions", "Tick", "function.json"), fn)
	if _, err := Load(root, Settings()); err == nil || !strings.Contains(err.Error(), "defined twice") {
		t.Errorf("duplicate: err = %v", err)
	}
	if _, err := Load(filepath.Join(root, "missing"), Settings()); err == nil || !strings.Contains(err.Error(), "host.json") {
		t.Errorf("missing root: err = %v", err)
	}
}

func TestExpand(t *testing.T) {
	lookup := Settings(map[string]string{"A": "alpha", "EMPTY": ""})
	tests := []struct {
		in, want string
		err      bool
	}{
		{"plain", "plain", false},
		{"%A%", "alpha", false},
		{"x-%A%-%A%-y", "x-alpha-alpha-y", false},
		{"%EMPTY%", "", false},
		{"100%", "100%", false},
		{"50%% off", "50%% off", false},
		{"% A %", "% A %", false},
		{"%MISSING%", "", true},
	}
	for _, tc := range tests {
		got, err := Expand(tc.in, lookup)
		if tc.err {
			if !errors.Is(err, ErrUnresolved) || !strings.Contains(err.Error(), "MISSING") {
				t.Errorf("Expand(%q) err = %v, want unresolved MISSING", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestLocalSettings(t *testing.T) {
	root := t.TempDir()
	got, err := LocalSettings(root)
	if err != nil || len(got) != 0 {
		t.Fatalf("missing file: %v, %v", got, err)
	}
	write(t, filepath.Join(root, "local.settings.json"), `{"Values":{"N":1}}`)
	if _, err := LocalSettings(root); err == nil || !strings.Contains(err.Error(), "Values.N") {
		t.Errorf("non-string value: err = %v", err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
