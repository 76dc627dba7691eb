package soak

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hcpops/hcpops/harness/simulator"
)

// Fault levels of the Clusters Service simulator during a run.
const (
	csErrorRate    = 0.10
	csThrottleRate = 0.05
)

// Latency of every CS request, outside and inside a spike.
var (
	baseLatency  = simulator.Latency{Fixed: 2 * time.Millisecond, Jitter: 10 * time.Millisecond}
	spikeLatency = simulator.Latency{Fixed: 300 * time.Millisecond, Jitter: 900 * time.Millisecond}
)

// killer stops the handler abruptly; *triggerhost.Supervisor is one when
// its worker's stop is a SIGKILL.
type killer interface{ Restart() }

// chaos kills the handler at fixed points of the run and gives Clusters
// Service latency spikes, alternating the status of its injected errors
// between 500 and 503 (the ocm client retries only the latter); hangRate of
// CS requests never answer.
type chaos struct {
	handler    killer
	sim        *simulator.Simulator
	hangRate   float64
	kills      []time.Duration // offsets from the start of the run
	spikeEvery time.Duration
	spikeFor   time.Duration
	logger     *slog.Logger

	mu     sync.Mutex
	killed int
	spikes int
}

func (c *chaos) faults(status int) simulator.Faults {
	return simulator.Faults{ErrorRate: csErrorRate, ErrorStatus: status, ThrottleRate: csThrottleRate, HangRate: c.hangRate}
}

// arm turns the simulator's faults on, from the first request.
func (c *chaos) arm() error {
	return errors.Join(c.sim.SetFaults(c.faults(http.StatusInternalServerError)), c.sim.SetLatency(baseLatency))
}

// run acts until ctx is done; the kills stop after the last offset, the
// spikes go on.
func (c *chaos) run(ctx context.Context, start time.Time) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer func() { _ = c.sim.SetLatency(baseLatency) }()
	wg.Go(func() {
		for _, at := range c.kills {
			sleep(ctx, time.Until(start.Add(at)))
			if ctx.Err() != nil {
				return
			}
			c.logger.InfoContext(ctx, "soak: killing the handler", "after", time.Since(start).Round(time.Millisecond))
			c.handler.Restart()
			c.mu.Lock()
			c.killed++
			c.mu.Unlock()
		}
	})
	status := http.StatusInternalServerError
	for ctx.Err() == nil {
		sleep(ctx, c.spikeEvery)
		if ctx.Err() != nil {
			return
		}
		status = 1003 - status // 500 <-> 503
		if err := c.sim.SetFaults(c.faults(status)); err != nil {
			c.logger.ErrorContext(ctx, "soak: setting CS faults", "error", err)
		}
		_ = c.sim.SetLatency(spikeLatency)
		c.mu.Lock()
		c.spikes++
		c.mu.Unlock()
		sleep(ctx, c.spikeFor)
		_ = c.sim.SetLatency(baseLatency)
	}
}

func (c *chaos) counts() (killed, spikes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.killed, c.spikes
}

// killTimes spreads n kills over the middle of window.
func killTimes(n int, window time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = window * time.Duration(i+1) / time.Duration(n+1)
	}
	return out
}
