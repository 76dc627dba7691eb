package lifecycle

import (
	"context"
	"net/http"
	"strings"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// A cluster CS answers with is about the ARM resource its job asked for
// only when its Azure reference names that resource: the client has
// checked the answer's id and href against the href asked (package ocm),
// and this is the check only the lifecycle can make, knowing the resource.
// A cluster about another resource (a cache or proxy that served another
// cluster's answer under this href) is no evidence: the read fails as an
// unrecognized answer, counted as one, which backs the operation off and
// is logged once for it with what came back.

// sameResource fails got, read at href, when its Azure reference names
// another ARM resource than resourceID (a cluster's). A reference without
// a resource name is not compared: CS says nothing there to compare.
func (r csReads) sameResource(ctx context.Context, href string, got cs.Cluster) error {
	a := got.Azure
	if r.resourceID == "" || a.ResourceName == "" {
		return nil
	}
	if segs, ok := clusterIDSegments(r.resourceID); ok && strings.EqualFold(segs[2], a.SubscriptionID) &&
		strings.EqualFold(segs[4], a.ResourceGroupName) && strings.EqualFold(segs[8], a.ResourceName) {
		return nil
	}
	r.calls.Unrecognized(ctx)
	return &cs.CallError{Call: "GetCluster", Href: href, Err: &cs.UnrecognizedAnswer{Method: http.MethodGet, Path: href,
		Status: http.StatusOK, Shape: "a cluster of another Azure resource (" + azureResourceName(a) + ") than " + r.resourceID,
		AnsweredID: got.ID, AnsweredHref: got.Href}}
}

// clusterIDSegments splits a cluster's ARM ID, /subscriptions/{s}/
// resourceGroups/{rg}/providers/{ns}/{type}/{name}, into its nine
// segments without allocating: every poll of a cluster asks.
func clusterIDSegments(id string) (segs [9]string, ok bool) {
	rest, more := id, true
	for i := range segs {
		if !more {
			return segs, false
		}
		segs[i], rest, more = strings.Cut(rest, "/")
	}
	return segs, !more
}
