package benchmark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/core/clock"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/clusterservice/ocm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/store/counting"
	"github.com/hcpops/hcpops/harness/store/embedded"
	"github.com/hcpops/hcpops/logging"
)

// subscriptions spreads the seeded clusters over this many partitions, as
// a real RP database holds many subscriptions.
const subscriptions = 100

// csWorld is one fresh Clusters Service simulator on loopback. Clusters
// skip validation and stay "installing" for a day, so a poll sees the
// same state on every tick of a run.
type csWorld struct {
	sim    *simulator.Simulator
	url    string
	cancel context.CancelFunc
}

func newCSWorld(ctx context.Context) (*csWorld, error) {
	d := simulator.DefaultDurations()
	d.ClusterValidating, d.ClusterPending, d.ClusterInstalling = 0, 0, 24*time.Hour
	sim := simulator.New(simulator.WithDurations(d), simulator.WithLogger(discardLogger()))
	ctx, cancel := context.WithCancel(ctx)
	url, err := sim.Start(ctx, "127.0.0.1:0")
	if err != nil {
		cancel()
		return nil, fmt.Errorf("starting the CS simulator: %w", err)
	}
	return &csWorld{sim: sim, url: url, cancel: cancel}, nil
}

func (w *csWorld) setLatency(d time.Duration) error {
	if err := w.sim.SetLatency(simulator.Latency{Fixed: d}); err != nil {
		return fmt.Errorf("setting CS latency %s: %w", d, err)
	}
	return nil
}

func (w *csWorld) close() {
	w.sim.Close()
	w.cancel()
}

// discardLogger formats records like production (JSON, Info) but drops
// them: the formatting cost is part of what is measured, the output is not.
func discardLogger() *slog.Logger {
	return slog.New(logging.Handler(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))) //nolint:sloglint // the JSON formatting is part of what is measured; DiscardHandler would skip it
}

// settings is the environment app.New reads, without the process's own;
// batch 0 leaves the CS batch size at its default. The version sweep is
// off: its page reads and CS lists would be counted as the tick's.
func settings(csURL string, concurrency, batch int) func(string) string {
	m := map[string]string{
		ocm.EnvURL:                   csURL,
		lifecycle.EnvPollConcurrency: strconv.Itoa(concurrency),
		// The scenarios measure the poll tick; the version sweep's cost is
		// TestSweepCost's (core/lifecycle).
		lifecycle.EnvVersionSweep: "off",
	}
	if batch > 0 {
		m[lifecycle.EnvCSBatchSize] = strconv.Itoa(batch)
	}
	return func(k string) string { return m[k] }
}

// openStore opens the embedded store file; noSync is for scratch stores.
func openStore(path string, noSync bool) (*embedded.Store, error) {
	opts := []embedded.Option{embedded.WithLogger(discardLogger())}
	if noSync {
		opts = append(opts, embedded.WithoutSync())
	}
	s, err := embedded.Open(path, opts...)
	if err != nil {
		return nil, fmt.Errorf("opening store %s: %w", path, err)
	}
	return s, nil
}

// assembled is the production assembly (app.New) over a counted store.
type assembled struct {
	app    *app.App
	counts *counting.Store
	getenv func(string) string
}

func assemble(ctx context.Context, s store.Store, csURL string, concurrency, batch int) (*assembled, error) {
	cs := counting.New(s)
	getenv := settings(csURL, concurrency, batch)
	a, err := app.New(ctx, getenv, discardLogger(), app.Parts{Store: cs})
	if err != nil {
		return nil, fmt.Errorf("assembling the app: %w", err)
	}
	return &assembled{app: a, counts: cs, getenv: getenv}, nil
}

// close releases the CS client; the store belongs to the caller.
func (a *assembled) close() {
	if c, ok := a.app.ClusterService.(io.Closer); ok {
		_ = c.Close()
	}
}

// clusterID names seeded cluster i.
func clusterID(i int) string {
	sub := fmt.Sprintf("%08x-5eed-4000-8000-%012x", i%subscriptions, i%subscriptions)
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/rg-%05d/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/bench-%05d", sub, i, i)
}

// seedClusters writes n cluster creates the way ARO-HCP's frontend does.
func seedClusters(ctx context.Context, s store.Store, n int) error {
	fe := frontend.New(s, clock.Real{}, uuid.NewString)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				spec := frontend.ClusterSpec{Location: "eastus", VersionID: "4.19.7", ChannelGroup: "stable",
					ManagedResourceGroup: fmt.Sprintf("mrg-%05d", i)}
				opts := frontend.Options{TenantID: "72f988bf-86f1-41af-91ab-2d7cd011db47", ClientID: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"}
				if _, err := fe.PutCluster(ctx, clusterID(i), spec, opts); err != nil {
					errs[w] = fmt.Errorf("seeding cluster %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}

// readFeed returns the whole change feed after continuation, and where it
// ends.
func readFeed(ctx context.Context, s store.Store, continuation string) ([]store.Item, string, error) {
	var out []store.Item
	for {
		p, err := s.ChangeFeed(ctx, continuation, 1000)
		if err != nil {
			return nil, "", fmt.Errorf("reading the change feed: %w", err)
		}
		if len(p.Items) == 0 {
			return out, continuation, nil
		}
		out = append(out, p.Items...)
		continuation = p.Continuation
	}
}

// recordClusters does what dispatch leaves behind for every seeded cluster
// create: the CS cluster, POSTed by the production client, and its href
// recorded on the resource. Going through the dispatcher itself would be
// the same documents, but its adoption search lists every cluster in the
// simulator, which makes seeding 10,000 quadratic (minutes); the dispatch
// scenario measures the dispatcher.
func recordClusters(ctx context.Context, client cs.Client, s store.Store, want int) error {
	items, _, err := readFeed(ctx, s, "")
	if err != nil {
		return err
	}
	var clusters []store.Item
	for _, it := range items {
		if k, err := document.Sniff(it.Body); err == nil && k == document.KindCluster {
			clusters = append(clusters, it)
		}
	}
	if len(clusters) != want {
		return fmt.Errorf("the change feed holds %d clusters, want %d", len(clusters), want)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, 32)
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(clusters) || ctx.Err() != nil {
					return
				}
				if err := recordCluster(ctx, client, s, clusters[i], i); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}

func recordCluster(ctx context.Context, client cs.Client, s store.Store, it store.Item, i int) error {
	r, err := document.ParseResource(it.Body)
	if err != nil {
		return fmt.Errorf("seeded cluster %d: %w", i, err)
	}
	rid, err := document.ParseResourceID("resourceID", r.ResourceID())
	if err != nil {
		return fmt.Errorf("seeded cluster %d: %w", i, err)
	}
	v := r.Version()
	spec := cs.ClusterSpec{
		ID: fmt.Sprintf("%032x", i), Name: r.Name(), Region: r.Location(), VersionID: v.ID, ChannelGroup: v.ChannelGroup,
		Azure: cs.AzureRef{SubscriptionID: rid.SubscriptionID, ResourceGroupName: rid.ResourceGroupName, ResourceName: rid.Name,
			ManagedResourceGroupName: r.ManagedResourceGroup(), TenantID: "72f988bf-86f1-41af-91ab-2d7cd011db47"},
	}
	c, err := client.PostCluster(ctx, spec)
	if err != nil {
		return fmt.Errorf("creating CS cluster for %s: %w", r.ResourceID(), err)
	}
	href := c.Href
	if href == "" {
		href = cs.ClusterHref(c.ID)
	}
	r.SetClusterServiceID(href)
	body, err := r.MarshalReplace()
	if err != nil {
		return fmt.Errorf("rendering %s: %w", r.ResourceID(), err)
	}
	if _, err := s.Replace(ctx, r.PartitionKey(), r.ID(), body, it.ETag); err != nil {
		return fmt.Errorf("recording the CS cluster of %s: %w", r.ResourceID(), err)
	}
	return nil
}

// prepareTick seeds n dispatched cluster creates into a scratch store file
// at path, against the world's simulator at zero latency.
func prepareTick(ctx context.Context, w *csWorld, path string, n, concurrency int, progress func(string, ...any)) error {
	if err := w.setLatency(0); err != nil {
		return err
	}
	s, err := openStore(path, true)
	if err != nil {
		return err
	}
	defer s.Close()
	t0 := time.Now()
	if err := seedClusters(ctx, s, n); err != nil {
		return err
	}
	progress("frontend wrote %d cluster creates in %s", n, time.Since(t0).Round(time.Millisecond))
	a, err := assemble(ctx, s, w.url, concurrency, 0)
	if err != nil {
		return err
	}
	defer a.close()
	t0 = time.Now()
	if err := recordClusters(ctx, a.app.ClusterService, s, n); err != nil {
		return err
	}
	progress("created their CS clusters in %s", time.Since(t0).Round(time.Millisecond))
	return nil
}

// settleTick runs one unmeasured tick at zero latency, moving every
// operation to what CS says, for when the changed-tick scenario that
// would do so is not selected.
func settleTick(ctx context.Context, w *csWorld, path string, concurrency int) error {
	if err := w.setLatency(0); err != nil {
		return err
	}
	s, err := openStore(path, true)
	if err != nil {
		return err
	}
	defer s.Close()
	a, err := assemble(ctx, s, w.url, concurrency, 0)
	if err != nil {
		return err
	}
	defer a.close()
	res, err := a.app.Engine.Tick(ctx)
	if err != nil {
		return fmt.Errorf("settling tick: %w", err)
	}
	if res.Errors > 0 {
		return fmt.Errorf("settling tick: %d operations failed", res.Errors)
	}
	return nil
}

// prepareDispatch seeds n undispatched cluster creates.
func prepareDispatch(ctx context.Context, path string, n int) error {
	s, err := openStore(path, true)
	if err != nil {
		return err
	}
	defer s.Close()
	return seedClusters(ctx, s, n)
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("copying store: %w", err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		return fmt.Errorf("copying store: %w", err)
	}
	return nil
}
