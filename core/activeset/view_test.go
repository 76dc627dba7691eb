package activeset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/changefeed"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/embedded"
	"github.com/hcpops/hcpops/harness/store/embedded/embeddedtest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

const sub = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"

func clusterID(name string) string {
	return "/subscriptions/" + sub + "/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name
}

// opDoc is an operation document on the cluster named; extra members are
// spliced into properties.
func opDoc(name, cluster, status, extra string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"partitionKey":%q,"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses",`+
		`"resourceID":"/subscriptions/%s/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/%s","ttl":604800,`+
		`"properties":{"cosmosMetadata":{"instanceVersion":1},"request":"Create","externalId":%q,"status":%q%s}}`,
		document.CosmosID("/subscriptions/"+sub+"/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/"+name),
		sub, sub, name, clusterID(cluster), status, extra)
}

func clusterDoc(name, state string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"partitionKey":%q,"resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters",`+
		`"resourceID":%q,"properties":{"serviceProviderProperties":{"provisioningState":%q}}}`,
		document.CosmosID(clusterID(name)), sub, clusterID(name), state)
}

func opRef(name string) store.DocRef {
	return store.DocRef{PartitionKey: sub,
		ID: document.CosmosID("/subscriptions/" + sub + "/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/" + name)}
}

func clusterRef(name string) store.DocRef {
	return store.DocRef{PartitionKey: sub, ID: document.CosmosID(clusterID(name))}
}

func resourceOf(pk, externalID string) (store.DocRef, bool) {
	if !strings.Contains(strings.ToLower(externalID), "/subscriptions/"+pk+"/") {
		return store.DocRef{}, false
	}
	return store.DocRef{PartitionKey: pk, ID: document.CosmosID(externalID)}, true
}

// counting counts what the view asks of the store, and can refuse the
// feed's continuation once.
type counting struct {
	store.Store
	readMany, readManyDocs, feedReads atomic.Int64
	gap                               atomic.Bool
}

func (c *counting) ReadMany(ctx context.Context, refs []store.DocRef) (map[store.DocRef]store.Item, error) {
	c.readMany.Add(1)
	c.readManyDocs.Add(int64(len(refs)))
	return c.Store.ReadMany(ctx, refs)
}

func (c *counting) ChangeFeed(ctx context.Context, cont string, n int) (store.FeedPage, error) {
	c.feedReads.Add(1)
	if c.gap.CompareAndSwap(true, false) {
		return store.FeedPage{}, fmt.Errorf("reading change feed: %w: continuation %q refused", store.ErrFeedGap, cont)
	}
	return c.Store.ChangeFeed(ctx, cont, n)
}

type rig struct {
	t       *testing.T
	ctx     context.Context
	clock   *testsupport.Clock
	store   *counting
	view    *View
	frees   []timed // what the view scheduled
	stopped int
}

func newRig(t *testing.T) *rig {
	clock := testsupport.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	s := &counting{Store: embeddedtest.Open(t, embedded.WithoutSync(), embedded.WithClock(clock))}
	r := &rig{t: t, ctx: context.Background(), clock: clock, store: s}
	v, err := New(Config{Store: s, ResourceOf: resourceOf, Clock: clock, Relist: time.Hour,
		Jitter: func(time.Duration) time.Duration { return 0 }, FeedPage: 3,
		AfterFunc: func(d time.Duration, f func()) func() bool {
			r.frees = append(r.frees, timed{d, f})
			return func() bool { r.stopped++; return true }
		}})
	if err != nil {
		t.Fatal(err)
	}
	r.view = v
	return r
}

// timed is a function the view asked to run later.
type timed struct {
	d time.Duration
	f func()
}

func (r *rig) create(doc []byte) store.Item {
	r.t.Helper()
	it, err := r.store.Create(r.ctx, sub, doc)
	if err != nil {
		r.t.Fatal(err)
	}
	return it
}

func (r *rig) replace(ref store.DocRef, doc []byte) store.Item {
	r.t.Helper()
	cur, err := r.store.Get(r.ctx, ref.PartitionKey, ref.ID)
	if err != nil {
		r.t.Fatal(err)
	}
	it, err := r.store.Replace(r.ctx, ref.PartitionKey, ref.ID, doc, cur.ETag)
	if err != nil {
		r.t.Fatal(err)
	}
	return it
}

// build does what a tick's full read does: the query, page by page, and
// a ReadMany of each page's resources.
func (r *rig) build() Stats {
	r.t.Helper()
	rb, err := r.view.Begin(r.ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	err = r.store.ActiveOperations(r.ctx, store.ActiveOperationsQuery{WithPendingNotification: true, PageSize: 2}, func(items []store.Item) error {
		rb.Operations(items, nil)
		var refs []store.DocRef
		for _, it := range items {
			op, err := document.ParseOperation(it.Body)
			if err != nil || op.Properties.Status.IsTerminal() {
				continue
			}
			if ref, ok := resourceOf(op.PartitionKey, op.Properties.ExternalID); ok {
				refs = append(refs, ref)
			}
		}
		got, err := r.store.ReadMany(r.ctx, refs)
		if err != nil {
			return err
		}
		rb.Resources(refs, got, nil)
		return nil
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return rb.Commit()
}

func (r *rig) refresh() Refreshed {
	r.t.Helper()
	got, err := r.view.Refresh(r.ctx)
	if err != nil {
		r.t.Fatalf("refresh: %v", err)
	}
	return got
}

// operations lists the held operations by name with their status.
func (r *rig) operations() map[string]string {
	r.t.Helper()
	out := map[string]string{}
	err := r.view.Operations(r.ctx, 2, func(ops []Op) error {
		for _, o := range ops {
			if o.Err != nil {
				return o.Err
			}
			op := o.Doc
			if op.ETag == "" {
				return fmt.Errorf("operation %s held without its etag", op.ID)
			}
			out[op.Name()] = string(op.Properties.Status)
		}
		return nil
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return out
}

// resource says what the view holds of a cluster: its provisioning state,
// "gone", or "unknown".
func (r *rig) resource(name string) string {
	r.t.Helper()
	got, unknown, err := r.view.Resources([]store.DocRef{clusterRef(name)})
	if err != nil {
		r.t.Fatal(err)
	}
	res := got[0]
	switch {
	case len(unknown) == 1:
		return "unknown"
	case res.Doc == nil && res.Err == nil:
		return "gone"
	}
	if res.Err != nil {
		r.t.Fatal(res.Err)
	}
	if !res.Doc.Partial() {
		r.t.Fatal("the view handed out a resource that is not its projection")
	}
	return string(res.Doc.ProvisioningState())
}

// wantResource checks what the view holds of cluster name (see resource).
func (r *rig) wantResource(name, want, what string) {
	r.t.Helper()
	if got := r.resource(name); got != want {
		r.t.Errorf("%s = %s, want %s", what, got, want)
	}
}

func wantOps(t *testing.T, got map[string]string, want ...string) {
	t.Helper()
	w := map[string]string{}
	for i := 0; i+1 < len(want); i += 2 {
		w[want[i]] = want[i+1]
	}
	if fmt.Sprint(got) != fmt.Sprint(w) {
		t.Errorf("operations = %v, want %v", got, w)
	}
}

func TestBuildHoldsTheActiveSet(t *testing.T) {
	r := newRig(t)
	r.create(opDoc("a", "one", "Provisioning", ""))
	r.create(clusterDoc("one", "Provisioning"))
	r.create(opDoc("b", "two", "Succeeded", `,"notificationUri":"https://arm/notify"`))
	r.create(opDoc("c", "three", "Succeeded", ""))
	r.create(opDoc("d", "gone", "Accepted", ""))
	st := r.build()
	if st.Operations != 3 || st.Resources != 2 || st.Bytes <= 0 {
		t.Errorf("stats = %+v, want 3 operations (two active, one owing a notification) and 2 resources", st)
	}
	wantOps(t, r.operations(), "a", "Provisioning", "b", "Succeeded", "d", "Accepted")
	r.wantResource("one", "Provisioning", "cluster one")
	r.wantResource("gone", "gone", "the resource the query's ReadMany did not find")
	r.wantResource("two", "unknown", "a resource no held operation polls")
}

// What other writers do between two refreshes is seen by the next one,
// and costs only the changed documents.
func TestRefreshSeesOtherWriters(t *testing.T) {
	r := newRig(t)
	r.create(opDoc("a", "one", "Provisioning", ""))
	r.create(clusterDoc("one", "Provisioning"))
	r.build()
	if got := r.refresh(); got.Changes != 0 || got.Loaded != 0 {
		t.Errorf("refresh with nothing changed = %+v, want nothing read", got)
	}

	// A frontend writes a new operation and its cluster; another
	// instance finishes a; someone edits cluster one.
	r.create(clusterDoc("two", "Accepted"))
	r.create(opDoc("n", "two", "Accepted", ""))
	r.replace(opRef("a"), opDoc("a", "one", "Succeeded", ""))
	r.replace(clusterRef("one"), clusterDoc("one", "Succeeded"))
	before := r.store.readManyDocs.Load()
	got := r.refresh()
	if got.Changes != 4 || got.Loaded != 0 || r.store.readManyDocs.Load() != before {
		t.Errorf("refresh = %+v with %d documents read by ReadMany; want the 4 changes and no read: the cluster came before its operation",
			got, r.store.readManyDocs.Load()-before)
	}
	wantOps(t, r.operations(), "n", "Accepted")
	r.wantResource("two", "Accepted", "cluster two")
	r.wantResource("one", "unknown", "cluster one after its only operation ended")

	// An operation whose resource the feed has not brought: read once.
	r.create(opDoc("cred", "two", "Accepted", ""))
	r.create(opDoc("x", "three", "Accepted", ""))
	r.create(clusterDoc("three", "Accepted"))
	r.replace(clusterRef("three"), clusterDoc("three", "Provisioning"))
	got = r.refresh()
	if got.Loaded != 0 {
		t.Errorf("refresh = %+v; want cluster three taken from the feed, not read", got)
	}
	r.wantResource("three", "Provisioning", "cluster three")
	r.create(clusterDoc("four", "Accepted"))
	r.refresh() // nobody needs four yet: not kept
	r.create(opDoc("late", "four", "Accepted", ""))
	if got := r.refresh(); got.Loaded != 1 {
		t.Errorf("refresh = %+v; want the one resource the feed brought before anyone needed it read", got)
	}
	r.wantResource("four", "Accepted", "cluster four")
}

func TestDeletionAndExpiryLeaveTheView(t *testing.T) {
	r := newRig(t)
	r.create(opDoc("a", "one", "Provisioning", ""))
	r.create(clusterDoc("one", "Deleting"))
	r.create(opDoc("b", "two", "Provisioning", ""))
	r.create(clusterDoc("two", "Provisioning"))
	r.create(opDoc("short", "two", "Provisioning", ""))
	r.replace(opRef("short"), []byte(strings.Replace(string(opDoc("short", "two", "Provisioning", "")), `"ttl":604800`, `"ttl":60`, 1)))
	r.build()
	wantOps(t, r.operations(), "a", "Provisioning", "b", "Provisioning", "short", "Provisioning")

	if err := r.store.SoftDelete(r.ctx, sub, clusterRef("one").ID); err != nil {
		t.Fatal(err)
	}
	if err := r.store.SoftDelete(r.ctx, sub, opRef("b").ID); err != nil {
		t.Fatal(err)
	}
	r.refresh()
	r.wantResource("one", "gone", "soft-deleted cluster")
	wantOps(t, r.operations(), "a", "Provisioning", "short", "Provisioning")

	// No change says so: the TTL runs out.
	r.clock.Advance(61 * time.Second)
	if got := r.refresh(); got.Changes != 0 {
		t.Errorf("refresh = %+v; an expiry is not in the feed", got)
	}
	wantOps(t, r.operations(), "a", "Provisioning")
	if st := r.view.Stats(); st.Operations != 1 {
		t.Errorf("stats = %+v; the expired operation must be forgotten, not just hidden", st)
	}
	// A hard delete is not in the feed either: the relist removes it.
	b, err := r.store.Batch(r.ctx, sub, []store.BatchOp{{Kind: store.OpDelete, ID: opRef("a").ID, IfMatch: mustGet(t, r, opRef("a")).ETag}})
	if err != nil || len(b) != 1 {
		t.Fatal(err)
	}
	r.refresh()
	wantOps(t, r.operations(), "a", "Provisioning")
	r.clock.Advance(time.Hour)
	if _, err := r.view.Refresh(r.ctx); !errors.Is(err, ErrRelist) {
		t.Fatalf("refresh after the relist interval = %v, want ErrRelist", err)
	}
	if err := r.view.Operations(r.ctx, 10, func([]Op) error { return nil }); !errors.Is(err, ErrEmpty) {
		t.Errorf("operations of a view due for relist = %v, want ErrEmpty: it holds nothing", err)
	}
	r.build()
	wantOps(t, r.operations())
}

func mustGet(t *testing.T, r *rig, ref store.DocRef) store.Item {
	t.Helper()
	it, err := r.store.Get(r.ctx, ref.PartitionKey, ref.ID)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func TestGapNeedsARebuild(t *testing.T) {
	r := newRig(t)
	r.create(opDoc("a", "one", "Provisioning", ""))
	r.build()
	r.store.gap.Store(true)
	_, err := r.view.Refresh(r.ctx)
	if !errors.Is(err, ErrLost) || !errors.Is(err, changefeed.ErrGap) {
		t.Fatalf("refresh from a refused continuation = %v, want ErrLost wrapping the gap", err)
	}
	if _, err := r.view.Refresh(r.ctx); !errors.Is(err, ErrEmpty) {
		t.Errorf("refresh after a gap = %v, want ErrEmpty until rebuilt", err)
	}
	r.create(opDoc("b", "two", "Accepted", ""))
	r.build()
	wantOps(t, r.operations(), "a", "Provisioning", "b", "Accepted")
	r.refresh()
}

// A change made while the full read runs is not lost: Begin takes the
// feed's position first.
func TestChangesDuringARebuildArrive(t *testing.T) {
	r := newRig(t)
	r.create(opDoc("a", "one", "Provisioning", ""))
	rb, err := r.view.Begin(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var items []store.Item
	if err := r.store.ActiveOperations(r.ctx, store.ActiveOperationsQuery{WithPendingNotification: true}, func(p []store.Item) error {
		items = append(items, p...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r.replace(opRef("a"), opDoc("a", "one", "Failed", "")) // after the query read it
	r.create(opDoc("b", "one", "Accepted", ""))
	rb.Operations(items, nil)
	rb.Commit()
	wantOps(t, r.operations(), "a", "Provisioning")
	r.refresh()
	wantOps(t, r.operations(), "b", "Accepted")
}

// An older copy arriving after a newer one does not replace it, and a
// document deleted and created again is its new self.
func TestNewer(t *testing.T) {
	m := meta{ts: 100, version: 5, etag: etagSum(`"e5"`)}
	for _, c := range []struct {
		name string
		h    head
		want bool
	}{
		{"same etag", head{ts: 100, version: 5, etag: `"e5"`}, false},
		{"later second", head{ts: 101, version: 6, etag: `"e6"`}, true},
		{"earlier second", head{ts: 99, version: 4, etag: `"e4"`}, false},
		{"same second, higher version", head{ts: 100, version: 6, etag: `"e6"`}, true},
		{"same second, lower version", head{ts: 100, version: 4, etag: `"e4"`}, false},
		{"created again: version restarts, later second", head{ts: 130, version: 1, etag: `"n1"`}, true},
		{"no versions, same second", head{ts: 100, etag: `"x"`}, true},
	} {
		if got := m.newer(c.h); got != c.want {
			t.Errorf("%s: newer = %v, want %v", c.name, got, c.want)
		}
	}
}

// The view's reading of the query agrees with the store's on every shape
// of operation document the query has to judge.
func TestClassifyAgreesWithTheStores(t *testing.T) {
	r := newRig(t)
	r.build()
	const (
		opType = `"resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses",`
		rid    = `"resourceID":"/subscriptions/` + sub + `/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/x",`
		std    = opType + rid
	)
	variants := []struct{ name, envelope, props string }{
		{"active", std, `"status":"Provisioning"`},
		{"no status", std, ``},
		{"null status", std, `"status":null`},
		{"numeric status", std, `"status":3`},
		{"lower-case succeeded", std, `"status":"succeeded"`},
		{"escaped succeeded", std, `"status":"Succ\u0065eded"`},
		{"succeeded", std, `"status":"Succeeded"`},
		{"failed, uri", std, `"status":"Failed","notificationUri":"https://arm/x"`},
		{"canceled, empty uri", std, `"status":"Canceled","notificationUri":""`},
		{"canceled, numeric uri", std, `"status":"Canceled","notificationUri":7`},
		{"soft-deleted", std + `"deletionTimestamp":"2026-03-01T00:00:00Z",`, `"status":"Accepted"`},
		{"null deletion", std + `"deletionTimestamp":null,`, `"status":"Accepted"`},
		{"type casing", `"resourceType":"microsoft.redhatopenshift/HCPOPERATIONSTATUSES",` + rid, `"status":"Accepted"`},
		{"not an operation", `"resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters",` + rid, `"status":"Accepted"`},
		{"no resourceType", rid, `"status":"Accepted"`},
		{"empty resourceID", opType + `"resourceID":"",`, `"status":"Accepted"`},
		{"numeric resourceID", opType + `"resourceID":5,`, `"status":"Accepted"`},
		{"no resourceID", opType, `"status":"Accepted"`},
		{"properties not an object", std, ""},
	}
	for i, v := range variants {
		id := fmt.Sprintf("6e7906b8-195a-5089-af7d-%012d", i)
		props := `{` + v.props + `}`
		if v.name == "properties not an object" {
			props = `"Accepted"`
		}
		doc := `{"id":"` + id + `","partitionKey":"` + sub + `",` + v.envelope + `"properties":` + props + `}`
		if _, err := r.store.Create(r.ctx, sub, []byte(doc)); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
	}
	r.refresh()
	var want, got []string
	if err := r.store.ActiveOperations(r.ctx, store.ActiveOperationsQuery{WithPendingNotification: true}, func(items []store.Item) error {
		for _, it := range items {
			h, _ := readHead(it.Body)
			want = append(want, h.id)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.view.Operations(r.ctx, 100, func(ops []Op) error {
		for _, o := range ops {
			if o.Doc == nil {
				h, _ := readHead(o.Raw)
				got = append(got, h.id)
				continue
			}
			got = append(got, o.Doc.ID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) || len(want) < 6 {
		t.Errorf("view holds %v\nthe store's query selects %v", got, want)
	}
}

// Records replaced again and again are compacted away, and what the view
// answers is the latest version throughout.
func TestCompaction(t *testing.T) {
	r := newRig(t)
	for i := range 20 {
		r.create(opDoc(fmt.Sprint("op", i), fmt.Sprint("c", i), "Provisioning", ""))
		r.create(clusterDoc(fmt.Sprint("c", i), "Provisioning"))
	}
	r.build()
	r.view.set.slab.chunk = 512
	before := r.view.Stats()
	states := []string{"Accepted", "Provisioning", "Updating"}
	compacted := false
	for round := range 30 {
		for i := range 20 {
			r.replace(clusterRef(fmt.Sprint("c", i)), clusterDoc(fmt.Sprint("c", i), states[round%3]))
		}
		r.refresh()
		if r.view.set.slab.dead == 0 {
			compacted = true
		}
		for i := range 20 {
			if got := r.resource(fmt.Sprint("c", i)); got != states[round%3] {
				t.Fatalf("round %d: cluster c%d = %s, want %s", round, i, got, states[round%3])
			}
		}
		if st := r.view.Stats(); st.Held > 4*before.Held+4*512 {
			t.Fatalf("round %d: view holds %+v, started at %+v: freed records are not compacted away", round, st, before)
		}
	}
	if !compacted {
		t.Error("30 rounds of rewrites never compacted the slab")
	}
	if got := len(r.operations()); got != 20 {
		t.Errorf("%d operations after compaction, want 20", got)
	}
}

// A view no tick has refreshed by its relist time frees itself; one
// rebuilt before then cancels the free of the one it replaced.
func TestUnusedViewIsFreedAtItsRelistTime(t *testing.T) {
	r := newRig(t)
	r.create(opDoc("a", "one", "Provisioning", ""))
	r.create(clusterDoc("one", "Provisioning"))
	r.build()
	if len(r.frees) != 1 || r.frees[0].d != time.Hour {
		t.Fatalf("scheduled %v, want the free at the relist interval", r.frees)
	}
	r.build()
	if len(r.frees) != 2 || r.stopped < 1 {
		t.Fatalf("a rebuild scheduled %d frees and stopped %d; want the first stopped", len(r.frees), r.stopped)
	}
	r.frees[0].f() // stopped too late: must not free the new view
	if st := r.view.Stats(); st.Operations != 1 {
		t.Fatalf("the replaced view's free emptied the new one: %+v", st)
	}
	r.frees[1].f()
	if st := r.view.Stats(); st.Operations != 0 || st.Held != 0 {
		t.Errorf("after its relist time the view holds %+v, want nothing", st)
	}
	r.clock.Advance(time.Hour)
	if _, err := r.view.Refresh(r.ctx); !errors.Is(err, ErrRelist) {
		t.Errorf("refresh of a view freed at its relist time = %v, want ErrRelist", err)
	}
}
