package dst

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// Fault kinds: what stands between hcpops and its dependencies in a
// window of a run.
const (
	faultMisroute    = "misroute"     // CS's own 404s and empty lists (a replica reading the wrong place)
	faultGateway     = "gateway"      // a gateway's 404/502 bodies
	faultStorm       = "storm"        // 429, 503, 500 with nothing of CS's
	faultHang        = "hang"         // no answer until the caller gives up
	faultLatency     = "latency"      // every answer late
	faultOtherObject = "other-object" // an answer cache keyed without the id
	faultSlowAccept  = "slow-accept"  // a POST lands late, past the client's timeout at times
	faultLostDelete  = "lost-delete"  // a DELETE that never reaches CS
	faultStore       = "store"        // the store answers 429/503
	faultNotify      = "notify"       // ARM's notification endpoint refuses, fails or hangs
)

var csFaultKinds = []string{faultMisroute, faultGateway, faultStorm, faultHang, faultLatency, faultOtherObject,
	faultSlowAccept, faultLostDelete}

// Scopes of a CS fault: which objects' routes it answers for.
const (
	scopeAll          = "all"
	scopeClusters     = "clusters"
	scopeNodePools    = "node_pools"
	scopeExternalAuth = "external_auths"
)

// window is one fault over a span of the run.
type window struct {
	kind     string
	scope    string
	share    float64 // of the requests in scope
	deletes  bool    // a misroute answers DELETEs too
	latency  time.Duration
	mode     string // notify: refuse, fail, hang
	from, to time.Time
}

func (w window) String() string {
	s := fmt.Sprintf("%s scope=%s share=%.2f %s..%s", w.kind, w.scope, w.share, w.from.Format("15:04:05"), w.to.Format("15:04:05"))
	if w.deletes {
		s += " deletes"
	}
	if w.latency > 0 {
		s += " latency=" + w.latency.String()
	}
	if w.mode != "" {
		s += " mode=" + w.mode
	}
	return s
}

// faults holds a run's windows and draws, with their own random stream,
// whether a request in scope is answered by one.
type faults struct {
	mu      sync.Mutex
	rng     *rand.Rand
	windows []window
	healed  bool
	tr      *trace // debug: draws as steps
}

// planFaults draws the windows of a run of length d starting at start.
func planFaults(rng *rand.Rand, start time.Time, d time.Duration, intensity float64) *faults {
	f := &faults{rng: rng}
	n := int(float64(rng.IntN(7)) * intensity)
	for range n {
		from := start.Add(time.Duration(rng.Int64N(int64(d))))
		length := time.Duration(10+rng.IntN(60*20)) * time.Second
		if rng.IntN(8) == 0 {
			length = d // one that outlasts every hold
		}
		w := window{from: from, to: from.Add(length), share: []float64{0.33, 0.5, 1, 1}[rng.IntN(4)],
			scope: []string{scopeAll, scopeAll, scopeClusters, scopeNodePools, scopeExternalAuth}[rng.IntN(5)]}
		switch rng.IntN(12) {
		case 0, 1:
			w.kind = faultMisroute
			w.deletes = rng.IntN(3) == 0
		case 2:
			w.kind = faultGateway
		case 3:
			w.kind = faultStorm
		case 4:
			w.kind = faultHang
			w.share = min(w.share, 0.5)
		case 5:
			w.kind, w.latency = faultLatency, time.Duration(1+rng.Int64N(int64(20*time.Second)))
		case 6:
			w.kind = faultOtherObject
		case 7:
			w.kind, w.latency = faultSlowAccept, 5*time.Second+time.Duration(rng.Int64N(int64(50*time.Second)))
			w.scope = scopeAll
		case 8:
			w.kind = faultLostDelete
		case 9:
			w.kind, w.scope = faultStore, scopeAll
			w.share = []float64{0.1, 0.3, 1}[rng.IntN(3)]
		default:
			w.kind, w.scope = faultNotify, scopeAll
			w.mode = []string{"refuse", "fail", "hang"}[rng.IntN(3)]
		}
		f.windows = append(f.windows, w)
	}
	return f
}

// heal ends every window: what a run's last stretch runs under.
func (f *faults) heal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.healed = true
}

// active is the first window of kind open now whose scope holds path
// and whose share draws this request.
func (f *faults) active(kind, path string) *window {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.healed {
		return nil
	}
	for i := range f.windows {
		w := &f.windows[i]
		if w.kind != kind || now.Before(w.from) || !now.Before(w.to) || !inScope(w.scope, path) {
			continue
		}
		if w.share >= 1 {
			return w
		}
		x := f.rng.Float64()
		if f.tr != nil {
			f.tr.add(fmt.Sprintf("draw %s %s %.4f", kind, path, x))
		}
		if x < w.share {
			return w
		}
	}
	return nil
}

// cs is the window that answers req, if any: the first CS kind open now
// that draws it.
func (f *faults) cs(req *http.Request) *window {
	for _, k := range csFaultKinds {
		if w := f.active(k, req.URL.Path); w != nil {
			if k == faultSlowAccept && req.Method != http.MethodPost || k == faultLostDelete && req.Method != http.MethodDelete {
				continue
			}
			return w
		}
	}
	return nil
}

// draw is a number below n from the fault stream.
func (f *faults) draw(n int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.IntN(n)
}

func inScope(scope, path string) bool {
	switch scope {
	case scopeNodePools:
		return strings.Contains(path, "/node_pools")
	case scopeExternalAuth:
		return strings.Contains(path, "/external_auth")
	case scopeClusters:
		return strings.HasPrefix(path, cs.ClustersPath) && !strings.Contains(path, "/node_pools") &&
			!strings.Contains(path, "/external_auth")
	}
	return true
}
