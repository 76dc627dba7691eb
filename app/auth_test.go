package app_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/auth"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/apptest"
	"github.com/hcpops/hcpops/harness/store/embedded/embeddedtest"
	"github.com/hcpops/hcpops/harness/store/memory"
)

// readCounting counts point reads, to show a refused caller reads nothing.
type readCounting struct {
	store.Store
	gets atomic.Int64
}

func (c *readCounting) Get(ctx context.Context, pk, id string) (store.Item, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, pk, id)
}

func newAuthRig(t *testing.T, env map[string]string) (*apptest.Rig, *readCounting) {
	t.Helper()
	st := embeddedtest.Open(t)
	counting := &readCounting{Store: st}
	r := apptest.New(t, apptest.Options{Settings: apptest.SettingsOf(env), Parts: app.Parts{Store: counting}})
	r.Submit()
	return r, counting
}

// getStatus sends ARM's status GET with exactly the headers given (no
// principal unless one is among them).
func getStatus(t *testing.T, r *apptest.Rig, header map[string]string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.Handler.URL+statusPath()+"?api-version=2024-06-10-preview", nil)
	req.Header.Set("X-Ms-Home-Tenant-Id", tenant)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// TestCallerCheck: the HTTP functions accept only ARM's application, with
// ARM's error body otherwise and no store read; the visibility rules
// still apply to ARM's requests.
func TestCallerCheck(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	for _, tc := range []struct {
		name      string
		principal string // "" sends none
		want      int
		wantCode  string
		wantLog   string
	}{
		{"no principal", "", 401, "AuthenticationFailed", "no X-MS-CLIENT-PRINCIPAL header"},
		{"another application", apptest.Principal("0b7c5e3d-1111-4222-8333-444455556666"), 403, "AuthorizationFailed", "application 0b7c5e3d-1111-4222-8333-444455556666 is not in HCPOPS_ARM_CLIENT_APP_IDS"},
		{"not base64", "%%%not-base64", 401, "AuthenticationFailed", "malformed: not base64"},
		{"not JSON", b64([]byte("appid=" + armAppID)), 401, "AuthenticationFailed", "malformed: not a JSON object"},
		{"no claims", b64([]byte(`{"auth_typ":"aad","claims":[]}`)), 401, "AuthenticationFailed", "malformed: no claims"},
		{"no application claim", b64([]byte(`{"auth_typ":"aad","claims":[{"typ":"oid","val":"x"}]}`)), 403, "AuthorizationFailed", "names no application"},
		{"ARM by azp (v2 token)", b64([]byte(`{"auth_typ":"aad","claims":[{"typ":"azp","val":"` + strings.ToUpper(armAppID) + `"}]}`)), 200, "", ""},
		{"ARM", apptest.Principal(armAppID), 200, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, counting := newAuthRig(t, nil)
			before := counting.gets.Load()
			h := map[string]string{}
			if tc.principal != "" {
				h[auth.HeaderClientPrincipal] = tc.principal
			}
			status, body := getStatus(t, r, h)
			if status != tc.want {
				t.Fatalf("status %d %s, want %d", status, body, tc.want)
			}
			if tc.want == 200 {
				if counting.gets.Load() == before {
					t.Error("an accepted caller's read did not reach the store")
				}
				return
			}
			var e struct {
				Error struct{ Code, Message string }
			}
			if json.Unmarshal(body, &e) != nil || e.Error.Code != tc.wantCode || e.Error.Message == "" {
				t.Errorf("body %s, want ARM's error shape with code %s", body, tc.wantCode)
			}
			if n := counting.gets.Load() - before; n != 0 {
				t.Errorf("a refused caller caused %d store reads", n)
			}
			line := r.Logs.Named(t, "request", 1)[0]
			if line["level"] != "WARN" || !strings.Contains(line["error"].(string), tc.wantLog) {
				t.Errorf("log line %v, want a WARN naming %q", line, tc.wantLog)
			}
		})
	}
}

// TestCallerCheckKeepsVisibilityRules: ARM's principal gets in, and ARM's
// rules still hide another tenant's operation (404, empty body).
func TestCallerCheckKeepsVisibilityRules(t *testing.T) {
	r, _ := newAuthRig(t, nil)
	status, body := getStatus(t, r, map[string]string{auth.HeaderClientPrincipal: apptest.Principal(armAppID),
		"X-Ms-Home-Tenant-Id": "00000000-0000-0000-0000-000000000000"})
	if status != http.StatusNotFound || len(body) != 0 {
		t.Errorf("another tenant: %d %q, want 404 with an empty body", status, body)
	}
}

// TestNoEnvelopeForm: the host forwards the HTTP functions, so their
// envelope form (forwarding off) is no way around the caller check: a
// POST /operationStatus is refused, with or without a principal, and
// reads nothing.
func TestNoEnvelopeForm(t *testing.T) {
	r, counting := newAuthRig(t, nil)
	env := readFile(t, "../events/testdata/http-request.json")
	withPrincipal := bytes.Replace(env, []byte(`"Accept": ["application/json"],`),
		[]byte(`"Accept": ["application/json"], "X-MS-CLIENT-PRINCIPAL": ["`+apptest.Principal(armAppID)+`"],`), 1)
	for _, body := range [][]byte{env, withPrincipal} {
		before := counting.gets.Load()
		resp, out := r.Post("/operationStatus", body)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(out), "enableForwardingHttpRequest") {
			t.Errorf("POST /operationStatus: %d %s, want a 404 naming forwarding", resp.StatusCode, out)
		}
		if reads := counting.gets.Load() - before; reads != 0 {
			t.Errorf("an invocation of a forwarded function read the store %d times", reads)
		}
	}
}

// TestCallerCheckOff: HCPOPS_AUTH=none is today's behaviour, announced by
// a warning at start.
func TestCallerCheckOff(t *testing.T) {
	r, _ := newAuthRig(t, map[string]string{"HCPOPS_AUTH": "none"})
	if status, body := getStatus(t, r, nil); status != http.StatusOK {
		t.Fatalf("no principal with HCPOPS_AUTH=none: %d %s", status, body)
	}
	var warned bool
	for _, l := range r.Logs.Records(t) {
		warned = warned || l["level"] == "WARN" && strings.Contains(l["msg"].(string), "HCPOPS_AUTH=none")
	}
	if !warned {
		t.Error("no warning at start")
	}
}

// TestCallerCheckClosedWithoutAppIDs: required (the default) with no
// application allowed refuses every caller and says so at start at Error.
func TestCallerCheckClosedWithoutAppIDs(t *testing.T) {
	r, _ := newAuthRig(t, map[string]string{"HCPOPS_ARM_CLIENT_APP_IDS": ""})
	if status, _ := getStatus(t, r, map[string]string{auth.HeaderClientPrincipal: apptest.Principal(armAppID)}); status != http.StatusForbidden {
		t.Errorf("status %d, want 403", status)
	}
	var loud bool
	for _, l := range r.Logs.Records(t) {
		loud = loud || l["level"] == "ERROR" && strings.Contains(l["msg"].(string), "HCPOPS_ARM_CLIENT_APP_IDS is empty")
	}
	if !loud {
		t.Error("no error at start")
	}
}

// TestTriggersNeedNoPrincipal: the host's trigger invocations come over
// loopback without one and are served as before.
func TestTriggersNeedNoPrincipal(t *testing.T) {
	r, _ := newAuthRig(t, nil)
	for _, path := range []string{"/pollOperations", "/dispatchOperations"} {
		body := readFile(t, "../events/testdata/tick.json")
		if path == "/dispatchOperations" {
			body = []byte(`{"Data":{"documents":"[]"}}`)
		}
		resp, err := http.Post(r.Handler.URL+path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s without a principal: %d", path, resp.StatusCode)
		}
	}
}

// TestAuthSettingsAreChecked: a typo in HCPOPS_AUTH or an id that is not
// one stops the app from starting, naming the setting and value, before
// anything is opened; with other bad settings beside it, every one is
// named at once.
func TestAuthSettingsAreChecked(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{"HCPOPS_AUTH": "off"}, []string{`HCPOPS_AUTH="off"`}},
		{map[string]string{"HCPOPS_ARM_CLIENT_APP_IDS": armAppID + ",arm"}, []string{`HCPOPS_ARM_CLIENT_APP_IDS: "arm"`}},
		{map[string]string{"HCPOPS_AUTH": "off", "HCPOPS_CREATE_DEADLINE": "soon", "HCPOPS_NOTIFY_BACKOFF_MAX": "-1s"},
			[]string{`HCPOPS_AUTH="off"`, "HCPOPS_CREATE_DEADLINE", "HCPOPS_NOTIFY_BACKOFF_MAX"}},
	} {
		tc.env["CLUSTERS_SERVICE_URL"] = "http://127.0.0.1:9"
		opened := false
		_, err := app.New(t.Context(), func(k string) string { return tc.env[k] }, slog.New(slog.DiscardHandler),
			app.Parts{OpenStore: func(context.Context, func(string) string, *slog.Logger) (store.Store, string, error) {
				opened = true
				return memory.New(), "memory", nil
			}})
		for _, want := range tc.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%v: error %v, want one naming %s", tc.env, err, want)
			}
		}
		if opened {
			t.Errorf("%v: the store was opened before the settings were checked", tc.env)
		}
	}
}
