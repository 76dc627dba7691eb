package triggerhost

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/google/uuid"
)

// forwarder is the host's public HTTP side. For HTTP-only functions with
// enableForwardingHttpRequest a matching request is replayed on the same
// path to the handler (method, headers, query, body) plus the host's
// headers, and the handler's answer goes back as is, redirects included.
// Other HTTP functions get the request in an invocation envelope.
type forwarder struct {
	host   *Host
	routes []route
	proxy  *httputil.ReverseProxy
	// names are the Host values served: the loopback names of the
	// address listened on, lower-case.
	names map[string]bool
}

func newForwarder(h *Host, routes []route, listening net.Addr) *forwarder {
	f := &forwarder{host: h, routes: routes, names: loopbackNames(listening)}
	f.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			target, _ := url.Parse(h.endpoint.BaseURL())
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host // the host copies every original header, Host too
			h.invoker.setHeaders(pr.Out.Header, uuid.NewString())
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			h.logger.LogAttrs(r.Context(), slog.LevelError, "forwarding to the custom handler failed",
				slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("error", err))
			http.Error(w, "custom handler unavailable: "+err.Error(), http.StatusBadGateway)
		},
		ErrorLog: slog.NewLogLogger(h.logger.Handler(), slog.LevelWarn),
	}
	return f
}

// loopbackNames are the Host values a browser sends to addr: its IP and
// port, and localhost for the addresses localhost resolves to; the bare
// names too on port 80, where browsers leave the port out.
func loopbackNames(addr net.Addr) map[string]bool {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return map[string]bool{}
	}
	hosts := []string{host}
	if ip := net.ParseIP(host); ip != nil && (ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback)) {
		hosts = append(hosts, "localhost")
	}
	names := map[string]bool{}
	for _, h := range hosts {
		names[strings.ToLower(net.JoinHostPort(h, port))] = true
		if port == "80" {
			names[strings.ToLower(h)] = true
			if strings.Contains(h, ":") {
				names["["+strings.ToLower(h)+"]"] = true
			}
		}
	}
	return names
}

func (f *forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A page elsewhere can point a name of its own at 127.0.0.1 (DNS
	// rebinding) and read the answers, the simulator's kubeconfigs
	// included; its requests carry that name, which is refused.
	if !f.names[strings.ToLower(r.Host)] {
		f.host.logger.LogAttrs(r.Context(), slog.LevelWarn, "front door refused a request for another host name",
			slog.String("host", r.Host), slog.String("method", r.Method), slog.String("path", r.URL.Path))
		http.Error(w, fmt.Sprintf("host %q is not served here: use %s", r.Host, f.host.FrontURL()), http.StatusForbidden)
		return
	}
	var allowed []string
	for _, rt := range f.routes {
		params, ok := rt.match(r.URL.Path)
		if !ok {
			continue
		}
		if !rt.allows(r.Method) {
			allowed = append(allowed, rt.methods...)
			continue
		}
		if err := f.host.endpoint.Ready(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		f.host.logger.LogAttrs(r.Context(), slog.LevelDebug, "HTTP request", slog.String("function", rt.function),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Bool("forwarded", rt.forward))
		if rt.forward {
			f.proxy.ServeHTTP(w, r)
		} else {
			f.host.serveEnvelope(w, r, rt, params)
		}
		return
	}
	if len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		http.Error(w, fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path), http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == "/" && r.Method == http.MethodGet {
		fmt.Fprintf(w, "hcpopsctl dev: Functions host (local) is running; routes:\n")
		for _, rt := range f.routes {
			fmt.Fprintf(w, "  %s %s -> %s\n", methodsLabel(rt.methods), rt.template, rt.function)
		}
		return
	}
	http.Error(w, fmt.Sprintf("no function route matches %s %s", r.Method, r.URL.Path), http.StatusNotFound)
}

func methodsLabel(m []string) string {
	if len(m) == 0 {
		return "*"
	}
	return strings.Join(m, ",")
}
