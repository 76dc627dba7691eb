package clusterservice

import (
	"fmt"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
)

// Version is an OpenShift version as Clusters Service offers it: what an
// ARO-HCP frontend lists as hcpOpenShiftVersions and reads to check a
// request's version.
type Version struct {
	// ID is CS's id: "openshift-v" + RawID, plus "-" + channel group
	// outside stable (ARO-HCP's NewOpenShiftVersionXYZ builds the same).
	ID           string
	RawID        string
	ChannelGroup string
	Enabled      bool
	// Default marks the version CS picks when a request names none.
	Default           bool
	EndOfLife         time.Time
	AvailableUpgrades []string
}

// RawVersion is the raw id ("4.21.20") of a version CS names by rawID or,
// without one, by its id ("openshift-v4.21.20-candidate" or a bare
// "4.21.20" as a client posted it); "" when it names neither.
func RawVersion(id, rawID, channelGroup string) string {
	if rawID != "" {
		return rawID
	}
	id = strings.TrimPrefix(id, "openshift-v")
	if channelGroup != "" {
		return strings.TrimSuffix(id, "-"+channelGroup)
	}
	// A version link names no group: a suffix of letters is one
	// ("-candidate"), a pre-release ("-rc.1") is not.
	if i := strings.LastIndexByte(id, '-'); i >= 0 && strings.Trim(id[i+1:], "abcdefghijklmnopqrstuvwxyz") == "" {
		return id[:i]
	}
	return id
}

// CompareVersions orders raw ids as semver does ("4.20.10" after
// "4.20.8", a pre-release such as "4.21.0-rc.3" or a nightly before
// "4.21.0"); a value that is not a version is an error naming it.
func CompareVersions(a, b string) (int, error) {
	x, err := parseVersion(a)
	if err != nil {
		return 0, err
	}
	y, err := parseVersion(b)
	if err != nil {
		return 0, err
	}
	return x.Compare(y), nil
}

func parseVersion(raw string) (*semver.Version, error) {
	v, err := semver.NewVersion(raw)
	if err != nil {
		return nil, fmt.Errorf("version %q is not a version: %w", raw, err)
	}
	return v, nil
}
