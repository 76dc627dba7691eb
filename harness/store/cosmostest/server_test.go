package cosmostest_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/hcpops/hcpops/harness/store/cosmostest"
)

// These tests hold the wrapper's fixes in place, talking to it through the
// raw SDK: each one is a behaviour the stock server gets wrong.

func TestMain(m *testing.M) { os.Exit(cosmostest.Main(m)) }

// container returns a fresh partitioned container seeded with docs.
func container(t *testing.T, docs ...map[string]any) *azcosmos.ContainerClient {
	t.Helper()
	ctx := context.Background()
	cfg := cosmostest.Config(t)
	cred, err := azcosmos.NewKeyCredential(cfg.Key)
	if err != nil {
		t.Fatal(err)
	}
	client, err := azcosmos.NewClientWithKey(cfg.Endpoint, cred, &azcosmos.ClientOptions{
		EnableContentResponseOnWrite: true,
		ClientOptions: azcore.ClientOptions{
			Retry: policy.RetryOptions{MaxRetries: -1},
			Transport: &http.Client{Transport: &http.Transport{
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback test server
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: cfg.Database}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := client.NewDatabase(cfg.Database)
	t.Cleanup(func() { _, _ = db.Delete(context.Background(), nil) })
	ttl := int32(-1)
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{
		ID:                     "c",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Kind: azcosmos.PartitionKeyKindHash},
		DefaultTimeToLive:      &ttl,
	}, nil); err != nil {
		t.Fatal(err)
	}
	c, _ := db.NewContainer("c")
	for _, d := range docs {
		b, _ := json.Marshal(d)
		if _, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString(d["pk"].(string)), b, nil); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func status(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

func queryIDs(t *testing.T, c *azcosmos.ContainerClient, sql string, pk azcosmos.PartitionKey, params ...azcosmos.QueryParameter) []string {
	t.Helper()
	pager := c.NewQueryItemsPager(sql, pk, &azcosmos.QueryOptions{QueryParameters: params})
	var ids []string
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatalf("query %q: %v", sql, err)
		}
		for _, item := range page.Items {
			var d struct {
				ID string `json:"id"`
				PK string `json:"pk"`
			}
			_ = json.Unmarshal(item, &d)
			ids = append(ids, d.PK+"/"+d.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

var seed = []map[string]any{
	{"id": "i1", "pk": "p1", "status": "Running", "type": "Microsoft.RedHatOpenShift/hcpOperationStatuses"},
	{"id": "n1", "pk": "p1", "status": nil, "type": "microsoft.redhatopenshift/HCPOPERATIONSTATUSES"},
	{"id": "q1", "pk": "p1", "status": "Succeeded", "type": "other"},
	{"id": "i1", "pk": "p2", "status": "Succeeded", "type": "Microsoft.RedHatOpenShift/hcpOperationStatuses"},
}

func TestPointReadOfMissingItemIs404(t *testing.T) {
	c := container(t, seed...)
	for _, tc := range []struct{ pk, id string }{{"p1", "nope"}, {"p3", "i1"}} {
		_, err := c.ReadItem(context.Background(), azcosmos.NewPartitionKeyString(tc.pk), tc.id, nil)
		if status(err) != http.StatusNotFound {
			t.Errorf("read %s/%s: err = %v, want 404", tc.pk, tc.id, err)
		}
	}
}

func TestQueries(t *testing.T) {
	c := container(t, seed...)
	p1 := azcosmos.NewPartitionKeyString("p1")
	all := azcosmos.NewPartitionKey()
	tests := []struct {
		name   string
		sql    string
		pk     azcosmos.PartitionKey
		params []azcosmos.QueryParameter
		want   []string
	}{
		{"partition key scopes the query", "SELECT * FROM c", p1, nil, []string{"p1/i1", "p1/n1", "p1/q1"}},
		{"cross-partition", "SELECT * FROM c", all, nil, []string{"p1/i1", "p1/n1", "p1/q1", "p2/i1"}},
		{"null is not unequal to a string", "SELECT * FROM c WHERE c.status != 'Succeeded'", p1, nil, []string{"p1/i1"}},
		{"STRINGEQUALS ignoring case", "SELECT * FROM c WHERE STRINGEQUALS(c.type, @t, true)", all,
			[]azcosmos.QueryParameter{{Name: "@t", Value: "Microsoft.RedHatOpenShift/hcpOperationStatuses"}}, []string{"p1/i1", "p1/n1", "p2/i1"}},
		{"STRINGEQUALS exact", "SELECT * FROM c WHERE STRINGEQUALS(c.type, 'other')", all, nil, []string{"p1/q1"}},
		{"ARRAYCONTAINS", `SELECT * FROM c WHERE NOT ARRAYCONTAINS(["Succeeded","Failed"], c.status)`, all, nil, []string{"p1/i1", "p1/n1"}},
		{"STARTSWITH ignoring case", "SELECT * FROM c WHERE STARTSWITH(c.type, 'MICROSOFT.', true)", p1, nil, []string{"p1/i1", "p1/n1"}},
		{"STARTSWITH exact", "SELECT * FROM c WHERE STARTSWITH(c.type, 'micro')", all, nil, []string{"p1/n1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := queryIDs(t, c, tc.sql, tc.pk, tc.params...); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWriteWithMismatchedPartitionKeyIs400(t *testing.T) {
	c := container(t)
	_, err := c.CreateItem(context.Background(), azcosmos.NewPartitionKeyString("p2"), []byte(`{"id":"x","pk":"p1"}`), nil)
	if status(err) != http.StatusBadRequest {
		t.Fatalf("err = %v, want 400", err)
	}
}

func TestBatch(t *testing.T) {
	ctx := context.Background()
	c := container(t, seed...)
	p1 := azcosmos.NewPartitionKeyString("p1")
	current, err := c.ReadItem(ctx, p1, "i1", nil)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("replace, patch and delete commit together", func(t *testing.T) {
		b := c.NewTransactionalBatch(p1)
		b.ReplaceItem("i1", []byte(`{"id":"i1","pk":"p1","status":"Done"}`), &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &current.ETag})
		patch := azcosmos.PatchOperations{}
		patch.AppendSet("/status", "Patched")
		b.PatchItem("n1", patch, nil)
		b.DeleteItem("q1", nil)
		resp, err := c.ExecuteTransactionalBatch(ctx, b, nil)
		if err != nil || !resp.Success {
			t.Fatalf("batch: success %v, err %v", resp.Success, err)
		}
		got := []int32{resp.OperationResults[0].StatusCode, resp.OperationResults[1].StatusCode, resp.OperationResults[2].StatusCode}
		if !slices.Equal(got, []int32{200, 200, 204}) {
			t.Fatalf("statuses %v, want [200 200 204]", got)
		}
		if ids := queryIDs(t, c, "SELECT * FROM c WHERE c.status = 'Patched'", p1); !slices.Equal(ids, []string{"p1/n1"}) {
			t.Fatalf("patched docs %v", ids)
		}
	})

	t.Run("a failing step rolls back the batch", func(t *testing.T) {
		b := c.NewTransactionalBatch(p1)
		b.CreateItem([]byte(`{"id":"new","pk":"p1"}`), nil)
		b.CreateItem([]byte(`{"id":"n1","pk":"p1"}`), nil)
		resp, err := c.ExecuteTransactionalBatch(ctx, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Success || resp.RawResponse.StatusCode != http.StatusMultiStatus {
			t.Fatalf("success %v, http %d; want false, 207", resp.Success, resp.RawResponse.StatusCode)
		}
		got := []int32{resp.OperationResults[0].StatusCode, resp.OperationResults[1].StatusCode}
		if !slices.Equal(got, []int32{424, 409}) {
			t.Fatalf("statuses %v, want [424 409]", got)
		}
		if _, err := c.ReadItem(ctx, p1, "new", nil); status(err) != http.StatusNotFound {
			t.Fatalf("the batch's first create survived: err %v", err)
		}
	})

	t.Run("a document from another partition fails its step", func(t *testing.T) {
		b := c.NewTransactionalBatch(p1)
		b.CreateItem([]byte(`{"id":"stray","pk":"p2"}`), nil)
		resp, err := c.ExecuteTransactionalBatch(ctx, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Success || resp.OperationResults[0].StatusCode != http.StatusBadRequest {
			t.Fatalf("success %v, status %d; want false, 400", resp.Success, resp.OperationResults[0].StatusCode)
		}
	})
}

func TestChangeFeed(t *testing.T) {
	ctx := context.Background()
	c := container(t, seed...)
	ranges, err := c.ReadFeedRanges(ctx, nil) // needs string pkrange ids
	if err != nil || len(ranges) != 1 {
		t.Fatalf("ReadFeedRanges = %v, %v", ranges, err)
	}
	read := func(opts azcosmos.ChangeFeedOptions) azcosmos.ChangeFeedResponse {
		t.Helper()
		resp, err := c.ReadChangeFeed(ctx, &opts)
		if err != nil {
			t.Fatalf("ReadChangeFeed: %v", err)
		}
		return resp
	}
	first := read(azcosmos.ChangeFeedOptions{FeedRange: &ranges[0], MaxItemCount: 3})
	if first.Count != 3 {
		t.Fatalf("first page has %d items, want 3", first.Count)
	}
	rest := read(azcosmos.ChangeFeedOptions{Continuation: &first.ContinuationToken})
	if rest.Count != 1 {
		t.Fatalf("second page has %d items, want 1", rest.Count)
	}
	idle := read(azcosmos.ChangeFeedOptions{Continuation: &rest.ContinuationToken})
	if idle.Count != 0 || idle.RawResponse.StatusCode != http.StatusNotModified {
		t.Fatalf("idle feed: %d items, http %d; want 0, 304", idle.Count, idle.RawResponse.StatusCode)
	}
	if _, err := c.UpsertItem(ctx, azcosmos.NewPartitionKeyString("p2"), []byte(`{"id":"late","pk":"p2"}`), nil); err != nil {
		t.Fatal(err)
	}
	if after := read(azcosmos.ChangeFeedOptions{Continuation: &idle.ContinuationToken}); after.Count != 1 {
		t.Fatalf("after one write: %d items, want 1", after.Count)
	}

	p2 := azcosmos.NewPartitionKeyString("p2")
	if scoped := read(azcosmos.ChangeFeedOptions{FeedRange: &ranges[0], PartitionKey: &p2}); scoped.Count != 2 {
		t.Fatalf("feed of partition p2: %d items, want 2", scoped.Count)
	}
	future := time.Now().Add(time.Hour)
	if later := read(azcosmos.ChangeFeedOptions{FeedRange: &ranges[0], StartFrom: &future}); later.Count != 0 {
		t.Fatalf("feed starting in an hour: %d items, want 0", later.Count)
	}
}

func TestReplaceReplacesEveryOccurrence(t *testing.T) {
	c := container(t, map[string]any{"id": "r", "pk": "p1", "resourceID": "/a/b/c"})
	tests := []struct {
		sql  string
		want any
	}{
		{`SELECT VALUE REPLACE(c.resourceID, "/", "") FROM c`, "abc"},
		{`SELECT VALUE REPLACE(c.resourceID, "/", "--") FROM c`, "--a--b--c"},
		{`SELECT VALUE REPLACE(c.resourceID, "", "x") FROM c`, "/a/b/c"},
		{`SELECT VALUE REPLACE(c.resourceID, "/b", "") FROM c`, "/a/c"},
		{`SELECT VALUE {"v": REPLACE(c.missing, "/", "")} FROM c`, map[string]any{}},
	}
	for _, tc := range tests {
		pager := c.NewQueryItemsPager(tc.sql, azcosmos.NewPartitionKeyString("p1"), nil)
		var got []any
		for pager.More() {
			page, err := pager.NextPage(context.Background())
			if err != nil {
				t.Fatalf("%s: %v", tc.sql, err)
			}
			for _, item := range page.Items {
				var v any
				if err := json.Unmarshal(item, &v); err != nil {
					t.Fatalf("%s: item %s: %v", tc.sql, item, err)
				}
				got = append(got, v)
			}
		}
		if want, _ := json.Marshal([]any{tc.want}); string(mustJSON(t, got)) != string(want) {
			t.Errorf("%s = %s, want %s", tc.sql, mustJSON(t, got), want)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNoSSLAdvertisesHTTP: with --no-ssl the account's region endpoints say
// http://, so a client that follows them (the SDK with more than one
// region, or any other SDK) stays on the scheme that answers.
func TestNoSSLAdvertisesHTTP(t *testing.T) {
	endpoint := cosmostest.StartOwn(t, cosmostest.Options{NoSSL: true})
	if !strings.HasPrefix(endpoint, "http://") {
		t.Fatalf("endpoint %s, want http://", endpoint)
	}
	resp, err := http.Get(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var account struct {
		WritableLocations []struct{ DatabaseAccountEndpoint string } `json:"writableLocations"`
		ReadableLocations []struct{ DatabaseAccountEndpoint string } `json:"readableLocations"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&account); err != nil {
		t.Fatal(err)
	}
	locations := slices.Concat(account.WritableLocations, account.ReadableLocations)
	if len(locations) != 2 {
		t.Fatalf("account lists %d locations, want one writable and one readable", len(locations))
	}
	for _, l := range locations {
		if l.DatabaseAccountEndpoint != endpoint {
			t.Errorf("advertised endpoint %q, want %q", l.DatabaseAccountEndpoint, endpoint)
		}
	}

	// And the SDK works over it end to end.
	cred, _ := azcosmos.NewKeyCredential(cosmostest.EmulatorKey)
	client, err := azcosmos.NewClientWithKey(endpoint, cred, &azcosmos.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx := context.Background()
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "plain"}, nil); err != nil {
		t.Fatalf("CreateDatabase over http: %v", err)
	}
}
