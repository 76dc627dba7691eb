package soak

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	tests := []struct {
		args []string
		err  string
	}{
		{[]string{"-ops", "0"}, "-ops 0"},
		{[]string{"-duration", "-1s"}, "-duration -1s"},
		{[]string{"-settle", "0s"}, "-settle 0s"},
		{[]string{"-phase", "0s"}, "-phase 0s"},
		{[]string{"-kills", "1"}, "-kills 1"},
		{[]string{"-kills", "-2"}, "-kills -2"},
		{[]string{"-ops", "many"}, `invalid value "many" for flag -ops`},
		{[]string{"extra"}, `unexpected arguments ["extra"]`},
		{[]string{"-instances", "0"}, "-instances 0"},
		{[]string{"-instances", "3", "-kills", "2"}, "-kills 2 with -instances 3"},
		{[]string{"-sick-every", "1"}, "-sick-every 1"},
		{[]string{"-sick-deadline", "0s"}, "-sick-deadline 0s"},
		{[]string{"-cs-hang-rate", "0.9"}, "-cs-hang-rate 0.9"},
		{[]string{"-misrouted-window", "-1s"}, "-misrouted-window -1s"},
		{[]string{"-duration", "8s", "-misrouted-window", "2s", "-gateway-window", "3s"}, "-gateway-window 3s: want 0 (none) up to a quarter of -duration"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := parseOptions(tc.args, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("err = %v, want one saying %q", err, tc.err)
			}
		})
	}
	o, err := parseOptions([]string{"-ops", "40", "-duration", "50s", "-seed", "9", "-break-etag-guard"}, &bytes.Buffer{})
	if err != nil || o.ops != 40 || o.duration != 50*time.Second || o.seed != 9 || !o.stripIfMatch {
		t.Errorf("parsed %+v, %v", o, err)
	}
	if o.instances != 2 || o.sickEvery != 7 || !o.cosmosFaults || o.csHangRate == 0 || o.misroutedWindow != 3*time.Second || o.gatewayWindow != 3*time.Second {
		t.Errorf("defaults %+v: want two instances, a sick subset, Cosmos faults, CS hangs and both CS fault windows", o)
	}
	if w := csWindowsOf(10*time.Second, time.Second, 0); len(w) != 1 || w[0].at != 4*time.Second || w[0].length != time.Second {
		t.Errorf("windows of a run without a gateway window = %+v, want the misrouted one from 4s", w)
	}
	o, err = parseOptions([]string{"-instances", "1", "-sick-every", "0", "-cosmos-faults=false", "-cs-hang-rate", "0"}, &bytes.Buffer{})
	if err != nil || o.instances != 1 || o.sickEvery != 0 || o.cosmosFaults || o.csHangRate != 0 {
		t.Errorf("parsed %+v, %v", o, err)
	}
	var usage bytes.Buffer
	if _, err := parseOptions([]string{"-h"}, &usage); !errors.Is(err, errHelp) || !strings.Contains(usage.String(), "-duration") {
		t.Errorf("-h: %v, usage %q", err, usage.String())
	}
}

func TestKillCount(t *testing.T) {
	for _, tc := range []struct {
		kills     int
		duration  time.Duration
		want      int
		instances int
	}{{0, 15 * time.Second, 2, 1}, {0, 3 * time.Minute, 9, 2}, {5, 15 * time.Second, 5, 2}, {0, 15 * time.Second, 4, 4}} {
		o := defaultOptions()
		o.kills, o.duration, o.instances = tc.kills, tc.duration, tc.instances
		if got := o.killCount(); got != tc.want {
			t.Errorf("kills %d over %s: %d, want %d", tc.kills, tc.duration, got, tc.want)
		}
	}
	got := killTimes(3, 20*time.Second)
	want := []time.Duration{5 * time.Second, 10 * time.Second, 15 * time.Second}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("killTimes = %v, want %v", got, want)
	}
}
