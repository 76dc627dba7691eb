package lifecycle

import (
	"fmt"
	"slices"

	"github.com/Masterminds/semver/v3"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// desiredVersionChannels is what upstream's control-plane active-version
// controller mirrors from the HostedCluster's status.version.desired.
// channels into the ServiceProviderCluster, read from Clusters Service
// instead: for each channel group in which CS offers the running version,
// "<group>-<major.minor>" of the running version and of every enabled
// version CS offers as its upgrade in that group — the release lines the
// cluster can move along, its own included, as an OpenShift release is
// listed in its own line's channel and in each line it has an update edge
// to. Sorted, as release metadata lists channels. nil when CS offers the
// running version in no group: no word, so the stored list is left alone.
func desiredVersionChannels(running string, versions []cs.Version) []string {
	type key struct{ raw, group string }
	byKey := make(map[key]*cs.Version, len(versions))
	for i := range versions {
		v := &versions[i]
		byKey[key{v.RawID, v.ChannelGroup}] = v
	}
	var channels []string
	add := func(group, raw string) {
		if line, err := majorMinor(raw); err == nil && group != "" {
			channels = append(channels, group+"-"+line)
		}
	}
	for i := range versions {
		cur := &versions[i]
		if cur.RawID != running || cur.ChannelGroup == "" {
			continue
		}
		add(cur.ChannelGroup, running)
		for _, raw := range cur.AvailableUpgrades {
			if up := byKey[key{raw, cur.ChannelGroup}]; up != nil && up.Enabled {
				add(cur.ChannelGroup, raw)
			}
		}
	}
	if channels == nil {
		return nil
	}
	slices.Sort(channels)
	return slices.Compact(channels)
}

// majorMinor is "4.21" of "4.21.20" (or of "4.21.0-rc.1").
func majorMinor(raw string) (string, error) {
	v, err := semver.NewVersion(raw)
	if err != nil {
		return "", fmt.Errorf("version %q: %w", raw, err)
	}
	return fmt.Sprintf("%d.%d", v.Major(), v.Minor()), nil
}
