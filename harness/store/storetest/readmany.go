package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store"
)

// testReadMany: a batch of point reads returns exactly what Get would,
// keyed by id, and leaves out what Get calls not found.
func testReadMany(t *testing.T, h Harness) {
	ctx := context.Background()
	s, sub, other := h.Store, newSubscription(), newSubscription()
	var live []doc
	for i := range 5 {
		d := clusterDoc(sub, "rg", fmt.Sprintf("many-%d", i))
		mustCreate(t, s, sub, d)
		live = append(live, d)
	}
	gone := clusterDoc(sub, "rg", "soft-deleted")
	mustCreate(t, s, sub, gone)
	if err := s.SoftDelete(ctx, sub, gone.ID()); err != nil {
		t.Fatalf("SoftDelete: %v", err)
	}
	short := clusterDoc(sub, "rg", "short-lived").Set("ttl", 2)
	mustCreate(t, s, sub, short)
	elsewhere := clusterDoc(other, "rg", "elsewhere")
	mustCreate(t, s, other, elsewhere)
	// A replaced document is read at its latest etag.
	cur := mustGet(t, s, sub, live[1].ID())
	live[1].Set("properties.serviceProviderProperties.provisioningState", "Succeeded")
	if _, err := s.Replace(ctx, sub, live[1].ID(), live[1].JSON(t), cur.ETag); err != nil {
		t.Fatalf("Replace: %v", err)
	}
	eventually(t, h, 4*time.Second, "document with ttl 2 expires", func() bool {
		_, err := s.Get(ctx, sub, short.ID())
		return errors.Is(err, store.ErrNotFound)
	})

	ref := func(pk string, d doc) store.DocRef { return store.DocRef{PartitionKey: pk, ID: d.ID()} }
	refs := []store.DocRef{ref(sub, live[3]), ref(sub, gone), ref(sub, live[0]), {PartitionKey: sub, ID: "no-such-document"},
		ref(sub, short), ref(sub, elsewhere), ref(other, elsewhere), ref(other, live[2]), ref(sub, live[1]), ref(sub, live[3])}
	got, err := s.ReadMany(ctx, refs)
	if err != nil {
		t.Fatalf("ReadMany: %v", err)
	}
	var gotRefs []string
	for r := range got {
		gotRefs = append(gotRefs, r.PartitionKey+"/"+r.ID)
	}
	slices.Sort(gotRefs)
	want := []store.DocRef{ref(sub, live[0]), ref(sub, live[1]), ref(sub, live[3]), ref(other, elsewhere)}
	var wantRefs []string
	for _, r := range want {
		wantRefs = append(wantRefs, r.PartitionKey+"/"+r.ID)
	}
	slices.Sort(wantRefs)
	if !reflect.DeepEqual(gotRefs, wantRefs) {
		t.Fatalf("ReadMany = %v, want %v (none soft-deleted, expired, missing or asked in the wrong partition)", gotRefs, wantRefs)
	}
	for _, r := range want {
		single := mustGet(t, s, r.PartitionKey, r.ID)
		if got[r].ETag != single.ETag || !reflect.DeepEqual(decode(t, got[r].Body), decode(t, single.Body)) {
			t.Errorf("ReadMany %v = etag %s, body %s; Get says etag %s, body %s", r, got[r].ETag, got[r].Body, single.ETag, single.Body)
		}
	}
	if st, _ := decode(t, got[ref(sub, live[1])].Body).lookup("properties.serviceProviderProperties.provisioningState"); st != "Succeeded" {
		t.Errorf("ReadMany returned a stale version of %s: provisioningState %v", live[1].ID(), st)
	}

	if got, err := s.ReadMany(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("ReadMany of no ids = %v, %v; want an empty result", got, err)
	}
	tooMany := make([]store.DocRef, store.MaxReadMany+1)
	for i := range tooMany {
		tooMany[i] = store.DocRef{PartitionKey: sub, ID: fmt.Sprintf("id-%d", i)}
	}
	for _, tc := range []struct {
		name string
		refs []store.DocRef
		want string
	}{
		{"empty partition key", []store.DocRef{{ID: live[0].ID()}}, "partition key"},
		{"empty id", []store.DocRef{ref(sub, live[0]), {PartitionKey: sub}}, "id"},
		{"id with a slash", []store.DocRef{{PartitionKey: sub, ID: "a/b"}}, "a/b"},
		{"too many", tooMany, fmt.Sprint(store.MaxReadMany + 1)},
	} {
		_, err := s.ReadMany(ctx, tc.refs)
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadMany with %s: err = %v, want ErrInvalid naming %q", tc.name, err, tc.want)
		}
	}
}
