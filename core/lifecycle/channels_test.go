package lifecycle

import (
	"slices"
	"testing"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// TestDesiredVersionChannels: the running version's own line and each
// line CS offers an enabled upgrade into, per channel group, sorted; nil
// when CS offers the running version in no group.
func TestDesiredVersionChannels(t *testing.T) {
	vs := []cs.Version{
		{RawID: "4.20.25", ChannelGroup: "stable", Enabled: true, AvailableUpgrades: []string{"4.20.26", "4.21.20", "4.22.1"}},
		{RawID: "4.20.26", ChannelGroup: "stable", Enabled: true},
		{RawID: "4.21.20", ChannelGroup: "stable", Enabled: true},
		{RawID: "4.22.1", ChannelGroup: "stable", Enabled: false}, // disabled: no line
		{RawID: "4.20.25", ChannelGroup: "candidate", Enabled: true, AvailableUpgrades: []string{"4.23.0-rc.1", "4.24.0"}},
		{RawID: "4.23.0-rc.1", ChannelGroup: "candidate", Enabled: true},
		// 4.24.0 is offered as an upgrade but not listed in candidate: no line.
	}
	for _, tc := range []struct {
		running string
		want    []string
	}{
		{"4.20.25", []string{"candidate-4.20", "candidate-4.23", "stable-4.20", "stable-4.21"}},
		{"4.21.20", []string{"stable-4.21"}},
		{"4.19.9", nil},
		{"", nil},
	} {
		if got := desiredVersionChannels(tc.running, vs); !slices.Equal(got, tc.want) {
			t.Errorf("desiredVersionChannels(%q) = %q, want %q", tc.running, got, tc.want)
		}
	}
}
