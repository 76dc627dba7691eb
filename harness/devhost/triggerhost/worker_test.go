package triggerhost

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/events"
)

func TestHandlerRestartMidInvocationRedeliversTheBatch(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	defer s.Close()
	th := newTestHandler()
	blocked := make(chan struct{})
	var calls atomic.Int32
	th.setRespond(func(recorded) (int, string) {
		if calls.Add(1) == 1 {
			<-blocked // held until the handler is killed under it
		}
		return 200, `{"Outputs":{},"Logs":[],"ReturnValue":null}`
	})
	retry := `{"strategy":"fixedDelay","maxRetryCount":3,"delayInterval":"00:00:00.01"}`
	app := writeApp(t, hostJSON, map[string]string{"dispatch": feedFunctionWithRetry("", retry)})
	h := startHost(t, Config{App: app, Worker: th.worker(), StateDir: dir, Feed: s})
	createDocs(t, s, "x")

	first := th.next(t)
	h.Supervisor().Restart()
	awaitStarts(t, h.Supervisor(), 2)
	second := th.next(t)
	close(blocked)
	if got := batchIDs(t, second); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("after the restart came %v, want the interrupted batch [x]", got)
	}
	_, meta := second.envelope(t)
	var rc struct{ RetryCount int }
	must(t, json.Unmarshal(meta["RetryContext"], &rc))
	if rc.RetryCount != 1 {
		t.Errorf("redelivery RetryCount = %d, want 1", rc.RetryCount)
	}
	if first.Header.Get(events.HeaderInvocationID) == second.Header.Get(events.HeaderInvocationID) {
		t.Error("the retry reused the invocation id")
	}
	if n := h.Supervisor().Starts(); n != 2 {
		t.Errorf("handler started %d times, want 2", n)
	}
}

func TestSupervisorRestartsACrashedHandler(t *testing.T) {
	th := newTestHandler()
	var runs atomic.Int32
	inner := th.worker()
	crashing := WorkerFunc(func(ctx context.Context, port int) error {
		if runs.Add(1) == 1 {
			return errors.New("exit status 2")
		}
		return inner.Run(ctx, port)
	})
	sup, err := NewSupervisor(crashing, 0, nil)
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sup.Run(ctx) }()
	readyCtx, readyCancel := context.WithTimeout(ctx, 5*time.Second)
	defer readyCancel()
	if err := sup.Ready(readyCtx); err != nil {
		t.Fatal(err)
	}
	if sup.Starts() != 2 {
		t.Errorf("starts = %d, want 2 (one crash, one restart)", sup.Starts())
	}
	if err := sup.Run(ctx); err == nil {
		t.Error("a second Run on the same supervisor succeeded")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel = %v", err)
	}
}

// awaitStarts waits, generously, for the supervisor's nth start.
func awaitStarts(t *testing.T, s *Supervisor, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.AwaitStarts(ctx, n); err != nil {
		t.Fatal(err)
	}
}
