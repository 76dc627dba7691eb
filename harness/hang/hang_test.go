package hang

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestHangProxy(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer backend.Close()
	p := NewProxy(t, backend.URL)
	get := func(path string, timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	var hangs atomic.Int32 // counted on the proxy's goroutine
	p.OnHang(func() { hangs.Add(1) })
	p.Hang("sick")
	if err := get("/clusters/healthy", 10*time.Second); err != nil {
		t.Fatalf("healthy request: %v", err)
	}
	// Held until the client gives up: the proxy never answers on its own.
	if err := get("/clusters?search=id+%3D+%27sick%27", 200*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("sick request answered: %v", err)
	}
	if p.Held() != 1 || p.HeldFor("sick") != 1 || hangs.Load() != 1 {
		t.Errorf("held %d (sick %d), onHang %d; want 1 each", p.Held(), p.HeldFor("sick"), hangs.Load())
	}
	p.Heal()
	if err := get("/clusters/sick", 10*time.Second); err != nil {
		t.Fatalf("healed request: %v", err)
	}
	p.Close()
	if err := get("/clusters/healthy", 10*time.Second); err == nil {
		t.Error("a closed proxy still answers")
	}
}
