package simulator

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"sync"
	"time"
)

// Faults are per-request fault probabilities for the CS API.
type Faults struct {
	ErrorRate    float64 `json:"error_rate"`    // answer ErrorStatus
	ErrorStatus  int     `json:"error_status"`  // a 5xx; 500 when zero
	ThrottleRate float64 `json:"throttle_rate"` // answer 429
	HangRate     float64 `json:"hang_rate"`     // never answer; wait for the client to give up
}

func (f Faults) validate() error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"error_rate", f.ErrorRate}, {"throttle_rate", f.ThrottleRate}, {"hang_rate", f.HangRate}} {
		if r.v < 0 || r.v > 1 {
			return fmt.Errorf("fault %s: %v is outside [0,1]", r.name, r.v)
		}
	}
	if sum := f.ErrorRate + f.ThrottleRate + f.HangRate; sum > 1 {
		return fmt.Errorf("fault rates add up to %v, more than 1", sum)
	}
	if f.ErrorStatus != 0 && (f.ErrorStatus < 500 || f.ErrorStatus > 599) {
		return fmt.Errorf("fault error_status: %d is not a 5xx status", f.ErrorStatus)
	}
	return nil
}

// Latency is added to every CS API request: Fixed plus a uniform draw in
// [0, Jitter).
type Latency struct {
	Fixed  time.Duration
	Jitter time.Duration
}

// SetFaults replaces the fault rates.
func (s *Simulator) SetFaults(f Faults) error {
	if err := f.validate(); err != nil {
		return err
	}
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.faults = f
	return nil
}

// Faults returns the fault rates.
func (s *Simulator) Faults() Faults {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	return s.faults
}

// FailNext makes the next n CS API requests answer status (429 or 5xx),
// for tests that need an exact number of failures.
func (s *Simulator) FailNext(n, status int) error {
	if status != http.StatusTooManyRequests && (status < 500 || status > 599) {
		return fmt.Errorf("fail next: status %d is neither 429 nor 5xx", status)
	}
	if n < 0 {
		return fmt.Errorf("fail next: count %d is negative", n)
	}
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	for range n {
		s.next = append(s.next, status)
	}
	return nil
}

// SetLatency replaces the added latency.
func (s *Simulator) SetLatency(l Latency) error {
	if l.Fixed < 0 || l.Jitter < 0 {
		return fmt.Errorf("latency: fixed %s and jitter %s must not be negative", l.Fixed, l.Jitter)
	}
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.latency = l
	return nil
}

// Latency returns the added latency.
func (s *Simulator) Latency() Latency {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	return s.latency
}

const (
	faultNone = 0
	faultHang = -1
)

// pickFault returns faultNone, faultHang or a status to answer.
func (s *Simulator) pickFault() int {
	s.faultMu.Lock()
	if len(s.next) > 0 {
		status := s.next[0]
		s.next = s.next[1:]
		s.faultMu.Unlock()
		return status
	}
	f := s.faults
	s.faultMu.Unlock()
	if f.ErrorRate+f.ThrottleRate+f.HangRate == 0 {
		return faultNone
	}
	x := s.float()
	switch {
	case x < f.ErrorRate:
		if f.ErrorStatus == 0 {
			return http.StatusInternalServerError
		}
		return f.ErrorStatus
	case x < f.ErrorRate+f.ThrottleRate:
		return http.StatusTooManyRequests
	case x < f.ErrorRate+f.ThrottleRate+f.HangRate:
		return faultHang
	}
	return faultNone
}

// delay sleeps for the configured latency; false means the client gave up.
func (s *Simulator) delay(ctx context.Context) bool {
	l := s.Latency()
	d := l.Fixed
	if l.Jitter > 0 {
		d += time.Duration(s.float() * float64(l.Jitter))
	}
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return true
	}
}

// Ledger counts the CS API requests the simulator received, so tests can
// prove, for example, that a redelivered dispatch did not POST twice.
// Pattern keys are "METHOD /route/{wildcard}" as registered (unmatched
// requests count under "METHOD (unmatched)"); path keys are "METHOD
// /exact/path". Requests answered by an injected fault count in both and
// also in Faults.
//
// Lists counts the list requests that reached their handler, by pattern,
// with the ids their search named: what batched polling is judged by.
type Ledger struct {
	ByPattern map[string]int       `json:"by_pattern"`
	ByPath    map[string]int       `json:"by_path"`
	Faults    map[string]int       `json:"faults"`
	Lists     map[string]ListCalls `json:"lists"`
}

// ListCalls is what one list route saw.
type ListCalls struct {
	Calls int `json:"calls"`
	// IDs sums the distinct ids each call's search named; MaxIDs is the
	// most any one call named.
	IDs    int `json:"ids"`
	MaxIDs int `json:"max_ids"`
}

// ListCalls returns the list calls of every route together.
func (l Ledger) ListCalls() ListCalls {
	var out ListCalls
	for _, c := range l.Lists {
		out.Calls += c.Calls
		out.IDs += c.IDs
		out.MaxIDs = max(out.MaxIDs, c.MaxIDs)
	}
	return out
}

// Count returns the requests for method on a route pattern.
func (l Ledger) Count(method, pattern string) int { return l.ByPattern[method+" "+pattern] }

// CountPath returns the requests for method on an exact path.
func (l Ledger) CountPath(method, path string) int { return l.ByPath[method+" "+path] }

// Total returns every request counted.
func (l Ledger) Total() int {
	n := 0
	for _, v := range l.ByPattern {
		n += v
	}
	return n
}

type ledger struct {
	mu sync.Mutex
	l  Ledger
}

func newLedgerCounts() Ledger {
	return Ledger{ByPattern: map[string]int{}, ByPath: map[string]int{}, Faults: map[string]int{},
		Lists: map[string]ListCalls{}}
}

func ledgerKey(method, pattern string) string {
	if pattern == "" || pattern == "/" {
		return method + " (unmatched)"
	}
	return pattern
}

func (l *ledger) record(patternKey, pathKey string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.l.ByPattern[patternKey]++
	l.l.ByPath[pathKey]++
}

func (l *ledger) fault(patternKey string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.l.Faults[patternKey]++
}

// list records a list call whose search named ids distinct ids.
func (l *ledger) list(r *http.Request, ids int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.l.Lists[r.Pattern]
	c.Calls++
	c.IDs += ids
	c.MaxIDs = max(c.MaxIDs, ids)
	l.l.Lists[r.Pattern] = c
}

// Ledger returns a copy of the request counts.
func (s *Simulator) Ledger() Ledger {
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	return Ledger{
		ByPattern: maps.Clone(s.ledger.l.ByPattern),
		ByPath:    maps.Clone(s.ledger.l.ByPath),
		Faults:    maps.Clone(s.ledger.l.Faults),
		Lists:     maps.Clone(s.ledger.l.Lists),
	}
}

// ResetLedger clears the request counts.
func (s *Simulator) ResetLedger() {
	s.ledger.mu.Lock()
	defer s.ledger.mu.Unlock()
	s.ledger.l = newLedgerCounts()
}
