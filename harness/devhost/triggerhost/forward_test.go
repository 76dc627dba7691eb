package triggerhost

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/harness/devhost/functionapp"
)

const statusFunction = `{"bindings":[
 {"type":"httpTrigger","direction":"in","name":"req","authLevel":"anonymous","methods":["get"],
  "route":"subscriptions/{subscriptionId}/providers/Microsoft.RedHatOpenShift/locations/{location}/hcpOperationStatuses/{operationId}"},
 {"type":"http","direction":"out","name":"res"}]}`

func TestForwardingReplaysRequestsOnTheSamePath(t *testing.T) {
	tests := []struct {
		name, prefixJSON, pathPrefix string
	}{
		{"empty route prefix", `,"extensions":{"http":{"routePrefix":""}}`, ""},
		{"default api prefix", ``, "/api"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			host := `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"hcpops"},"enableForwardingHttpRequest":true}` + tc.prefixJSON + `}`
			app := writeApp(t, host, map[string]string{"operationStatus": statusFunction})
			th := newTestHandler()
			th.setRespond(func(r recorded) (int, string) { return http.StatusTeapot, `{"status":"Succeeded"}` })
			h := startHost(t, Config{App: app, Worker: th.worker(), StateDir: t.TempDir(), HTTPAddr: "127.0.0.1:0"})

			path := tc.pathPrefix + "/subscriptions/SUB/providers/microsoft.redhatopenshift/locations/eastus/hcpOperationStatuses/op-1"
			req, _ := http.NewRequest(http.MethodGet, h.FrontURL()+path+"?api-version=2024-06-10-preview", nil)
			req.Header.Set("X-Ms-Home-Tenant-Id", "tenant-1")
			resp, err := http.DefaultClient.Do(req)
			must(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusTeapot || string(body) != `{"status":"Succeeded"}` {
				t.Errorf("client got %d %s, want the handler's 418 and body as is", resp.StatusCode, body)
			}

			got := th.next(t)
			if got.Method != http.MethodGet || got.Path != path || got.Query != "api-version=2024-06-10-preview" {
				t.Errorf("handler got %s %s?%s, want GET %s?api-version=...", got.Method, got.Path, got.Query, path)
			}
			if got.Header.Get("X-Ms-Home-Tenant-Id") != "tenant-1" {
				t.Error("client header not forwarded")
			}
			if !uuidRE.MatchString(got.Header.Get(events.HeaderInvocationID)) || got.Header.Get(events.HeaderHostVersion) != DefaultHostVersion {
				t.Errorf("host headers missing: %v", got.Header)
			}
		})
	}
}

func TestForwardingRefusals(t *testing.T) {
	host := `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"hcpops"},"enableForwardingHttpRequest":true},"extensions":{"http":{"routePrefix":""}}}`
	app := writeApp(t, host, map[string]string{"operationStatus": statusFunction})
	th := newTestHandler()
	th.setRespond(func(r recorded) (int, string) { return http.StatusFound, `` })
	h := startHost(t, Config{App: app, Worker: th.worker(), StateDir: t.TempDir(), HTTPAddr: "127.0.0.1:0"})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	good := "/subscriptions/s/providers/Microsoft.RedHatOpenShift/locations/l/hcpOperationStatuses/o"

	tests := []struct {
		method, path string
		redirect     string
		status       int
		reaches      bool
	}{
		{http.MethodPost, good, "", http.StatusMethodNotAllowed, false},
		{http.MethodGet, "/subscriptions/s/providers/Microsoft.RedHatOpenShift/locations/l/other/o", "", http.StatusNotFound, false},
		{http.MethodGet, good + "/extra", "", http.StatusNotFound, false},
		{http.MethodGet, good, "https://example.invalid/next", http.StatusFound, true},
	}
	for _, tc := range tests {
		req, _ := http.NewRequest(tc.method, h.FrontURL()+tc.path, strings.NewReader("x"))
		if tc.redirect != "" {
			req.Header.Set("X-Test-Redirect", tc.redirect)
		}
		resp, err := client.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
		}
		if tc.redirect != "" && resp.Header.Get("Location") != tc.redirect {
			t.Errorf("redirect Location %q not passed back as is", resp.Header.Get("Location"))
		}
		if tc.reaches {
			th.next(t)
		}
	}
	th.noneQueued(t) // every response is in: nothing else reached the handler
}

func TestRouteMatching(t *testing.T) {
	fn := func(route string) functionapp.Function {
		return functionapp.Function{Name: "f", Bindings: []functionapp.Binding{{Type: functionapp.TypeHTTPTrigger, Direction: "in", Name: "req", Route: route}}}
	}
	tests := []struct {
		prefix, route, path string
		match               bool
	}{
		{"api", "things/{id}", "/api/things/7", true},
		{"api", "things/{id}", "/API/Things/7/", true},
		{"api", "things/{id}", "/things/7", false},
		{"", "things/{id:int}", "/things/7", true},
		{"", "things/{id}", "/things", false},
		{"", "things/{id?}", "/things", true},
		{"", "files/{*rest}", "/files/a/b/c", true},
		{"", "files/{*rest}", "/files", true},
		{"", "files/{*rest}", "/other/a", false},
	}
	for _, tc := range tests {
		r, err := parseRoute(fn(tc.route), tc.prefix)
		if err != nil {
			t.Fatalf("parseRoute(%q): %v", tc.route, err)
		}
		if _, got := r.match(tc.path); got != tc.match {
			t.Errorf("route %q under %q matching %q = %v, want %v", tc.route, tc.prefix, tc.path, got, tc.match)
		}
	}
	r, _ := parseRoute(fn("subs/{sub}/ops/{op:guid}/{*rest}"), "api")
	params, ok := r.match("/api/subs/S1/ops/O1/a/b")
	if !ok || params["sub"] != "S1" || params["op"] != "O1" || params["rest"] != "a/b" {
		t.Errorf("params = %v (match %v)", params, ok)
	}
	for _, bad := range []string{"a/{*rest}/b", "a/{id?}/b", "a/x{id}", "a/{id", "a//b", "a/{}"} {
		if _, err := parseRoute(fn(bad), ""); err == nil {
			t.Errorf("parseRoute(%q) succeeded, want an error", bad)
		}
	}
}

// TestFrontDoorChecksHost: a page on another origin can point its own DNS
// name at 127.0.0.1 (DNS rebinding); its requests then carry that name as
// Host. Only the loopback names the front door listens on are served.
func TestFrontDoorChecksHost(t *testing.T) {
	host := `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"hcpops"},"enableForwardingHttpRequest":true},"extensions":{"http":{"routePrefix":""}}}`
	app := writeApp(t, host, map[string]string{"operationStatus": statusFunction})
	th := newTestHandler()
	th.setRespond(func(r recorded) (int, string) { return http.StatusOK, `{"status":"Succeeded"}` })
	h := startHost(t, Config{App: app, Worker: th.worker(), StateDir: t.TempDir(), HTTPAddr: "127.0.0.1:0"})
	front := strings.TrimPrefix(h.FrontURL(), "http://")
	_, port, _ := strings.Cut(front, ":")
	path := "/subscriptions/s/providers/Microsoft.RedHatOpenShift/locations/l/hcpOperationStatuses/o"
	for _, tc := range []struct {
		host string
		want int
	}{
		{front, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
		{"LOCALHOST:" + port, http.StatusOK},
		{"attacker.example:" + port, http.StatusForbidden},
		{"attacker.example", http.StatusForbidden},
		{"127.0.0.1.nip.io:" + port, http.StatusForbidden},
		{"127.0.0.1:1", http.StatusForbidden},   // another port: another origin
		{"[::1]:" + port, http.StatusForbidden}, // not a name this door listens on
	} {
		for _, p := range []string{path, "/"} {
			req, _ := http.NewRequest(http.MethodGet, h.FrontURL()+p, nil)
			req.Host = tc.host
			resp, err := http.DefaultClient.Do(req)
			must(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("GET %s with Host %q: %d %s, want %d", p, tc.host, resp.StatusCode, body, tc.want)
			}
			if tc.want == http.StatusOK && p == path {
				th.next(t)
			}
		}
	}
	th.noneQueued(t)
}
