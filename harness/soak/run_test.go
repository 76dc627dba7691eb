package soak

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/functions/operationrequest"
)

func TestSettleGoroutinesReportsALeak(t *testing.T) {
	before := quietGoroutines()
	release := make(chan struct{})
	go leakyWorker(release)
	n, stacks := settleGoroutines(before, 50*time.Millisecond)
	if n <= before || !strings.Contains(stacks, "leakyWorker") {
		t.Errorf("with a goroutine left behind: count %d (before %d), stacks mention it: %v", n, before, strings.Contains(stacks, "leakyWorker"))
	}
	close(release)
	if n, stacks := settleGoroutines(before, 5*time.Second); stacks != "" {
		t.Errorf("after it ended: count %d (before %d), stacks reported", n, before)
	}
}

func leakyWorker(release chan struct{}) { <-release }

// quietGoroutines waits until goroutines left by earlier tests have wound
// down (the count holds for 200 ms), so a leak is not masked by one of them
// exiting during the check.
//
// What it measures is the process's goroutines over real time, so it
// samples them.
func quietGoroutines() int {
	n, stable := runtime.NumGoroutine(), 0
	for deadline := time.Now().Add(5 * time.Second); stable < 10 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		if m := runtime.NumGoroutine(); m == n {
			stable++
		} else {
			n, stable = m, 0
		}
	}
	return n
}

func TestPollStatusAsksAgainAfter5xx(t *testing.T) {
	var calls atomic.Int32
	answers := map[string][]int{"/flaky": {500, 503, 200}, "/down": {500, 500, 500, 500, 500, 500}, "/gone": {404, 200}}
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		mu.Lock()
		q := answers[r.URL.Path]
		status := q[0]
		answers[r.URL.Path] = q[1:]
		mu.Unlock()
		if r.Header.Get(operationrequest.HeaderHomeTenantID) != soakTenantID {
			status = http.StatusForbidden
		}
		w.WriteHeader(status)
		if status == http.StatusOK {
			fmt.Fprint(w, `{"status":"Succeeded"}`)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct{ path, want string }{
		{"/flaky", "Succeeded"}, {"/down", "HTTP 500: "}, {"/gone", "HTTP 404: "},
	} {
		if got := pollStatus(context.Background(), srv.Client(), srv.URL+tc.path); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.path, got, tc.want)
		}
	}
	if n := calls.Load(); n != 3+statusAttempts+1 {
		t.Errorf("%d requests, want %d", n, 3+statusAttempts+1)
	}
}
