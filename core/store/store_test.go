package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/embedded"
)

// TestCheckAddress: CheckAddress refuses exactly what the embedded store
// refuses, naming the field, so the lifecycle can skip such documents
// instead of retrying them.
func TestCheckAddress(t *testing.T) {
	const pk = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	s, err := embedded.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
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
