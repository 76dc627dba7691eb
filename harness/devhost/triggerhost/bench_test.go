package triggerhost

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/store"
)

// BenchmarkEncodeDocuments measures the double encoding of a full batch
// (100 documents of about 2 KB, the dispatch function's batch size).
func BenchmarkEncodeDocuments(b *testing.B) {
	items := make([]store.Item, 100)
	pad := strings.Repeat("x", 1900)
	for i := range items {
		items[i] = store.Item{Body: []byte(fmt.Sprintf(`{"id":"doc-%d","note":"say \"hi\"","pad":%q,"_etag":"\"0000\""}`, i, pad))}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeDocuments(items); err != nil {
			b.Fatal(err)
		}
	}
}

type fixedEndpoint string

func (e fixedEndpoint) BaseURL() string                 { return string(e) }
func (e fixedEndpoint) Ready(ctx context.Context) error { return nil }

// BenchmarkInvoke measures one timer-sized invocation round trip over
// loopback HTTP, headers and envelope included.
func BenchmarkInvoke(b *testing.B) {
	th := newTestHandler()
	th.requests = make(chan recorded, 1)
	srv := httptest.NewServer(th)
	defer srv.Close()
	iv := newInvoker(fixedEndpoint(srv.URL), clock.Real{}, DefaultHostVersion, 0, slog.New(slog.DiscardHandler))
	data := map[string]json.RawMessage{"timer": json.RawMessage(`{"Schedule":{"AdjustForDST":true},"ScheduleStatus":null,"IsPastDue":false}`)}
	ctx := context.Background()
	go func() {
		for range th.requests {
		}
	}()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := iv.Invoke(ctx, "tick", data, nil); err != nil {
			b.Fatal(err)
		}
	}
}
