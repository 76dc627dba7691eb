package invoke

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// InMemory hands the handler the request as a server would (a body
// always, the client's context) and the client the handler's answer, or
// the context's error once it ends first.
func TestInMemory(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading the body: %v", err)
		}
		if r.URL.Path == "/hang" {
			<-r.Context().Done()
			return
		}
		w.Header().Set("X-Seen", r.Method+" "+r.URL.RequestURI())
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write(append([]byte("echo:"), b...))
	})
	c := &http.Client{Transport: InMemory(h)}
	resp, err := c.Post("http://nowhere.invalid/x?a=1", "text/plain", strings.NewReader("hi"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot || string(body) != "echo:hi" || resp.Header.Get("X-Seen") != "POST /x?a=1" {
		t.Errorf("answer %d %q %q", resp.StatusCode, body, resp.Header.Get("X-Seen"))
	}
	if resp, err := c.Get("http://nowhere.invalid/y"); err != nil || resp.StatusCode != http.StatusTeapot {
		t.Errorf("a GET without a body: %v", err)
	} else {
		resp.Body.Close()
	}
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://nowhere.invalid/hang", nil)
		if _, err := c.Do(req); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a request the handler holds: %v, want its context's deadline", err)
		}
	})
}

// A handler's status reaches the client before its body ends, the body
// comes as written, and a client that closes the body early hangs up on
// the handler (its context ends), as over a socket.
func TestInMemoryStreams(t *testing.T) {
	wrote, hungUp := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("{"))
		w.(http.Flusher).Flush()
		close(wrote)
		<-r.Context().Done()
		close(hungUp)
	})
	resp, err := (&http.Client{Transport: InMemory(h)}).Get("http://nowhere.invalid/trickle")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a trickling answer: %v", err)
	}
	b := make([]byte, 8)
	if n, err := resp.Body.Read(b); n != 1 || b[0] != '{' || err != nil {
		t.Errorf("first read = %q, %v; want the byte written", b[:n], err)
	}
	<-wrote
	resp.Body.Close()
	select {
	case <-hungUp:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler's context did not end when the client closed the body")
	}
}

// A request whose context has already ended is never sent, as with
// net/http's Transport: the handler must not see it, or a fake service
// would act on a call the caller gave up before making.
func TestInMemoryEndedContextNeverServed(t *testing.T) {
	served := 0
	c := &http.Client{Transport: InMemory(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served++
		w.WriteHeader(http.StatusCreated)
	}))}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://nowhere.invalid/create", strings.NewReader("{}"))
	if resp, err := c.Do(req); !errors.Is(err, context.Canceled) {
		t.Errorf("a request with an ended context: %v, %v; want context.Canceled", resp, err)
	}
	if served != 0 {
		t.Errorf("the handler served %d requests whose context had ended, want 0", served)
	}
}
