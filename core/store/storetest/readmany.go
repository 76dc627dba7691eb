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

	ids := []string{live[3].ID(), gone.ID(), live[0].ID(), "no-such-document", short.ID(),
		elsewhere.ID(), live[1].ID(), live[3].ID()}
	got, err := s.ReadMany(ctx, sub, ids)
	if err != nil {
		t.Fatalf("ReadMany: %v", err)
	}
	var gotIDs []string
	for id := range got {
		gotIDs = append(gotIDs, id)
	}
	slices.Sort(gotIDs)
	want := []string{live[0].ID(), live[1].ID(), live[3].ID()}
	slices.Sort(want)
	if !reflect.DeepEqual(gotIDs, want) {
		t.Fatalf("ReadMany ids = %v, want %v (no soft-deleted, expired, missing or other-partition ones)", gotIDs, want)
	}
	for _, id := range want {
		single := mustGet(t, s, sub, id)
		if got[id].ETag != single.ETag || !reflect.DeepEqual(decode(t, got[id].Body), decode(t, single.Body)) {
			t.Errorf("ReadMany %s = etag %s, body %s; Get says etag %s, body %s", id, got[id].ETag, got[id].Body, single.ETag, single.Body)
		}
	}
	if st, _ := decode(t, got[live[1].ID()].Body).lookup("properties.serviceProviderProperties.provisioningState"); st != "Succeeded" {
		t.Errorf("ReadMany returned a stale version of %s: provisioningState %v", live[1].ID(), st)
	}

	if got, err := s.ReadMany(ctx, sub, nil); err != nil || len(got) != 0 {
		t.Errorf("ReadMany of no ids = %v, %v; want an empty result", got, err)
	}
	tooMany := make([]string, store.MaxReadMany+1)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("id-%d", i)
	}
	for _, tc := range []struct {
		name string
		pk   string
		ids  []string
		want string
	}{
		{"empty partition key", "", []string{live[0].ID()}, "partition key"},
		{"empty id", sub, []string{live[0].ID(), ""}, "id"},
		{"id with a slash", sub, []string{"a/b"}, "a/b"},
		{"too many ids", sub, tooMany, fmt.Sprint(store.MaxReadMany + 1)},
	} {
		_, err := s.ReadMany(ctx, tc.pk, tc.ids)
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadMany with %s: err = %v, want ErrInvalid naming %q", tc.name, err, tc.want)
		}
	}
}
