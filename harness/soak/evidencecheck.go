package soak

import (
	"fmt"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/csfaults"
)

// falseTerminals holds every cluster delete that ended Succeeded to CS's
// own word: the simulator itself (csWitness, behind every proxy that
// answers for it) must have answered 404 for the cluster before the soak
// first saw the operation Succeeded. A delete that completed on a
// misrouted CS's or a gateway's 404 has no such answer, or a later one.
// Cluster deletes only: a child's implicit delete may complete because
// its cluster's completion removed its document, without a read of its
// own.
func (e evidence) falseTerminals() (checked int, problems []string) {
	for _, k := range sortedKeys(e.ops) {
		p := e.ops[k].Properties
		if p.Request != document.RequestDelete || p.Status != arm.ProvisioningStateSucceeded {
			continue
		}
		if kind, _, err := document.ResourceKindOfID("externalId", p.ExternalID); err != nil || kind != document.KindCluster {
			continue
		}
		href := lastCSID(e.versions[docKey{pk: k.pk, id: document.CosmosID(p.ExternalID)}])
		succeeded := firstSeen(e.versions[k], string(arm.ProvisioningStateSucceeded))
		if href == "" || succeeded.IsZero() {
			continue // CS never had it: nothing to ask CS about
		}
		checked++
		absent, ok := e.absent[href]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("delete %s of %s Succeeded, but CS never answered 404 for %s", e.ops[k].Name(), p.ExternalID, href))
		case absent.After(succeeded):
			problems = append(problems, fmt.Sprintf("delete %s of %s was seen Succeeded at %s, before CS first answered 404 for %s at %s",
				e.ops[k].Name(), p.ExternalID, stamp(succeeded), href, stamp(absent)))
		}
	}
	return checked, problems
}

// lastCSID is the last CS href the versions of a resource carried.
func lastCSID(vs []docVersion) string {
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].csID != "" {
			return vs[i].csID
		}
	}
	return ""
}

// firstSeen is when the observer first read a version with status.
func firstSeen(vs []docVersion, status string) time.Time {
	for _, v := range vs {
		if v.status == status {
			return v.seen
		}
	}
	return time.Time{}
}

// windowProblems make sure each fault window answered in CS's place.
func (e evidence) windowProblems() []string {
	var out []string
	for _, w := range e.windows {
		if e.windowAnswered[w.fault] == 0 {
			out = append(out, fmt.Sprintf("chaos: the %s window (%s at %s) answered no request in CS's place", w.fault, w.length, w.at))
		}
	}
	return out
}

// windowAnswers counts the requests each fault of proxy answered.
func windowAnswers(p *csfaults.Proxy) map[csfaults.Fault]int64 {
	return map[csfaults.Fault]int64{csfaults.Misrouted: p.AnsweredBy(csfaults.Misrouted), csfaults.Gateway: p.AnsweredBy(csfaults.Gateway)}
}
