package soak

import (
	"fmt"
	"time"

	"github.com/hcpops/hcpops/harness/csfaults"
)

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
