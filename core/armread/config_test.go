package armread

import (
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/admission"
)

// ReadConfigFromEnv asks for exactly admission's settings and the
// Retry-After ones: a table row without one must not read the empty name.
func TestReadConfigFromEnvReadsOnlyItsSettings(t *testing.T) {
	asked := map[string]bool{}
	if _, err := ReadConfigFromEnv(func(k string) string { asked[k] = true; return "" }); err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{admission.EnvAPIVersions: true, admission.EnvSubscriptionDocument: true,
		EnvRetryAfter: true, EnvRetryAfterSlow: true}; !maps.Equal(asked, want) {
		t.Errorf("ReadConfigFromEnv asked for %v, want %v", asked, want)
	}
}

// TestReadConfigFromEnv: the read service's settings are admission's,
// with its errors; its timeout is the default.
func TestReadConfigFromEnv(t *testing.T) {
	got, err := ReadConfigFromEnv(func(k string) string {
		return map[string]string{admission.EnvAPIVersions: "2099-01-01", admission.EnvSubscriptionDocument: "required"}[k]
	})
	want := ReadConfig{Admission: admission.Config{APIVersions: []string{"2099-01-01"}, RequireSubscriptionDocument: true},
		Timeout: DefaultReadTimeout, RetryAfter: DefaultRetryAfter, RetryAfterSlow: DefaultRetryAfterSlow}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReadConfigFromEnv = %+v, %v; want %+v", got, err, want)
	}
	_, err = ReadConfigFromEnv(func(k string) string {
		return map[string]string{admission.EnvSubscriptionDocument: "maybe"}[k]
	})
	if err == nil || !strings.Contains(err.Error(), `HCPOPS_SUBSCRIPTION_DOCUMENT="maybe"`) {
		t.Errorf("bad subscription policy: %v, want an error naming it", err)
	}
	// Retry-After: whole seconds within ARM's 10 s to 600 s; the slow cap
	// not below the usual wait.
	for _, tc := range []struct {
		env  map[string]string
		want string // error substring; "" means accepted
	}{
		{map[string]string{EnvRetryAfter: "30s", EnvRetryAfterSlow: "2m"}, ""},
		{map[string]string{EnvRetryAfter: "2m"}, ""}, // the slow cap follows it up
		{map[string]string{EnvRetryAfter: "5s"}, `HCPOPS_RETRY_AFTER="5s"`},
		{map[string]string{EnvRetryAfter: "11m"}, `HCPOPS_RETRY_AFTER="11m"`},
		{map[string]string{EnvRetryAfter: "10.5s"}, `HCPOPS_RETRY_AFTER="10.5s"`},
		{map[string]string{EnvRetryAfterSlow: "soon"}, `HCPOPS_RETRY_AFTER_SLOW="soon"`},
		{map[string]string{EnvRetryAfter: "30s", EnvRetryAfterSlow: "20s"}, "HCPOPS_RETRY_AFTER_SLOW=20s is below HCPOPS_RETRY_AFTER=30s"},
	} {
		cfg, err := ReadConfigFromEnv(func(k string) string { return tc.env[k] })
		switch {
		case tc.want == "" && (err != nil || cfg.RetryAfterSlow < cfg.RetryAfter):
			t.Errorf("%v: %+v, %v; want accepted", tc.env, cfg, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want an error naming %s", tc.env, err, tc.want)
		}
	}
}

// TestNewReadServiceRefusesIncompleteDeps: the read service names what it
// lacks and refuses a negative timeout.
func TestNewReadServiceRefusesIncompleteDeps(t *testing.T) {
	if _, err := NewReadService(ReadDeps{}, ReadConfig{}); err == nil || !strings.Contains(err.Error(), "Store, ClusterService required") {
		t.Errorf("no deps: %v", err)
	}
	e := newEnv(t)
	if _, err := NewReadService(ReadDeps{Store: e.store, ClusterService: e.CS}, ReadConfig{Timeout: -time.Second}); err == nil ||
		!strings.Contains(err.Error(), "Timeout") {
		t.Errorf("negative timeout: %v", err)
	}
}
