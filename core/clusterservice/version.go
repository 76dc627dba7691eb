package clusterservice

import (
	"strconv"
	"strings"
	"time"
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

// CompareVersions orders raw ids numerically ("4.20.10" after "4.20.8");
// a part that is not a number counts as 0.
func CompareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x - y
		}
	}
	return 0
}
