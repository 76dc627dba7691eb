package clusterservice

import "time"

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
