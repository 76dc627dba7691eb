package cosmos_test

import (
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
	"github.com/hcpops/hcpops/harness/store/storetest"
)

// TestContract runs the shared store suite against the local Cosmos test
// server in real time: the server keeps its own wall clock (its _ts, its
// TTL sweeper), so Advance sleeps, about 5s in all. It is the real stack's
// check of what the memory and embedded stores hold on a manual clock.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		return storetest.Harness{Store: cosmostest.NewStore(t), Advance: time.Sleep,
			Foreign: func(t *testing.T) store.Store { return cosmostest.NewStore(t) }}
	})
}
