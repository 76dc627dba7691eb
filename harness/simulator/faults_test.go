package simulator

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

// TestFaultRates drives the handler directly (no network) to check the
// seeded fault mix and that faults are counted per route.
func TestFaultRates(t *testing.T) {
	sim := New(WithClock(newFakeClock()), WithRandSource(rand.NewPCG(7, 7)))
	if err := sim.SetFaults(Faults{ErrorRate: 0.2, ErrorStatus: 503, ThrottleRate: 0.1}); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	counts := map[int]int{}
	for range n {
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, httptest.NewRequest("GET", clusterPath("x")+"/status", nil))
		counts[rec.Code]++
	}
	within := func(got int, frac float64) bool { return float64(got) > frac*n*0.8 && float64(got) < frac*n*1.2 }
	if !within(counts[503], 0.2) || !within(counts[429], 0.1) || !within(counts[404], 0.7) {
		t.Errorf("status counts = %v, want about 20%% 503, 10%% 429, 70%% 404", counts)
	}
	l := sim.Ledger()
	pattern := "/api/aro_hcp/v1alpha1/clusters/{id}/status"
	if l.Count("GET", pattern) != n || l.Faults["GET "+pattern] != counts[503]+counts[429] {
		t.Errorf("ledger = %d requests, %d faults; want %d and %d", l.Count("GET", pattern),
			l.Faults["GET "+pattern], n, counts[503]+counts[429])
	}
}

func TestFaultValidation(t *testing.T) {
	sim := New()
	bad := []Faults{
		{ErrorRate: -0.1}, {ThrottleRate: 1.1}, {ErrorRate: 0.6, HangRate: 0.6}, {ErrorRate: 0.1, ErrorStatus: 404},
	}
	for _, f := range bad {
		if err := sim.SetFaults(f); err == nil {
			t.Errorf("SetFaults(%+v) = nil, want an error", f)
		}
	}
	if err := sim.FailNext(1, 404); err == nil {
		t.Error("FailNext(1, 404) = nil, want an error")
	}
	if err := sim.SetLatency(Latency{Fixed: -time.Second}); err == nil {
		t.Error("negative latency accepted")
	}
}

func TestFailNextAndLedger(t *testing.T) {
	s := startSim(t)
	if err := s.FailNext(2, 503); err != nil {
		t.Fatal(err)
	}
	var got []int
	for range 3 {
		got = append(got, s.do(t, "GET", clusterPath("x"), "").status)
	}
	if got[0] != 503 || got[1] != 503 || got[2] != 404 {
		t.Errorf("statuses = %v, want [503 503 404]", got)
	}
	l := s.Ledger()
	if l.Count("GET", "/api/aro_hcp/v1alpha1/clusters/{id}") != 3 || l.CountPath("GET", clusterPath("x")) != 3 ||
		l.Faults["GET /api/aro_hcp/v1alpha1/clusters/{id}"] != 2 || l.Total() != 3 {
		t.Errorf("ledger = %+v", l)
	}
	s.do(t, "GET", "/nowhere", "")
	if s.Ledger().Count("GET", "(unmatched)") != 1 {
		t.Errorf("unmatched request not counted: %+v", s.Ledger())
	}
	s.ResetLedger()
	if s.Ledger().Total() != 0 {
		t.Errorf("ledger after reset = %+v", s.Ledger())
	}
}

// TestHangUntilClientGivesUp: a hung request ends when the client's
// context does, and Close releases any left.
func TestHangUntilClientGivesUp(t *testing.T) {
	s := startSim(t)
	if err := s.SetFaults(Faults{HangRate: 1}); err != nil {
		t.Fatal(err)
	}
	const key = "GET /api/aro_hcp/v1alpha1/clusters/{id}"
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+clusterPath("x"), nil)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("hung request answered %d", resp.StatusCode)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the client's deadline", err)
	}
	if f := s.Ledger().Faults[key]; f != 1 {
		t.Errorf("hang faults = %d, want 1", f)
	}
}

// TestCloseReleasesAHang: Close answers a request whose client would wait
// forever. In a synctest bubble, Wait returns once the request is parked
// in its hang, so Close cannot win a race with it.
func TestCloseReleasesAHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New()
		if err := s.SetFaults(Faults{HangRate: 1}); err != nil {
			t.Fatal(err)
		}
		done := make(chan int, 1)
		go func() {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest("GET", clusterPath("x"), nil))
			done <- rec.Code
		}()
		synctest.Wait()
		select {
		case code := <-done:
			t.Fatalf("the request answered %d before Close; it was not hanging", code)
		default:
		}
		if f := s.Ledger().Faults["GET /api/aro_hcp/v1alpha1/clusters/{id}"]; f != 1 {
			t.Errorf("hang faults = %d, want 1", f)
		}
		s.Close()
		if code := <-done; code != http.StatusServiceUnavailable {
			t.Errorf("released hung request answered %d, want 503", code)
		}
	})
}

// TestLatency: API requests wait at least the added latency; the admin
// API never does, however large it is.
func TestLatency(t *testing.T) {
	s := startSim(t)
	if err := s.SetLatency(Latency{Fixed: 30 * time.Millisecond, Jitter: 10 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := s.do(t, "GET", clusterPath("x"), "")
	if el := time.Since(start); r.status != 404 || el < 30*time.Millisecond {
		t.Errorf("status %d after %s, want 404 after at least 30ms", r.status, el)
	}
	if err := s.SetLatency(Latency{Fixed: time.Hour}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/_sim/ledger", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("admin request under an hour of latency: %v; latency must not apply to it", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("admin request answered %d", resp.StatusCode)
	}
}
