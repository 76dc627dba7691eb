package triggerhost

import (
	"slices"
	"testing"
)

func TestFeedFaultsDuplicateAndReorderBatches(t *testing.T) {
	tests := []struct {
		name   string
		faults *FeedFaults
		docs   []string
		want   [][]string
		stats  FeedStats
	}{
		{
			name: "none", docs: []string{"d1", "d2", "d3"},
			want:  [][]string{{"d1", "d2"}, {"d3"}},
			stats: FeedStats{Batches: 2, Deliveries: 2},
		},
		{
			name: "every batch twice", faults: &FeedFaults{Duplicate: true}, docs: []string{"d1", "d2", "d3"},
			want:  [][]string{{"d1", "d2"}, {"d1", "d2"}, {"d3"}, {"d3"}},
			stats: FeedStats{Batches: 2, Deliveries: 4, Duplicated: 2},
		},
		{
			// The last batch has no successor to swap with.
			name: "every batch held back", faults: &FeedFaults{Reorder: 1}, docs: []string{"d1", "d2", "d3", "d4", "d5"},
			want:  [][]string{{"d3", "d4"}, {"d1", "d2"}, {"d5"}},
			stats: FeedStats{Batches: 3, Deliveries: 3, Reordered: 1},
		},
		{
			name: "both", faults: &FeedFaults{Duplicate: true, Reorder: 1}, docs: []string{"d1", "d2", "d3"},
			want:  [][]string{{"d3"}, {"d3"}, {"d1", "d2"}, {"d1", "d2"}},
			stats: FeedStats{Batches: 2, Deliveries: 4, Duplicated: 2, Reordered: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			leases := watchLeases(dir)
			s := openStore(t, dir)
			defer s.Close()
			createDocs(t, s, tc.docs...)
			th := newTestHandler()
			app := writeApp(t, hostJSON, map[string]string{"dispatch": feedFunction(`,"startFromBeginning":true,"maxItemsPerInvocation":2`)})
			h := startHost(t, Config{App: app, Worker: th.worker(), StateDir: dir, Leases: leases, Feed: s, FeedFaults: tc.faults})
			for i, w := range tc.want {
				if got := batchIDs(t, th.next(t)); !slices.Equal(got, w) {
					t.Fatalf("delivery %d = %v, want %v", i, got, w)
				}
			}
			// The checkpoint covers everything delivered, the held-back
			// batch included: a restart starts after the last document.
			th.noneAfterCheckpoint(t, s, leases, "dispatch")
			if got := h.FeedStats(); got != tc.stats {
				t.Errorf("FeedStats = %+v, want %+v", got, tc.stats)
			}
		})
	}
}

func TestFeedFaultsSeedRepeatsTheDraws(t *testing.T) {
	draws := func(seed uint64) []bool {
		r := (&FeedFaults{Reorder: 0.5, Seed: seed}).rand(0)
		out := make([]bool, 32)
		for i := range out {
			out[i] = r.Float64() < 0.5
		}
		return out
	}
	if !slices.Equal(draws(7), draws(7)) {
		t.Error("the same seed drew different reorders")
	}
	if slices.Equal(draws(7), draws(8)) {
		t.Error("different seeds drew the same 32 reorders")
	}
	if (&FeedFaults{Duplicate: true}).rand(0) != nil || (*FeedFaults)(nil).rand(0) != nil {
		t.Error("a listener without reorders got a random stream")
	}
}
