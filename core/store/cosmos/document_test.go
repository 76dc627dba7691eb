package cosmos

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store"
)

func TestMarkDeleted(t *testing.T) {
	now := time.Date(2026, 3, 14, 4, 0, 1, 0, time.UTC)
	const stamp = `"deletionTimestamp":"2026-03-14T04:00:01Z","ttl":30`
	tests := []struct {
		name string
		in   string
		want string // exact bytes: untouched members keep order and spelling
	}{
		{
			name: "bumps the version and keeps every other byte",
			in:   `{"id":"x","z":1.50,"properties":{"b":[1, 2],"cosmosMetadata":{"etag":"\"e\"","instanceVersion":4,"partitionKey":"p"},"a":{}},"_etag":"e"}`,
			want: `{"id":"x","z":1.50,"properties":{"b":[1, 2],"cosmosMetadata":{"etag":"\"e\"","instanceVersion":5,"partitionKey":"p"},"a":{}},"_etag":"e",` + stamp + `}`,
		},
		{
			name: "legacy document without instanceVersion counts as version 1",
			in:   `{"id":"x","properties":{"cosmosMetadata":{"resourceID":"/r"}}}`,
			want: `{"id":"x","properties":{"cosmosMetadata":{"resourceID":"/r","instanceVersion":2}},` + stamp + `}`,
		},
		{
			name: "no properties at all",
			in:   `{"id":"x"}`,
			want: `{"id":"x","properties":{"cosmosMetadata":{"instanceVersion":2}},` + stamp + `}`,
		},
		{
			name: "an existing ttl is overwritten in place",
			in:   `{"id":"x","ttl":604800,"properties":{"cosmosMetadata":{"instanceVersion":1}}}`,
			want: `{"id":"x","ttl":30,"properties":{"cosmosMetadata":{"instanceVersion":2}},"deletionTimestamp":"2026-03-14T04:00:01Z"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := markDeleted([]byte(tc.in), now)
			if err != nil {
				t.Fatalf("markDeleted: %v", err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestMarkDeletedRejectsBadShapes(t *testing.T) {
	tests := []struct {
		in, field string
	}{
		{`{"id":"x","properties":"oops"}`, "properties"},
		{`{"id":"x","properties":{"cosmosMetadata":[1]}}`, "properties.cosmosMetadata"},
		{`{"id":"x","properties":{"cosmosMetadata":{"instanceVersion":"4"}}}`, "properties.cosmosMetadata.instanceVersion"},
		{`[1,2]`, "JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.field, func(t *testing.T) {
			_, err := markDeleted([]byte(tc.in), time.Now())
			if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("err = %v, want ErrInvalid naming %s", err, tc.field)
			}
		})
	}
}

func TestVisibility(t *testing.T) {
	ts := int64(1_773_455_462)
	at := func(sec int64) time.Time { return time.Unix(ts+sec, 0) }
	tests := []struct {
		name    string
		body    string
		now     time.Time
		visible bool
	}{
		{"plain", `{"_ts":1773455462}`, at(1e6), true},
		{"soft-deleted", `{"_ts":1773455462,"deletionTimestamp":"2026-03-14T04:00:01Z"}`, at(0), false},
		{"ttl not yet run out", `{"_ts":1773455462,"ttl":30}`, at(29), true},
		{"ttl run out", `{"_ts":1773455462,"ttl":30}`, at(30), false},
		{"ttl -1 never expires", `{"_ts":1773455462,"ttl":-1}`, at(1e9), true},
		{"ttl null", `{"_ts":1773455462,"ttl":null}`, at(1e9), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := readMeta([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := m.visible(tc.now); got != tc.visible {
				t.Fatalf("visible = %v, want %v", got, tc.visible)
			}
		})
	}
}

func TestCheckDocument(t *testing.T) {
	tests := []struct {
		name, body, pk, wantErr string
	}{
		{"good", `{"id":"a","partitionKey":"p"}`, "p", ""},
		{"no id", `{"partitionKey":"p"}`, "p", "no field id"},
		{"id not a string", `{"id":1,"partitionKey":"p"}`, "p", "field id is 1"},
		{"id with hash", `{"id":"a#b","partitionKey":"p"}`, "p", `id "a#b"`},
		{"id too long", `{"id":"` + strings.Repeat("a", 256) + `","partitionKey":"p"}`, "p", "longer than 255"},
		{"other partition", `{"id":"a","partitionKey":"q"}`, "p", `partitionKey is "q", want "p"`},
		{"no partitionKey", `{"id":"a"}`, "p", "partitionKey is undefined"},
		{"trailing data", `{"id":"a","partitionKey":"p"} {}`, "p", "after top-level value"},
		{"empty partition", `{"id":"a","partitionKey":""}`, "", "partition key is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := checkDocument([]byte(tc.body), tc.pk)
			if tc.wantErr == "" {
				if err != nil || id != "a" {
					t.Fatalf("checkDocument = %q, %v; want a, nil", id, err)
				}
				return
			}
			if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want ErrInvalid containing %q", err, tc.wantErr)
			}
		})
	}
}
