package simulator

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTimelineAt(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tl := timeline{start: t0, final: "ready", phases: []phase{
		{"validating", time.Minute}, {"pending", 0}, {"installing", 2 * time.Minute},
	}}
	cases := []struct {
		at        time.Duration
		state     string
		sinceMins int
	}{
		{0, "validating", 0},
		{59 * time.Second, "validating", 0},
		{time.Minute, "installing", 1}, // the zero-length pending phase is skipped
		{3*time.Minute - time.Nanosecond, "installing", 1},
		{3 * time.Minute, "ready", 3},
		{time.Hour, "ready", 3},
	}
	for _, tc := range cases {
		st, since := tl.at(t0.Add(tc.at))
		if st != tc.state || !since.Equal(t0.Add(time.Duration(tc.sinceMins)*time.Minute)) {
			t.Errorf("at +%s = %s since %s, want %s since +%dm", tc.at, st, since, tc.state, tc.sinceMins)
		}
	}
	gone := timeline{start: t0, phases: []phase{{"uninstalling", time.Minute}}}
	if st, _ := gone.at(t0.Add(time.Minute)); st != "" {
		t.Errorf("deleted object state = %q, want gone", st)
	}
	failed := tl.failBefore("error", "installing")
	if st, _ := failed.at(t0.Add(time.Minute)); st != "error" || !failed.end().Equal(t0.Add(time.Minute)) {
		t.Errorf("failBefore: state %q end %s, want error at +1m", st, failed.end())
	}
}

func TestDurationsParseList(t *testing.T) {
	cases := []struct {
		list    string
		wantErr string
		check   func(Durations) bool
	}{
		{"cluster_installing=30s, node_pool_updating=2m", "",
			func(d Durations) bool {
				return d.ClusterInstalling == 30*time.Second && d.NodePoolUpdating == 2*time.Minute
			}},
		{"", "", func(d Durations) bool { return d == DefaultDurations() }},
		{"bogus=1s", `unknown duration "bogus"`, nil},
		{"cluster_installing", "want name=duration", nil},
		{"cluster_installing=soon", "invalid duration", nil},
		{"cluster_installing=-1s", "is negative", nil},
	}
	for _, tc := range cases {
		d := DefaultDurations()
		err := d.ParseList(tc.list)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseList(%q) error = %v, want %q", tc.list, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !tc.check(d) {
			t.Errorf("ParseList(%q) = %+v, %v", tc.list, d, err)
		}
	}
	if n := len(DefaultDurations().Map()); n != 18 {
		t.Errorf("Map has %d durations, want 18", n)
	}
}

// EveryStateTakes sets every state's duration, so a state added to
// Durations cannot be left at zero (instant) in the tests that use it:
// read by reflection, not from the fields table EveryStateTakes walks.
func TestEveryStateTakes(t *testing.T) {
	d := reflect.ValueOf(EveryStateTakes(time.Minute))
	for i := range d.NumField() {
		name, got := d.Type().Field(i).Name, time.Duration(d.Field(i).Int())
		want := time.Minute
		if name == "CredentialExpiry" {
			want = 24 * time.Hour
		}
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}
