package lifecycle

import (
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/store"
)

// resends counts, per delete operation, the DELETEs sent again to an
// object CS shows alive (deletion.resend). In memory: a restart may send
// maxResends more, which CS takes as the same request.
type resends struct {
	mu   sync.Mutex
	last map[store.DocRef]resendCount
}

type resendCount struct {
	n  int
	at time.Time
}

// resendForget drops a count not touched for this long: its delete ended.
const resendForget = 24 * time.Hour

func newResends() *resends { return &resends{last: map[store.DocRef]resendCount{}} }

// next counts an attempt for ref at now, unless the last was less than
// spacing ago (again false); n is the attempt's number.
func (r *resends) next(ref store.DocRef, now time.Time, spacing time.Duration) (n int, again bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, c := range r.last {
		if now.Sub(c.at) > resendForget {
			delete(r.last, k)
		}
	}
	c := r.last[ref]
	if c.n > 0 && now.Sub(c.at) < spacing {
		return c.n, false
	}
	c.n++
	c.at = now
	r.last[ref] = c
	return c.n, true
}
