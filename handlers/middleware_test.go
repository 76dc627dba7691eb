package handlers

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/logging"
)

func TestInvocationIDGeneratedWhenAbsent(t *testing.T) {
	s, ts, _ := newTestServer(t, Config{})
	rec := &recorder{}
	_ = s.Handle("f", rec.invoke)
	resp := post(t, ts, "/f", `{"Data":{}}`)
	id := resp.header.Get(events.HeaderInvocationID)
	if _, err := uuid.Parse(id); err != nil {
		t.Fatalf("response invocation id %q is not a UUID", id)
	}
	if rec.calls[0].ID != id {
		t.Errorf("function saw id %q, response says %q", rec.calls[0].ID, id)
	}
}

func TestBodyLimit(t *testing.T) {
	const limit = 1024
	big := `{"Data":{"documents":"` + strings.Repeat("x", 2*limit) + `"}}`
	tests := []struct {
		name string
		body io.Reader // a bare io.Reader hides the length: chunked upload
	}{
		{"declared length", strings.NewReader(big)},
		{"chunked", io.MultiReader(strings.NewReader(big))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ts, _ := newTestServer(t, Config{MaxBodyBytes: limit})
			rec := &recorder{}
			_ = s.Handle("f", rec.invoke)
			resp := do(t, ts, http.MethodPost, "/f", tt.body, nil)
			if resp.status != http.StatusRequestEntityTooLarge {
				t.Fatalf("status = %d, want 413 (body %s)", resp.status, resp.raw)
			}
			if !strings.Contains(resp.body.Error, "limit of 1024 bytes") {
				t.Errorf("Error = %q", resp.body.Error)
			}
			if rec.count() != 0 {
				t.Error("function was called")
			}
		})
	}
	t.Run("at the limit is accepted", func(t *testing.T) {
		s, ts, _ := newTestServer(t, Config{MaxBodyBytes: limit})
		rec := &recorder{}
		_ = s.Handle("f", rec.invoke)
		body := `{"Data":{"x":"` + strings.Repeat("y", limit-len(`{"Data":{"x":""}}`)) + `"}}`
		if len(body) != limit {
			t.Fatalf("test body is %d bytes", len(body))
		}
		if resp := post(t, ts, "/f", body); resp.status != http.StatusOK {
			t.Fatalf("status = %d", resp.status)
		}
	})
}

func TestPanicBecomes500AndServerSurvives(t *testing.T) {
	s, ts, logs := newTestServer(t, Config{})
	_ = s.Handle("boom", func(ctx context.Context, inv Invocation) (Result, error) {
		var m map[string]int
		m["x"] = 1 //nolint:staticcheck // SA5000: the nil map write is the panic under test
		return Result{}, nil
	})
	rec := &recorder{}
	_ = s.Handle("ok", rec.invoke)
	resp := post(t, ts, "/boom", `{"Data":{}}`)
	if resp.status != http.StatusInternalServerError {
		t.Fatalf("status = %d", resp.status)
	}
	if ct := resp.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if !strings.Contains(resp.body.Error, "panic: assignment to entry in nil map") {
		t.Errorf("Error = %q", resp.body.Error)
	}
	if resp := post(t, ts, "/ok", `{"Data":{}}`); resp.status != http.StatusOK {
		t.Fatalf("server did not survive the panic: %d", resp.status)
	}
	ts.Close() // waits for access-log lines
	var found bool
	for _, l := range logs.lines(t) {
		if l["msg"] == "panic while handling request" {
			found = true
			stack, _ := l["stack"].(string)
			if !strings.Contains(stack, "middleware_test.go") {
				t.Errorf("panic log has no useful stack: %q", stack)
			}
			if l[logging.AttrInvocationID] == nil || l[logging.AttrFunction] != "boom" {
				t.Errorf("panic log lacks invocation id/function: %v", l)
			}
		}
	}
	if !found {
		t.Error("panic was not logged")
	}
}

func TestEveryLogLineCarriesInvocationID(t *testing.T) {
	logger, logs := newTestLogger()
	s := New(Config{}, logger)
	ts := httptest.NewServer(s)
	// the function logs through its own logger (wrapped as main would wrap it)
	fnLogger := logging.Logger(logger)
	_ = s.Handle("f", func(ctx context.Context, inv Invocation) (Result, error) {
		fnLogger.InfoContext(ctx, "working")
		done := make(chan struct{})
		go func() { // fan-out goroutines inherit ctx and so the id
			fnLogger.WarnContext(ctx, "from a goroutine")
			close(done)
		}()
		<-done
		return Result{}, events.Malformed("nope")
	})
	ids := []string{"11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222"}
	for _, id := range ids {
		do(t, ts, http.MethodPost, "/f", strings.NewReader(`{"Data":{}}`), http.Header{events.HeaderInvocationID: {id}})
	}
	ts.Close()
	seen := map[string]int{}
	for _, l := range logs.lines(t) {
		id, _ := l[logging.AttrInvocationID].(string)
		if id == "" {
			t.Errorf("log line without invocation id: %v", l)
			continue
		}
		seen[id]++
	}
	for _, id := range ids {
		// working, from a goroutine, and the invocation's one summary line
		if seen[id] != 3 {
			t.Errorf("invocation %s: %d log lines, want 3", id, seen[id])
		}
	}
}

// TestOversizeBodyIsStreamed: a function that says what it does with a
// body over the limit gets such a body whole, as a stream (declared length
// or chunked), and answers as usual; others still get 413.
func TestOversizeBodyIsStreamed(t *testing.T) {
	const limit = 1024
	big := `{"Data":{"documents":"` + strings.Repeat("x", 20*limit) + `"}}`
	for _, chunked := range []bool{false, true} {
		s, ts, _ := newTestServer(t, Config{MaxBodyBytes: limit})
		rec := &recorder{}
		_ = s.Handle("feed", rec.invoke)
		_ = s.Handle("other", rec.invoke)
		var got []byte
		var gotInv Invocation
		if err := s.HandleOversize("feed", func(ctx context.Context, inv Invocation, body io.Reader) (Result, error) {
			gotInv = inv
			var err error
			got, err = io.ReadAll(body)
			return Result{}, err
		}); err != nil {
			t.Fatal(err)
		}
		var body io.Reader = strings.NewReader(big)
		if chunked {
			body = io.MultiReader(body)
		}
		if resp := do(t, ts, http.MethodPost, "/feed", body, http.Header{events.HeaderInvocationID: {"inv-1"}}); resp.status != http.StatusOK {
			t.Fatalf("chunked=%v: oversize body for a streaming function: %d %s", chunked, resp.status, resp.raw)
		}
		if string(got) != big || gotInv.Function != "feed" || gotInv.ID != "inv-1" {
			t.Errorf("chunked=%v: the function read %d of %d bytes, invocation %+v", chunked, len(got), len(big), gotInv)
		}
		if resp := post(t, ts, "/feed", `{"Data":{}}`); resp.status != http.StatusOK || rec.count() != 1 {
			t.Errorf("a body within the limit: %d, %d calls of the function", resp.status, rec.count())
		}
		if resp := do(t, ts, http.MethodPost, "/other", strings.NewReader(big), nil); resp.status != http.StatusRequestEntityTooLarge {
			t.Errorf("oversize body for a function without HandleOversize: %d, want 413", resp.status)
		}
	}
	s := New(Config{}, nil)
	if err := s.HandleOversize("none", func(context.Context, Invocation, io.Reader) (Result, error) { return Result{}, nil }); err == nil {
		t.Error("HandleOversize of an unregistered function succeeded")
	}
}
