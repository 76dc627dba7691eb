package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/functions/operationrequest"
)

// settle waits until every operation seen is terminal with its
// notification delivered, or ctx ends.
func settle(ctx context.Context, obs *observer) {
	for ctx.Err() == nil {
		if done, _ := obs.settled(); done {
			return
		}
		sleep(ctx, observeEvery)
	}
}

// pollStatuses asks for every accepted operation's status the way ARM
// does, through the host's front door and the handler, a few at a time.
func pollStatuses(ctx context.Context, front string, subs []*submitted) map[string]string {
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	out := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan *submitted)
	for range statusPollers {
		wg.Go(func() {
			for s := range work {
				// ARM always sends an api-version; the status route requires one.
				st := pollStatus(ctx, client, front+s.statusPath+"?api-version=2024-06-10-preview")
				mu.Lock()
				out[s.label] = st
				mu.Unlock()
			}
		})
	}
	for _, s := range subs {
		if s.statusPath != "" && ctx.Err() == nil {
			work <- s
		}
	}
	close(work)
	wg.Wait()
	return out
}

// statusPollers is how many status polls run at once at the end of a run,
// within statusBudget in all.
const (
	statusPollers = 8
	statusBudget  = time.Minute
)

// pollStatus asks for one status as ARM does: a 5xx or a failed request
// (the store behind the handler is throttled and refuses on purpose) is
// asked again, a few times.
func pollStatus(ctx context.Context, client *http.Client, url string) string {
	var st string
	for attempt := range statusAttempts {
		var retry bool
		st, retry = pollStatusOnce(ctx, client, url)
		if !retry || attempt == statusAttempts-1 || !sleep(ctx, statusRetryPause) {
			break
		}
	}
	return st
}

// How often and how far apart a status poll is asked again.
const (
	statusAttempts   = 5
	statusRetryPause = 200 * time.Millisecond
)

func pollStatusOnce(ctx context.Context, client *http.Client, url string) (status string, retry bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err.Error(), false
	}
	// ARM passes the caller's identity; only the operation's own caller
	// may see it.
	req.Header.Set(operationrequest.HeaderHomeTenantID, soakTenantID)
	req.Header.Set(operationrequest.HeaderClientObjectID, soakClientID)
	resp, err := client.Do(req)
	if err != nil {
		return err.Error(), true
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err.Error(), true
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("HTTP %d: %s", resp.StatusCode, excerpt(raw)), resp.StatusCode >= 500
	}
	var body arm.OperationStatus
	if err := json.Unmarshal(raw, &body); err != nil {
		return "unreadable status body: " + excerpt(raw), false
	}
	return string(body.Status), false
}

// readFinals reads every document written during the run, as it is now.
func readFinals(ctx context.Context, st store.Store, writes map[docKey][]write) (map[docKey]finalRead, error) {
	keys := sortedKeys(writes)
	out := make(map[docKey]finalRead, len(keys))
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	work := make(chan docKey)
	for range 16 {
		wg.Go(func() {
			for k := range work {
				it, err := st.Get(ctx, k.pk, k.id)
				var f finalRead
				switch {
				case errors.Is(err, store.ErrNotFound):
				case err != nil:
					errs <- fmt.Errorf("hcpops soak: reading %s at the end: %w", k, err)
					continue
				default:
					d, err := readVersion(it.Body)
					if err != nil {
						errs <- err
						continue
					}
					f = finalRead{found: true, doc: d}
				}
				mu.Lock()
				out[k] = f
				mu.Unlock()
			}
		})
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	return out, nil
}

// settleGoroutines waits up to grace for the goroutine count to fall back
// to before; it returns the count and, if it did not, the stacks.
func settleGoroutines(before int, grace time.Duration) (int, string) {
	deadline := time.Now().Add(grace)
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			return n, ""
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			return n, string(buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
