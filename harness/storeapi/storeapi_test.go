package storeapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/embedded"
	"github.com/hcpops/hcpops/harness/store/embedded/embeddedtest"
	"github.com/hcpops/hcpops/harness/store/storetest"
	"github.com/hcpops/hcpops/harness/testsupport"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func openEmbedded(t testing.TB, opts ...embedded.Option) *embedded.Store {
	t.Helper()
	return embeddedtest.Open(t, append([]embedded.Option{embedded.WithoutSync()}, opts...)...)
}

// TestContract runs the store contract through the API: a CLI sees the
// running process's store exactly as that process does.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		clock := testsupport.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		s := openEmbedded(t, embedded.WithClock(clock), embedded.WithSweepInterval(20*time.Millisecond))
		srv, err := Listen(s, "secret", quiet())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		return storetest.Harness{Store: NewClient(srv.URL(), "secret"), Advance: clock.Advance, Clock: clock,
			Foreign: func(t *testing.T) store.Store { return openEmbedded(t) }}
	})
}

func TestWrongTokenIsRefused(t *testing.T) {
	srv, err := Listen(openEmbedded(t), "secret", quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, token := range []string{"", "secreT", "secret2"} {
		_, err := NewClient(srv.URL(), token).Get(context.Background(), "pk", "id")
		if err == nil || !strings.Contains(err.Error(), "token") {
			t.Errorf("token %q: err = %v, want a refusal naming the token", token, err)
		}
	}
	if _, err := NewClient(srv.URL(), "secret").Get(context.Background(), "pk", "id"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("right token: err = %v, want ErrNotFound", err)
	}
}

func TestShareAdvertisesAndWithdraws(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Dial(context.Background(), dir, time.Second); !errors.Is(err, ErrNoAdvert) {
		t.Fatalf("Dial before Share: %v, want ErrNoAdvert", err)
	}
	s := openEmbedded(t)
	sh, err := Share(s, dir, Advert{Command: "hcpops test"}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, AdvertFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("advert: %v, mode %v; want owner-only", err, fi.Mode())
	}
	c, a, err := Dial(context.Background(), dir, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if a.PID != os.Getpid() || a.Command != "hcpops test" {
		t.Errorf("advert = %+v", a)
	}
	doc := []byte(`{"id":"a","partitionKey":"pk","n":1}`)
	if _, err := c.Create(context.Background(), "pk", doc); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(context.Background(), "pk", "a"); err != nil {
		t.Errorf("a write through the API is not in the shared store: %v", err)
	}
	if err := sh.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, AdvertFile)); !os.IsNotExist(err) {
		t.Errorf("advert survived Close: %v", err)
	}
}

func TestStaleAdvertSaysSo(t *testing.T) {
	dir := t.TempDir()
	// A process that died without withdrawing: nothing listens there.
	ln := httptest.NewServer(http.NotFoundHandler())
	url := ln.URL
	ln.Close()
	if err := writeAdvert(filepath.Join(dir, AdvertFile), Advert{URL: url, Token: "t", PID: 4242, Command: "hcpopsctl dev"}); err != nil {
		t.Fatal(err)
	}
	_, _, err := Dial(context.Background(), dir, 2*time.Second)
	if err == nil || errors.Is(err, ErrNoAdvert) || !strings.Contains(err.Error(), "pid 4242") {
		t.Errorf("Dial of a stale advert: %v, want an error naming the pid", err)
	}
	if err := os.WriteFile(filepath.Join(dir, AdvertFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAdvert(dir); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged advert: %v", err)
	}
}

// A running process that hangs costs the CLI one bounded call, whatever
// the caller's context says.
func TestHangingServerIsBounded(t *testing.T) {
	// It measures the client's own bound, which is real time by design:
	// no caller's context or clock can stretch it.
	testsupport.RealStack(t, "5s of real time: the client's call timeout")
	release := make(chan struct{})
	hung := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hung <- struct{}{}
		<-release
	}))
	defer srv.Close()
	defer close(release)
	c := NewClient(srv.URL, "t")
	// Long enough for a loaded machine to connect, far below the wait below.
	c.timeout = 5 * time.Second
	done := make(chan error, 1)
	go func() { _, err := c.Get(context.Background(), "pk", "id"); done <- err }()
	select {
	case <-hung: // the request reached the server and is hanging there
	case err := <-done:
		t.Fatalf("the call ended before it reached the server: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the request never reached the server")
	}
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the call timeout", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call outlived its timeout by far")
	}
}

// A stream cut before its last line is an error, never a short result.
func TestCutStreamIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"items":[{"body":"e30=","etag":"1"}]}`+"\n")
	}))
	defer srv.Close()
	pages := 0
	err := NewClient(srv.URL, "t").Children(context.Background(), "pk", "/x", func(items []store.Item) error {
		pages++
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "ended before") || pages != 1 {
		t.Errorf("err = %v after %d pages, want an error after 1", err, pages)
	}
}

// TestRequestBounds: every field that sizes the store's work is bounded,
// and a request over a bound is a 400 naming the field, before the store
// sees it. The store goes on serving, sound.
func TestRequestBounds(t *testing.T) {
	s := openEmbedded(t)
	srv, err := Listen(s, "secret", quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := NewClient(srv.URL(), "secret")
	op := []byte(`{"id":"op","partitionKey":"pk","resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","resourceID":"/x","properties":{"status":"Accepted"}}`)
	if _, err := c.Create(context.Background(), "pk", op); err != nil {
		t.Fatal(err)
	}
	refs := strings.Repeat(`{"partitionKey":"pk","id":"a"},`, store.MaxReadMany) + `{"partitionKey":"pk","id":"a"}`
	ops := strings.Repeat(`{"kind":"Delete","id":"a","ifMatch":"x"},`, store.MaxBatchOps) + `{"kind":"Delete","id":"a","ifMatch":"x"}`
	for _, tc := range []struct {
		path, body, field string
	}{
		{pathActiveOperations, `{"active":{"pageSize":1000000000000}}`, "pageSize"},
		{pathActiveOperations, `{"active":{"pageSize":4611686018427387904}}`, "pageSize"},
		{pathActiveOperations, `{"active":{"pageSize":-1}}`, "pageSize"},
		{pathChangeFeed, `{"maxItems":4611686018427387904}`, "maxItems"},
		{pathReadMany, `{"refs":[` + refs + `]}`, "refs"},
		{pathBatch, `{"partitionKey":"pk","ops":[` + ops + `]}`, "ops"},
		{pathChangeFeed, `{"continuation":"` + strings.Repeat("9", 8192) + `"}`, "continuation"},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL()+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tc.field) {
			t.Errorf("%s %.60s: %d %.200s; want 400 naming %s", tc.path, tc.body, resp.StatusCode, body, tc.field)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("the store was condemned: %v", err)
	}
	n := 0
	if err := c.ActiveOperations(context.Background(), store.ActiveOperationsQuery{PageSize: store.MaxPageSize}, func(items []store.Item) error {
		n += len(items)
		return nil
	}); err != nil || n != 1 {
		t.Errorf("active operations at the page size bound: %d, %v; want the one operation", n, err)
	}
}
