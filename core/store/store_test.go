package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/embedded/embeddedtest"
)

// TestCheckAddress: CheckAddress refuses exactly what the embedded store
// refuses, naming the field, so the lifecycle can skip such documents
// instead of retrying them.
func TestCheckAddress(t *testing.T) {
	const pk = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	s := embeddedtest.Open(t)
	tests := []struct {
		name, pk, id, want string
	}{
		{"good", pk, "6e7906b8-195a-5089-af7d-ff5988327ebe", ""},
		{"255 bytes", pk, strings.Repeat("x", 255), ""},
		{"empty partition key", "", "a", "partitionKey is empty"},
		{"NUL in partition key", pk + "\x00", "a", "partitionKey"},
		{"empty id", pk, "", "id is empty"},
		{"long id", pk, strings.Repeat("x", 256), "longer than 255"},
		{"slash", pk, "a/b", `"a/b"`},
		{"backslash", pk, `a\b`, `"a\\b"`},
		{"question mark", pk, "a?b", `"a?b"`},
		{"hash", pk, "a#b", `"a#b"`},
		{"NUL", pk, "a\x00b", `"a\x00b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := store.CheckAddress(tt.pk, tt.id)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckAddress = %v, want nil", err)
				}
			} else if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CheckAddress = %v, want ErrInvalid naming %s", err, tt.want)
			}
			_, getErr := s.Get(context.Background(), tt.pk, tt.id)
			if refused := errors.Is(getErr, store.ErrInvalid); refused != (err != nil) {
				t.Fatalf("embedded Get = %v but CheckAddress = %v: they must agree", getErr, err)
			}
		})
	}
}

func TestCheckReadMany(t *testing.T) {
	nonEmpty := func(s string) error {
		if s == "" {
			return store.ErrInvalid
		}
		return nil
	}
	many := make([]store.DocRef, store.MaxReadMany+1)
	for i := range many {
		many[i] = store.DocRef{PartitionKey: "p", ID: "x"}
	}
	for _, tc := range []struct {
		name string
		refs []store.DocRef
		want string // "" means accepted
	}{
		{"none", nil, ""},
		{"good", []store.DocRef{{PartitionKey: "p", ID: "a"}}, ""},
		{"at the limit", many[:store.MaxReadMany], ""},
		{"over the limit", many, "1001 documents, more than 1000"},
		{"bad partition key", []store.DocRef{{PartitionKey: "", ID: "a"}}, `document "a"`},
		{"bad id", []store.DocRef{{PartitionKey: "p", ID: ""}}, "invalid store request"},
	} {
		err := store.CheckReadMany(tc.refs, nonEmpty, nonEmpty)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (!errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want store.ErrInvalid containing %q", tc.name, err, tc.want)
		}
	}
}
