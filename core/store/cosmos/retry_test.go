package cosmos

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/hcpops/hcpops/core/store"
)

// fakeCosmos answers account discovery from testdata and sends every item
// request to answer, which sees how many times that request was made. The
// local test server never throttles, so this is how 429/503 handling is tested.
type fakeCosmos struct {
	t      *testing.T
	srv    *httptest.Server
	answer func(r *http.Request, n int) (status int, header http.Header, body string)

	mu    sync.Mutex
	calls map[string]int
}

func newFakeCosmos(t *testing.T, answer func(r *http.Request, n int) (int, http.Header, string)) *fakeCosmos {
	account, err := os.ReadFile("testdata/account.json")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeCosmos{t: t, answer: answer, calls: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(strings.ReplaceAll(string(account), "{{endpoint}}", f.srv.URL+"/")))
			return
		}
		f.mu.Lock()
		key := r.Method + " " + r.URL.Path
		f.calls[key]++
		n := f.calls[key]
		f.mu.Unlock()
		status, header, body := f.answer(r, n)
		for k, v := range header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeCosmos) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[key]
}

func (f *fakeCosmos) store(t *testing.T, maxRetries int32) *Store {
	s, err := New(Config{
		Endpoint: f.srv.URL + "/", Key: testKey, Database: "db",
		MaxRetries: maxRetries, RetryDelay: time.Millisecond, MaxRetryDelay: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

const (
	itemPath  = "/dbs/db/colls/Resources/docs/a"
	itemsPath = "/dbs/db/colls/Resources/docs"
	itemBody  = `{"id":"a","partitionKey":"p","_etag":"\"e1\"","_ts":1773455462}`
)

func throttled(ms string) http.Header { return http.Header{"X-Ms-Retry-After-Ms": {ms}} }

func TestRetries(t *testing.T) {
	const maxRetries = 3
	ok := func(status int) (int, http.Header, string) {
		return status, http.Header{"Etag": {`"e1"`}}, itemBody
	}
	tests := []struct {
		name      string
		op        func(ctx context.Context, s *Store) error
		key       string
		answer    func(n int) (int, http.Header, string)
		wantCalls int
		wantCode  int // 0: success
	}{
		{
			name: "read throttled twice then served",
			op:   func(ctx context.Context, s *Store) error { _, err := s.Get(ctx, "p", "a"); return err },
			key:  "GET " + itemPath,
			answer: func(n int) (int, http.Header, string) {
				if n <= 2 {
					return http.StatusTooManyRequests, throttled("1"), `{"code":"TooManyRequests"}`
				}
				return ok(http.StatusOK)
			},
			wantCalls: 3,
		},
		{
			name: "read throttled for good gives up after MaxRetries",
			op:   func(ctx context.Context, s *Store) error { _, err := s.Get(ctx, "p", "a"); return err },
			key:  "GET " + itemPath,
			answer: func(int) (int, http.Header, string) {
				return http.StatusTooManyRequests, throttled("1"), `{"code":"TooManyRequests"}`
			},
			wantCalls: maxRetries + 1, wantCode: http.StatusTooManyRequests,
		},
		{
			name: "retry-after beyond MaxRetryDelay is not waited for",
			op:   func(ctx context.Context, s *Store) error { _, err := s.Get(ctx, "p", "a"); return err },
			key:  "GET " + itemPath,
			answer: func(int) (int, http.Header, string) {
				return http.StatusTooManyRequests, throttled("60000"), `{"code":"TooManyRequests"}`
			},
			wantCalls: 1, wantCode: http.StatusTooManyRequests,
		},
		{
			name: "create throttled once then created",
			op: func(ctx context.Context, s *Store) error {
				_, err := s.Create(ctx, "p", []byte(`{"id":"a","partitionKey":"p"}`))
				return err
			},
			key: "POST " + itemsPath,
			answer: func(n int) (int, http.Header, string) {
				if n == 1 {
					return http.StatusTooManyRequests, throttled("1"), `{"code":"TooManyRequests"}`
				}
				return ok(http.StatusCreated)
			},
			wantCalls: 2,
		},
		{
			name: "read unavailable twice then served",
			op:   func(ctx context.Context, s *Store) error { _, err := s.Get(ctx, "p", "a"); return err },
			key:  "GET " + itemPath,
			answer: func(n int) (int, http.Header, string) {
				if n <= 2 {
					return http.StatusServiceUnavailable, nil, `{"code":"ServiceUnavailable"}`
				}
				return ok(http.StatusOK)
			},
			wantCalls: 3,
		},
		{
			name: "read unavailable for good gives up after MaxRetries",
			op:   func(ctx context.Context, s *Store) error { _, err := s.Get(ctx, "p", "a"); return err },
			key:  "GET " + itemPath,
			answer: func(int) (int, http.Header, string) {
				return http.StatusServiceUnavailable, nil, `{"code":"ServiceUnavailable"}`
			},
			wantCalls: maxRetries + 1, wantCode: http.StatusServiceUnavailable,
		},
		{
			name: "unavailable write is not replayed",
			op: func(ctx context.Context, s *Store) error {
				_, err := s.Replace(ctx, "p", "a", []byte(`{"id":"a","partitionKey":"p"}`), `"e0"`)
				return err
			},
			key: "PUT " + itemPath,
			answer: func(int) (int, http.Header, string) {
				return http.StatusServiceUnavailable, nil, `{"code":"ServiceUnavailable"}`
			},
			wantCalls: 1, wantCode: http.StatusServiceUnavailable,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeCosmos(t, func(r *http.Request, n int) (int, http.Header, string) {
				if r.Method+" "+r.URL.Path != tc.key {
					t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
					return http.StatusNotImplemented, nil, `{}`
				}
				return tc.answer(n)
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := tc.op(ctx, f.store(t, maxRetries))
			if got := f.count(tc.key); got != tc.wantCalls {
				t.Errorf("%s sent %d times, want %d", tc.key, got, tc.wantCalls)
			}
			if tc.wantCode == 0 {
				if err != nil {
					t.Fatalf("err = %v, want success", err)
				}
				return
			}
			var re *azcore.ResponseError
			if !errors.As(err, &re) || re.StatusCode != tc.wantCode {
				t.Fatalf("err = %v, want a %d *azcore.ResponseError", err, tc.wantCode)
			}
		})
	}
}

func TestStatusMapping(t *testing.T) {
	tests := []struct {
		status int
		want   error
	}{
		{http.StatusNotFound, store.ErrNotFound},
		{http.StatusConflict, store.ErrConflict},
		{http.StatusPreconditionFailed, store.ErrPreconditionFailed},
		{http.StatusBadRequest, store.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			f := newFakeCosmos(t, func(*http.Request, int) (int, http.Header, string) {
				return tc.status, nil, `{"code":"x","message":"canned"}`
			})
			_, err := f.store(t, 1).Replace(context.Background(), "p", "a", []byte(`{"id":"a","partitionKey":"p"}`), `"e0"`)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var re *azcore.ResponseError
			if !errors.As(err, &re) || re.StatusCode != tc.status {
				t.Fatalf("err = %v does not carry the %d response", err, tc.status)
			}
		})
	}
}
