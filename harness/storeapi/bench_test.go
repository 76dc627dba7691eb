package storeapi

import (
	"testing"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/storetest"
)

// The price of the loopback API against the store in process, for the
// README's choice: go test -run '^$' -bench . ./harness/storeapi/
func BenchmarkPointRead(b *testing.B) {
	b.Run("embedded", func(b *testing.B) { storetest.PointReads(b, benchEmbedded(b)) })
	b.Run("api", func(b *testing.B) { storetest.PointReads(b, benchAPI(b)) })
}

func BenchmarkReplace(b *testing.B) {
	b.Run("embedded", func(b *testing.B) { storetest.Replaces(b, benchEmbedded(b)) })
	b.Run("api", func(b *testing.B) { storetest.Replaces(b, benchAPI(b)) })
}

func benchEmbedded(b *testing.B) store.Store {
	b.Helper()
	return openEmbedded(b)
}

func benchAPI(b *testing.B) store.Store {
	b.Helper()
	srv, err := Listen(openEmbedded(b), "secret", quiet())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	return NewClient(srv.URL(), "secret")
}
