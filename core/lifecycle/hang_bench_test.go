package lifecycle

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// BenchmarkTickHungHead measures hung CS objects (0, C and 2C of them) at
// the head of the stream, C poll workers, a CS timeout of 2s and a tick
// budget of 8s, the settings of the outside run that found the hang. Each run makes 2C healthy
// clusters ready, ticks (tick1: the sick ones are met for the first
// time), then makes 2C fresh clusters ready and ticks again 10s later, the
// timer's period (tick2: the sick ones are due again and retried after
// the healthy ones). It reports each tick's wall time, when its last
// status write landed (only healthy operations write) and how many of its
// healthy operations advanced. Run with -benchtime=1x:
//
//	go test -run '^$' -bench TickHungHead -benchtime=1x ./core/lifecycle/
func BenchmarkTickHungHead(b *testing.B) {
	const timeout, budget, period = 2 * time.Second, 8 * time.Second, 10 * time.Second
	for _, c := range []int{2, 32} {
		for _, hung := range []int{0, c, 2 * c} {
			b.Run(fmt.Sprintf("C=%d/hung=%d", c, hung), func(b *testing.B) {
				var wall, done [2]time.Duration
				var advanced [2]int
				healthy := 2 * c
				for range b.N {
					e := newEnv(b, func(cfg *Config) { cfg.PollConcurrency = c })
					d := testDurations()
					d.ClusterValidating, d.ClusterPending, d.ClusterInstalling = time.Second, time.Second, time.Second
					e.sim.SetDurations(d)
					p := e.throughProxy(b, timeout)
					var mu sync.Mutex
					var lastWrite time.Time
					e.store.setHook(func(_ context.Context, phase hookPhase, _ write) error {
						if phase == afterWrite {
							mu.Lock()
							lastWrite = time.Now()
							mu.Unlock()
						}
						return nil
					})
					names, ids := e.dispatchedClustersAfter(b, "c", hung+healthy, period)
					for _, n := range names[:hung] {
						p.Hang(ids[n])
					}
					batches := [][]string{names[hung:], nil}
					for i := range 2 {
						if i == 1 {
							batches[1], _ = e.dispatchedClustersAfter(b, "d", healthy, period)
						}
						start := time.Now()
						e.tickWithin(b, budget)
						wall[i] += time.Since(start)
						mu.Lock()
						if lastWrite.After(start) {
							done[i] += lastWrite.Sub(start)
						}
						mu.Unlock()
						for _, n := range batches[i] {
							if e.op(b, n).Properties.Status == arm.ProvisioningStateSucceeded {
								advanced[i]++
							}
						}
					}
				}
				for i := range 2 {
					b.ReportMetric(float64(wall[i].Milliseconds())/float64(b.N), fmt.Sprintf("tick%d-ms", i+1))
					b.ReportMetric(float64(done[i].Milliseconds())/float64(b.N), fmt.Sprintf("tick%d-lastwrite-ms", i+1))
					b.ReportMetric(float64(advanced[i])/float64(b.N), fmt.Sprintf("tick%d-advanced/%d", i+1, healthy))
				}
			})
		}
	}
}
