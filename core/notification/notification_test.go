package notification

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

func TestCheck(t *testing.T) {
	strict := New(Config{}, nil)
	local := New(Config{AllowLoopback: true}, nil)
	custom := New(Config{AllowedHosts: []string{"arm.example.test"}}, nil)
	ported := New(Config{AllowedHosts: []string{"arm.example.test:8443", "*.Regional.Test:9443"}}, nil)
	tests := []struct {
		name string
		n    *Notifier
		uri  string
		ok   bool
	}{
		{"public ARM", strict, "https://management.azure.com/subscriptions/x/notify", true},
		{"regional ARM", strict, "https://eastus.management.azure.com/notify", true},
		{"gov cloud", strict, "https://management.usgovcloudapi.net/notify", true},
		{"plain http refused", strict, "http://management.azure.com/notify", false},
		{"suffix trick refused", strict, "https://evilmanagement.azure.com/notify", false},
		{"other host refused", strict, "https://example.com/notify", false},
		{"loopback refused by default", strict, "http://127.0.0.1:8080/n", false},
		{"loopback allowed when asked", local, "http://127.0.0.1:8080/n", true},
		{"localhost allowed when asked", local, "http://localhost:8080/n", true},
		{"ipv6 loopback allowed when asked", local, "http://[::1]:8080/n", true},
		{"non-http loopback refused", local, "ftp://127.0.0.1/n", false},
		{"custom list replaces default", custom, "https://management.azure.com/n", false},
		{"custom host", custom, "https://arm.example.test/n", true},
		{"explicit default port", strict, "https://management.azure.com:443/n", true},
		{"default port with leading zero", strict, "https://management.azure.com:0443/n", true},
		{"other port refused", strict, "https://management.azure.com:18902/n", false},
		{"other port on a regional host refused", strict, "https://eastus.management.azure.com:8443/n", false},
		{"port zero refused", strict, "https://management.azure.com:0/n", false},
		{"port out of range refused", strict, "https://management.azure.com:70000/n", false},
		{"userinfo trick refused", strict, "https://management.azure.com:443@example.com/n", false},
		{"listed host:port", ported, "https://arm.example.test:8443/n", true},
		{"listed host, unlisted default port", ported, "https://arm.example.test/n", false},
		{"listed host, other port", ported, "https://arm.example.test:8444/n", false},
		{"listed wildcard:port", ported, "https://eastus.regional.test:9443/n", true},
		{"wildcard:port, default port", ported, "https://eastus.regional.test/n", false},
		{"loopback any port when asked", local, "https://127.0.0.1:18902/n", true},
		{"no host", strict, "https:///n", false},
		{"garbage", strict, "://", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.n.Check(tt.uri)
			if (err == nil) != tt.ok {
				t.Fatalf("Check(%q) = %v, want ok=%v", tt.uri, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrNotAllowed) {
				t.Fatalf("error %v does not wrap ErrNotAllowed", err)
			}
		})
	}
}

func TestNotifyPostsStatusBody(t *testing.T) {
	var mu sync.Mutex
	var got []arm.OperationStatus
	var contentType string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var s arm.OperationStatus
		if err := json.Unmarshal(b, &s); err != nil {
			t.Errorf("body %q: %v", b, err)
		}
		mu.Lock()
		got = append(got, s)
		contentType = r.Header.Get("Content-Type")
		mu.Unlock()
		if r.Method != http.MethodPost {
			t.Errorf("method %s, want POST", r.Method)
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	n := New(Config{AllowLoopback: true}, nil)
	end := time.Date(2026, 3, 14, 2, 31, 2, 0, time.UTC)
	status := arm.OperationStatus{ID: "/subscriptions/s/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/u", Name: "u", Status: arm.ProvisioningStateFailed, EndTime: &end, Error: &arm.CloudErrorBody{Code: "InternalServerError", Message: "boom"}}
	if err := n.Notify(context.Background(), srv.URL+"/notify", status); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "u" || got[0].Status != arm.ProvisioningStateFailed || got[0].Error.Message != "boom" {
		t.Fatalf("received %+v", got)
	}
	if contentType != "application/json" {
		t.Fatalf("content type %q", contentType)
	}
}

func TestNotifyFailures(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/fail":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/redirect":
			http.Redirect(w, r, "https://example.com/", http.StatusTemporaryRedirect)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}
	}))
	defer srv.Close()
	defer close(release)
	n := New(Config{AllowLoopback: true, Timeout: 200 * time.Millisecond}, nil)
	status := arm.OperationStatus{Name: "u", Status: arm.ProvisioningStateSucceeded}
	for _, path := range []string{"/fail", "/redirect", "/slow"} {
		if err := n.Notify(context.Background(), srv.URL+path, status); err == nil {
			t.Errorf("%s: want an error", path)
		}
	}
	if err := New(Config{}, nil).Notify(context.Background(), srv.URL+"/fail", status); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("loopback without opt-in: %v, want ErrNotAllowed", err)
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"HCPOPS_NOTIFICATION_HOSTS": " A.example.test, *.b.test ,", "HCPOPS_NOTIFICATION_ALLOW_LOOPBACK": "true"}
	c, err := ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if len(c.AllowedHosts) != 2 || c.AllowedHosts[0] != "a.example.test" || c.AllowedHosts[1] != "*.b.test" || !c.AllowLoopback {
		t.Fatalf("config %+v", c)
	}
	for _, bad := range []string{"arm.test:http", "arm.test:0", "arm.test:65536", ":8443", "*.:443", "arm.test:-1", "a/b.test"} {
		env := map[string]string{"HCPOPS_NOTIFICATION_HOSTS": "management.azure.com," + bad}
		_, err := ConfigFromEnv(func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), "HCPOPS_NOTIFICATION_HOSTS") || !strings.Contains(err.Error(), strconv.Quote(bad)) {
			t.Errorf("HCPOPS_NOTIFICATION_HOSTS=...,%s: error %v, want one naming the setting and the pattern", bad, err)
		}
	}
	env["HCPOPS_NOTIFICATION_HOSTS"] = "arm.test:8443"
	if c, err := ConfigFromEnv(func(k string) string { return env[k] }); err != nil || len(c.AllowedHosts) != 1 {
		t.Fatalf("host:port pattern: %+v, %v", c, err)
	}
	env["HCPOPS_NOTIFICATION_ALLOW_LOOPBACK"] = "maybe"
	if _, err := ConfigFromEnv(func(k string) string { return env[k] }); err == nil {
		t.Fatal("want an error for a bad boolean")
	}
}

// dialRecorder is a transport that counts every request it is asked to send.
type dialRecorder struct {
	mu   sync.Mutex
	hits []string
}

func (d *dialRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hits = append(d.hits, r.URL.Host)
	return nil, errors.New("no network in this test")
}

// TestNotifyRefusesUnlistedPortWithoutConnecting: an allowed host on
// another port must be refused before any connection, or a stored URI
// could reach any service on an allowed host.
func TestNotifyRefusesUnlistedPortWithoutConnecting(t *testing.T) {
	rec := &dialRecorder{}
	n := New(Config{}, &http.Client{Transport: rec})
	status := arm.OperationStatus{Name: "u", Status: arm.ProvisioningStateSucceeded}
	err := n.Notify(context.Background(), "https://management.azure.com:18902/subscriptions/x/notify", status)
	if !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "18902") {
		t.Fatalf("Notify = %v, want ErrNotAllowed naming port 18902", err)
	}
	// The default port still goes out (to the recording transport).
	_ = n.Notify(context.Background(), "https://management.azure.com/subscriptions/x/notify", status)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.hits) != 1 || rec.hits[0] != "management.azure.com" {
		t.Fatalf("requests attempted: %q, want only the default-port one", rec.hits)
	}
}

// TestNotifyDeliveredWhateverTheBody: a 2xx status is the delivery. An
// endpoint that answers 200 and then trickles (or never ends) its body
// does not hold the POST, and the notification is never posted again by
// this notifier: a second Notify says it was delivered, without a call.
func TestNotifyDeliveredWhateverTheBody(t *testing.T) {
	release := make(chan struct{})
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("{"))
		w.(http.Flusher).Flush()
		select { // the rest of the body never comes
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	n := New(Config{AllowLoopback: true, Timeout: time.Minute}, nil)
	status := arm.OperationStatus{ID: "/subscriptions/s/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/u", Name: "u", Status: arm.ProvisioningStateSucceeded}
	done := make(chan error, 1)
	go func() { done <- n.Notify(context.Background(), srv.URL+"/notify", status) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Notify: %v, want delivered", err)
		}
	case <-time.After(20 * time.Second): // a guard, far above the microseconds a read status takes
		t.Fatal("Notify is still reading the body of a 200")
	}
	if err := n.Notify(context.Background(), srv.URL+"/notify", status); !errors.Is(err, ErrDelivered) {
		t.Fatalf("second Notify of a delivered notification: %v, want ErrDelivered", err)
	}
	other := status
	other.ID, other.Name = strings.Replace(status.ID, "/u", "/v", 1), "v"
	if err := n.Notify(context.Background(), srv.URL+"/notify", other); err != nil {
		t.Fatalf("another operation on the same URI: %v", err)
	}
	if got := posts.Load(); got != 2 {
		t.Fatalf("%d POSTs, want 2 (one per operation)", got)
	}
}

// TestNotifyConcurrentOnce: calls for one notification while its POST is
// in flight do not post it again; they say so at once.
func TestNotifyConcurrentOnce(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select { // an endpoint that does not answer until told
		case <-r.Context().Done():
		case <-release:
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock() // before srv.Close, which waits for the handlers
	n := New(Config{AllowLoopback: true, Timeout: time.Minute}, nil)
	status := arm.OperationStatus{ID: "/subscriptions/s/providers/Microsoft.RedHatOpenShift/locations/eastus/hcpOperationStatuses/u", Name: "u", Status: arm.ProvisioningStateFailed}
	const callers = 6
	results := make(chan error, callers)
	for range callers {
		go func() { results <- n.Notify(context.Background(), srv.URL+"/notify", status) }()
	}
	<-arrived
	for i := 0; i < callers-1; i++ {
		select {
		case err := <-results:
			if !errors.Is(err, ErrInFlight) {
				t.Fatalf("a concurrent Notify returned %v, want ErrInFlight", err)
			}
		case <-arrived:
			t.Fatal("a second POST of the same notification reached the endpoint")
		}
	}
	unblock()
	if err := <-results; err != nil {
		t.Fatalf("the POST in flight: %v", err)
	}
	if len(arrived) != 0 {
		t.Fatalf("%d more POSTs reached the endpoint", len(arrived))
	}
}
