package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hcpops/hcpops/core/store"
)

const (
	contenders = 32
	increments = 10 // per contender
)

// testConcurrentIncrements is optimistic concurrency under contention: every
// goroutine read-modify-writes one document with If-Match and retries on
// 412, so not one increment may be lost.
func testConcurrentIncrements(t *testing.T, h Harness) {
	ctx := context.Background()
	s, sub := h.Store, newSubscription()
	cluster := clusterDoc(sub, "rg", "contended")
	mustCreate(t, s, sub, cluster)

	var retries atomic.Int64
	errs := make(chan error, contenders)
	var wg sync.WaitGroup
	for range contenders {
		wg.Go(func() {
			for range increments {
				if err := increment(ctx, s, sub, cluster.ID(), &retries); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, _ := decode(t, mustGet(t, s, sub, cluster.ID()).Body).lookup("properties.cosmosMetadata.instanceVersion")
	if want := float64(1 + contenders*increments); got != want {
		t.Errorf("instanceVersion = %v after %d increments from 1, want %v", got, contenders*increments, want)
	}
	t.Logf("%d increments took %d retries on 412", contenders*increments, retries.Load())
}

// increment bumps properties.cosmosMetadata.instanceVersion by one, as
// ARO-HCP's PrepareForReplace does, retrying until its write wins.
func increment(ctx context.Context, s store.Store, pk, id string, retries *atomic.Int64) error {
	for attempt := 0; attempt < 10000; attempt++ {
		item, err := s.Get(ctx, pk, id)
		if err != nil {
			return fmt.Errorf("reading %s: %w", id, err)
		}
		var d doc
		if err := jsonUnmarshal(item.Body, &d); err != nil {
			return err
		}
		v, ok := d.lookup("properties.cosmosMetadata.instanceVersion")
		n, isNum := v.(float64)
		if !ok || !isNum {
			return fmt.Errorf("instanceVersion is %v", v)
		}
		d.Set("properties.cosmosMetadata.instanceVersion", n+1)
		body, err := jsonMarshal(d)
		if err != nil {
			return err
		}
		_, err = s.Replace(ctx, pk, id, body, item.ETag)
		if errors.Is(err, store.ErrPreconditionFailed) {
			retries.Add(1)
			continue
		}
		if err != nil {
			return fmt.Errorf("replacing %s: %w", id, err)
		}
		return nil
	}
	return fmt.Errorf("increment of %s never won", id)
}
