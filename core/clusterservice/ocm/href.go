package ocm

import (
	"fmt"
	"strings"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// validSegment reports whether s is one href path segment, an ASCII letter
// or digit and then letters, digits, _ and -. Anything else (slashes, dots,
// query characters) would let a stored href address another resource. It
// is a loop rather than a regular expression because every poll checks an
// href.
func validSegment(s string) bool {
	if s == "" || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// clusterPrefixes are the two API groups a cluster href may use; ARO-HCP
// stores both and maps between them.
var clusterPrefixes = []string{cs.ClustersPath + "/", cs.ClustersMgmtPrefix + "/clusters/"}

// parseCluster returns the cluster ID of a cluster href under either prefix.
func parseCluster(field, href string) (string, error) {
	rest, ok := trimClusterPrefix(href)
	if !ok || !validSegment(rest) {
		return "", fmt.Errorf("%s %q is not a cluster href like %s/{id}", field, href, cs.ClustersPath)
	}
	return rest, nil
}

// parseChild returns the cluster and child IDs of an href of the form
// {cluster href}{segment}{id}.
func parseChild(field, href, segment string) (clusterID, id string, err error) {
	rest, ok := trimClusterPrefix(href)
	if ok {
		clusterID, id, ok = strings.Cut(rest, segment)
	}
	if !ok || !validSegment(clusterID) || !validSegment(id) {
		return "", "", fmt.Errorf("%s %q is not an href like %s/{cluster}%s{id}", field, href, cs.ClustersPath, segment)
	}
	return clusterID, id, nil
}

func trimClusterPrefix(href string) (string, bool) {
	for _, p := range clusterPrefixes {
		if rest, ok := strings.CutPrefix(href, p); ok {
			return rest, true
		}
	}
	return "", false
}

// clustersMgmtHref is where break-glass credentials of a cluster live.
func clustersMgmtHref(clusterID string) string {
	return cs.ClustersMgmtPrefix + "/clusters/" + clusterID
}
