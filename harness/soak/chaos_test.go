package soak

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/harness/simulator"
)

type countingKiller struct{ n atomic.Int32 }

func (k *countingKiller) Restart() { k.n.Add(1) }

func TestChaosKillsAndSpikes(t *testing.T) {
	sim := simulator.New()
	defer sim.Close()
	k := &countingKiller{}
	c := &chaos{handler: k, sim: sim, hangRate: 0.02, kills: []time.Duration{20 * time.Millisecond, 40 * time.Millisecond},
		spikeEvery: 5 * time.Millisecond, spikeFor: 5 * time.Millisecond, logger: slog.New(slog.DiscardHandler)}
	must(t, c.arm())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.run(ctx, time.Now())
	}()
	statuses, spiked := map[int]bool{}, false
	// The chaos schedule is the soak's wall clock (kills at 20 and 40ms,
	// spikes every 5ms); the test watches its effects as they come and go.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		f := sim.Faults()
		statuses[f.ErrorStatus] = true
		if f.ErrorRate != csErrorRate || f.ThrottleRate != csThrottleRate || f.HangRate != 0.02 {
			t.Fatalf("faults %+v, want %v errors, %v throttles and 0.02 hangs", f, csErrorRate, csThrottleRate)
		}
		spiked = spiked || sim.Latency() == spikeLatency
		if k.n.Load() == 2 && statuses[500] && statuses[503] && spiked {
			break
		}
	}
	cancel()
	<-done
	if n := k.n.Load(); n != 2 {
		t.Errorf("killed %d times, want 2", n)
	}
	if !statuses[500] || !statuses[503] || !spiked {
		t.Errorf("error statuses seen %v, spike seen %v; want 500, 503 and a spike", statuses, spiked)
	}
	if l := sim.Latency(); l != baseLatency {
		t.Errorf("latency after the run = %+v, want the base %+v", l, baseLatency)
	}
	if killed, spikes := c.counts(); killed != 2 || spikes < 2 {
		t.Errorf("counts: %d kills, %d spikes", killed, spikes)
	}
}
