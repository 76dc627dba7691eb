package embeddedtest

import (
	"context"
	"testing"

	"github.com/hcpops/hcpops/harness/store/embedded"
)

func TestOpenIsUsableAndClosedAfterTheTest(t *testing.T) {
	ctx := context.Background()
	const pk = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	var s *embedded.Store
	t.Run("inner", func(t *testing.T) {
		s = Open(t, embedded.WithoutSync())
		_, err := s.Create(ctx, pk, []byte(`{"id":"6e7906b8-195a-5089-af7d-ff5988327ebe","partitionKey":"`+pk+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, pk, "6e7906b8-195a-5089-af7d-ff5988327ebe"); err != nil {
			t.Fatalf("reading back: %v", err)
		}
	})
	if _, err := s.Get(ctx, pk, "6e7906b8-195a-5089-af7d-ff5988327ebe"); err == nil {
		t.Error("the store still answers after its test ended; want it closed")
	}
}
