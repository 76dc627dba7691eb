package clusterservice

import (
	"regexp"
	"strings"
)

// childID is the shape CS accepts for node pool and external auth IDs: a
// lower-cased ARM name, 1 to 63 letters, digits or dashes, starting and
// ending with a letter or digit.
var childID = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ValidChildID reports whether CS accepts id as a node pool's or an
// external auth's ID. Dispatch refuses a name that fails it before any
// call; the client and the simulator check it as CS does.
func ValidChildID(id string) bool { return childID.MatchString(id) }

// HrefKind is what a CS href addresses, as far as batched reads care.
type HrefKind int

const (
	HrefOther HrefKind = iota // not a cluster, node pool or external auth
	HrefCluster
	HrefNodePool
	HrefExternalAuth
)

// ParseHref sorts href into a cluster, node pool or external auth (under
// either API prefix ARO-HCP stores) and returns its cluster's href, so a
// poll tick can group the objects it reads by list. It only reads the
// shape; the client validates every segment before a request is made.
func ParseHref(href string) (kind HrefKind, clusterHref string) {
	for _, prefix := range []string{ClustersPath + "/", ClustersMgmtPrefix + "/clusters/"} {
		rest, ok := strings.CutPrefix(href, prefix)
		if !ok {
			continue
		}
		id, child, nested := strings.Cut(rest, "/")
		if id == "" {
			return HrefOther, ""
		}
		clusterHref = href[:len(prefix)+len(id)] // prefix + id, without a copy: a tick asks this of every poll
		switch {
		case !nested:
			return HrefCluster, clusterHref
		case isChild(child, NodePoolsSegment[1:]):
			return HrefNodePool, clusterHref
		case isChild(child, ExternalAuthsSegment[1:]):
			return HrefExternalAuth, clusterHref
		}
		return HrefOther, ""
	}
	return HrefOther, ""
}

// isChild reports whether rest is segment followed by one non-empty id.
func isChild(rest, segment string) bool {
	id, ok := strings.CutPrefix(rest, segment)
	return ok && id != "" && !strings.Contains(id, "/")
}
