package ocm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/harness/simulator"
)

// unsignedJWT builds an access token the SDK accepts without contacting
// SSO (it only parses tokens, never verifies them).
func unsignedJWT(t *testing.T) string {
	t.Helper()
	enc := func(v any) string {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(data)
	}
	return enc(map[string]string{"alg": "none", "typ": "JWT"}) + "." +
		enc(map[string]any{"typ": "Bearer", "exp": time.Now().Add(time.Hour).Unix()}) + "."
}

// authRecorder remembers the Authorization headers CS saw.
type authRecorder struct {
	mu   sync.Mutex
	seen []string
	next http.Handler
}

func (a *authRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.seen = append(a.seen, r.Header.Get("Authorization"))
	a.mu.Unlock()
	a.next.ServeHTTP(w, r)
}

func (a *authRecorder) last() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.seen) == 0 {
		return ""
	}
	return a.seen[len(a.seen)-1]
}

func connect(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(context.Background(), cfg, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestAuthentication(t *testing.T) {
	sim := simulator.New()
	defer sim.Close()
	rec := &authRecorder{next: sim}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	missing := cs.ClusterHref(clusterID(1))

	// Unauthenticated, as in the ARO-HCP mesh.
	c := connect(t, Config{URL: srv.URL})
	if _, err := c.GetClusterStatus(context.Background(), missing); cs.Classify(err) != cs.Absent {
		t.Fatalf("unauthenticated call: %v", err)
	}
	if h := rec.last(); h != "" {
		t.Errorf("unauthenticated request carried Authorization %q", h)
	}

	// An access token is sent as a bearer token.
	token := unsignedJWT(t)
	c = connect(t, Config{URL: srv.URL, Token: token})
	if _, err := c.GetClusterStatus(context.Background(), missing); cs.Classify(err) != cs.Absent {
		t.Fatalf("token call: %v", err)
	}
	if h := rec.last(); h != "Bearer "+token {
		t.Errorf("Authorization = %q, want the bearer token", h)
	}

	// Client credentials are exchanged at the token URL first.
	issued := unsignedJWT(t) + "x"
	var grant, clientID string
	tokenSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		grant, clientID = r.PostForm.Get("grant_type"), r.PostForm.Get("client_id")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":3600}`, issued)
	}))
	defer tokenSrv.Close()
	c = connect(t, Config{URL: srv.URL, ClientID: "hcpops", ClientSecret: "s3cret", TokenURL: tokenSrv.URL})
	if _, err := c.GetClusterStatus(context.Background(), missing); cs.Classify(err) != cs.Absent {
		t.Fatalf("client-credentials call: %v", err)
	}
	if grant != "client_credentials" || clientID != "hcpops" || rec.last() != "Bearer "+issued {
		t.Errorf("grant %q client %q Authorization %q; want client_credentials, hcpops, the issued token",
			grant, clientID, rec.last())
	}
}

// TestTLSSettingsSurviveTheWrapper: the request-logging TransportWrapper
// wraps the SDK's own transport, so a custom CA (and Insecure) still apply.
func TestTLSSettingsSurviveTheWrapper(t *testing.T) {
	sim := simulator.New()
	defer sim.Close()
	srv := httptest.NewTLSServer(sim)
	defer srv.Close()
	missing := cs.ClusterHref(clusterID(1))
	cases := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"custom CA", Config{URL: srv.URL, CAFile: writeCA(t, srv)}, true},
		{"insecure", Config{URL: srv.URL, Insecure: true}, true},
		{"system roots only", Config{URL: srv.URL}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := connect(t, tc.cfg).GetClusterStatus(context.Background(), missing)
			if tc.ok && cs.Classify(err) != cs.Absent {
				t.Fatalf("err = %v, want a 404 over TLS", err)
			}
			var ce *cs.Error
			if !tc.ok && (err == nil || errors.As(err, &ce) || !strings.Contains(err.Error(), "certificate")) {
				t.Fatalf("err = %v, want a certificate error", err)
			}
		})
	}
}

// TestOddResponses: CS answers the SDK would otherwise misread.
func TestOddResponses(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		body    string
		wantErr func(error) bool
	}{
		{"404 without body", 404, "", func(err error) bool { return cs.Classify(err) == cs.Unrecognized }},
		{"500 without body", 500, "", func(err error) bool { return cs.Classify(err) == cs.Failed }},
		{"200 without body", 200, "", func(err error) bool { return cs.Classify(err) == cs.Unrecognized }},
		{"garbled JSON", 200, "{nope", func(err error) bool { return err != nil && cs.Classify(err) != cs.Absent }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			}))
			defer srv.Close()
			c := connect(t, Config{URL: srv.URL})
			_, err := c.GetCluster(context.Background(), cs.ClusterHref(clusterID(1)))
			if !tc.wantErr(err) {
				t.Fatalf("err = %v (%T)", err, err)
			}
		})
	}
}

// TestListStopsAtEmptyPage: paging ends at an empty page, even before the
// count reaches the total (CS lost an object between pages).
func TestListStopsAtEmptyPage(t *testing.T) {
	var pages []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := r.URL.Query().Get("page")
		pages = append(pages, page)
		w.Header().Set("Content-Type", "application/json")
		if page == "1" {
			// total 3: one was deleted between the pages, so page 2 is
			// empty before the count reaches it.
			fmt.Fprintf(w, `{"kind":"ClusterList","page":1,"size":2,"total":3,"items":[{"id":%q},{"id":%q}]}`, clusterID(1), clusterID(2))
			return
		}
		fmt.Fprint(w, `{"kind":"ClusterList","page":2,"size":0,"total":3,"items":[]}`)
	}))
	defer srv.Close()
	list, err := connect(t, Config{URL: srv.URL}).ListClusters(context.Background(), "")
	if err != nil || len(list) != 2 || strings.Join(pages, ",") != "1,2" {
		t.Fatalf("list = %v, %v after pages %v; want 2 clusters after pages 1,2", list, err, pages)
	}
	if list[1].Href != cs.ClusterHref(clusterID(2)) {
		t.Errorf("href filled from ID = %q", list[1].Href)
	}
}

// TestConnectionsAreReused: concurrent polls reuse idle connections rather
// than dialling each time (Go keeps only 2 idle per host by default).
func TestConnectionsAreReused(t *testing.T) {
	sim := simulator.New()
	defer sim.Close()
	srv := httptest.NewUnstartedServer(sim)
	var mu sync.Mutex
	dials := 0
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			dials++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()
	c := connect(t, Config{URL: srv.URL})
	const parallel = 16
	for range 3 {
		var wg sync.WaitGroup
		for range parallel {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := c.GetClusterStatus(context.Background(), cs.ClusterHref(clusterID(1))); cs.Classify(err) != cs.Absent {
					t.Errorf("call: %v", err)
				}
			}()
		}
		wg.Wait()
	}
	mu.Lock()
	defer mu.Unlock()
	if dials > parallel+2 {
		t.Errorf("%d connections dialled for 3 rounds of %d concurrent calls, want at most %d", dials, parallel, parallel+2)
	}
}
