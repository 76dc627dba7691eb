package soak

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Kinds of store request the proxy disturbs, and the faults it injects.
const (
	cosmosRead    = "read"
	cosmosQuery   = "query"
	cosmosReplace = "replace"
	cosmosBatch   = "batch"

	faultThrottle    = "429"
	faultUnavailable = "503"
	faultTimeout     = "408"
	faultSlow        = "slow"
)

var (
	cosmosKinds      = []string{cosmosRead, cosmosQuery, cosmosReplace, cosmosBatch}
	cosmosFaultNames = []string{faultThrottle, faultUnavailable, faultTimeout, faultSlow}
)

// cosmosFaults disturbs the handlers' store requests the way a busy Cosmos
// account does: throttling (429 with x-ms-retry-after-ms, the fault a
// production RP meets most), 503 and 408, and slow answers. A refused
// request never reaches the server, so nothing it asked for is written;
// a slow one is delayed, then served.
type cosmosFaults struct {
	throttle, unavailable, timeout, slow float64 // per request
	slowFor                              time.Duration

	mu     sync.Mutex
	rng    *rand.Rand
	seen   map[string]int            // requests by kind
	counts map[string]map[string]int // kind -> fault -> requests
}

// everyFault: the 10th, 20th, 30th and 40th request of each kind get the
// four faults in turn whatever the dice say, so a short run meets each
// fault on each kind and its checks never depend on luck.
const everyFault = 10

// Default rates of the soak's Cosmos faults.
func newCosmosFaults(seed uint64) *cosmosFaults {
	return &cosmosFaults{throttle: 0.03, unavailable: 0.01, timeout: 0.01, slow: 0.02, slowFor: 500 * time.Millisecond,
		rng: rand.New(rand.NewPCG(seed, 3)), seen: map[string]int{}, counts: map[string]map[string]int{}}
}

// cosmosKind names the kind of a documents request, "" for any other.
func cosmosKind(r *http.Request, docs docsRequest, batch bool) string {
	switch {
	case r.Method == http.MethodGet && docs.id != "":
		return cosmosRead
	case r.Method == http.MethodPut && docs.id != "":
		return cosmosReplace
	case r.Method == http.MethodPost && docs.id == "" && batch:
		return cosmosBatch
	case r.Method == http.MethodPost && docs.id == "" && isQuery(r.Header):
		return cosmosQuery
	}
	return ""
}

// draw picks the fault for one request of kind, "" for none, and how long
// a slow one waits or a throttled one is told to wait.
func (f *cosmosFaults) draw(kind string) (string, time.Duration) {
	if f == nil || kind == "" {
		return "", 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen[kind]++
	rates := map[string]float64{faultThrottle: f.throttle, faultUnavailable: f.unavailable, faultTimeout: f.timeout, faultSlow: f.slow}
	fault, x := "", f.rng.Float64()
	for _, k := range cosmosFaultNames {
		if x < rates[k] {
			fault = k
			break
		}
		x -= rates[k]
	}
	if n := f.seen[kind]; n%everyFault == 0 && n/everyFault <= len(cosmosFaultNames) && rates[cosmosFaultNames[n/everyFault-1]] > 0 {
		fault = cosmosFaultNames[n/everyFault-1]
	}
	var wait time.Duration
	switch fault {
	case "":
		return "", 0
	case faultThrottle:
		wait = time.Duration(20+f.rng.IntN(180)) * time.Millisecond
	case faultSlow:
		wait = time.Duration(f.rng.Int64N(int64(f.slowFor)))
	}
	if f.counts[kind] == nil {
		f.counts[kind] = map[string]int{}
	}
	f.counts[kind][fault]++
	return fault, wait
}

// refuse answers a request with the fault instead of serving it; false
// for a slow answer, which is then served.
func refuse(w http.ResponseWriter, fault string, wait time.Duration) bool {
	status, code := 0, ""
	switch fault {
	case faultThrottle:
		status, code = http.StatusTooManyRequests, "TooManyRequests"
		w.Header().Set("x-ms-retry-after-ms", strconv.FormatInt(wait.Milliseconds(), 10))
		w.Header().Set("x-ms-substatus", "3200")
	case faultUnavailable:
		status, code = http.StatusServiceUnavailable, "ServiceUnavailable"
	case faultTimeout:
		status, code = http.StatusRequestTimeout, "RequestTimeout"
	default:
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"code":%q,"message":"soak: injected %d"}`, code, status)
	return true
}

// snapshot copies the counts.
func (f *cosmosFaults) snapshot() map[string]map[string]int {
	out := map[string]map[string]int{}
	if f == nil {
		return out
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, m := range f.counts {
		out[k] = map[string]int{}
		for fault, n := range m {
			out[k][fault] = n
		}
	}
	return out
}
