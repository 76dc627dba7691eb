package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/simulator"
)

// simProxy stands in front of the simulator and, once set, rewrites the
// answers to the requests its rule picks.
type simProxy struct {
	sim  atomic.Pointer[simulator.Simulator]
	mu   sync.Mutex
	pick func(*http.Request) bool
	rule func(status int, body []byte) (int, string, []byte) // status, content type ("" keeps it), body
}

func (p *simProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	p.sim.Load().ServeHTTP(rec, r)
	status, ctype, body := rec.Code, rec.Header().Get("Content-Type"), rec.Body.Bytes()
	p.mu.Lock()
	pick, rule := p.pick, p.rule
	p.mu.Unlock()
	if rule != nil && pick(r) {
		var c string
		status, c, body = rule(status, body)
		if c != "" {
			ctype = c
		}
	}
	if ctype != "" {
		w.Header().Set("Content-Type", ctype)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (p *simProxy) set(pick func(*http.Request) bool, rule func(int, []byte) (int, string, []byte)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pick, p.rule = pick, rule
}

// newProxiedRig is newARMRig with Clusters Service reached through a
// simProxy.
func newProxiedRig(t *testing.T) (*armRig, *simProxy) {
	t.Helper()
	p := &simProxy{}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	r := newARMRig(t, map[string]string{"CLUSTERS_SERVICE_URL": srv.URL})
	p.sim.Store(r.Sim)
	return r, p
}

func credentialReads(r *http.Request) bool {
	return strings.Contains(r.URL.Path, "/break_glass_credentials")
}

// leaked returns the first substring of secret, minLeak bytes or more,
// that text contains.
func leaked(text, secret string) string {
	const minLeak = 8
	for i := 0; i+minLeak <= len(secret); i++ {
		if strings.Contains(text, secret[i:i+minLeak]) {
			return secret[i : i+minLeak]
		}
	}
	return ""
}

// TestCredentialNeverLeaks: Clusters Service answers the break-glass
// credential read with malformed bodies of many shapes, each holding the
// credential's token. No log line and no answer to ARM carries 8 bytes of
// it in a row: decode failures are described (status, length, the field
// that failed), never quoted.
func TestCredentialNeverLeaks(t *testing.T) {
	r, m := newProxiedRig(t)
	ctx := context.Background()
	id := clusterRID("leak")
	r.drive(r.accepted(r.fe.PutCluster(ctx, id, frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable"}, r.opts())))
	cred := r.accepted(r.fe.RequestCredential(ctx, id, r.opts()))
	r.drive(cred)
	var raw []byte
	m.set(credentialReads, func(status int, body []byte) (int, string, []byte) { raw = bytes.Clone(body); return status, "", body })
	got := r.get(resultPath(cred.Name()), caller()...)
	var c struct{ Kubeconfig string }
	if got.status != http.StatusOK || json.Unmarshal(got.body, &c) != nil {
		t.Fatalf("the credential result before any mangling: %d %s", got.status, got.body)
	}
	_, token, ok := strings.Cut(c.Kubeconfig, "token: ")
	token = strings.TrimPrefix(strings.TrimSpace(token), "sha256~") // the secret part
	if !ok || len(token) < 32 || !bytes.Contains(raw, []byte(token)) {
		t.Fatalf("no token in the credential CS sent: %q", raw)
	}
	at := bytes.Index(raw, []byte(token))

	type shape struct {
		name   string
		status int
		ctype  string
		body   []byte
	}
	var shapes []shape
	for cut := 50; cut < len(raw); cut += 50 {
		shapes = append(shapes, shape{fmt.Sprintf("cut at %d", cut), 200, "", raw[:cut]})
	}
	for _, cut := range []int{at + 1, at + 8, at + 32, at + len(token), at + len(token) + 1, 700} {
		if cut < len(raw) {
			shapes = append(shapes, shape{fmt.Sprintf("cut at %d (in the token)", cut), 200, "", raw[:cut]})
		}
	}
	with := func(after string) []byte { // the token, then something else
		return append(append(bytes.Clone(raw[:at+len(token)]), after...), raw[at+len(token):]...)
	}
	shapes = append(shapes,
		shape{"bad escape after the token", 200, "", with(`\q`)},
		shape{"bad unicode escape after the token", 200, "", with(`\u12`)},
		shape{"control byte after the token", 200, "", with("\x01")},
		shape{"invalid UTF-8 after the token", 200, "", with("\xff\xfe")},
		shape{"garbage after the object", 200, "", append(bytes.Clone(raw), ` {"more": `...)},
		shape{"a field of the wrong type after the kubeconfig", 200, "",
			bytes.Replace(raw, []byte(`"kubeconfig"`), []byte(`"expiration_timestamp":[1,2],"kubeconfig"`), 1)},
		shape{"HTML holding the token", 200, "", []byte("<html><body>token " + token + "</body></html>")},
		shape{"text/plain holding the token", 200, "text/plain", raw},
		shape{"error status with the credential as its body", 500, "", raw},
		shape{"error status with a cut credential", 503, "", raw[:at+16]},
		shape{"the token unquoted", 200, "", []byte(`{"kind":"BreakGlassCredential","kubeconfig":` + token + `}`)},
	)
	for _, sh := range shapes {
		before := len(r.Logs.String())
		m.set(credentialReads, func(int, []byte) (int, string, []byte) { return sh.status, sh.ctype, sh.body })
		got := r.get(resultPath(cred.Name()), caller()...)
		if got.status == http.StatusOK {
			t.Errorf("%s: 200 from a malformed credential: %s", sh.name, got.body)
			continue
		}
		if s := leaked(string(got.body), token); s != "" {
			t.Errorf("%s: the answer to ARM carries %q of the token: %s", sh.name, s, got.body)
		}
		logs := r.Logs.String()[before:]
		if s := leaked(logs, token); s != "" {
			t.Errorf("%s: a log line carries %q of the token:\n%s", sh.name, s, logs)
		}
		if !strings.Contains(logs, "break-glass credential") {
			t.Errorf("%s: no log line says the credential could not be read:\n%s", sh.name, logs)
		}
	}
}
