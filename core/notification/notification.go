// Package notification delivers ARM asynchronous-operation notifications: a
// POST of the operation-status body to the URI ARM handed the frontend in
// Azure-AsyncNotificationUri.
//
// The URI comes from a stored document, so it is treated as untrusted: only
// hosts on an allow-list are called, over HTTPS, and loopback only when the
// operator asked for it (local runs and tests).
package notification

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// DefaultAllowedHosts are ARM's front doors in the public and sovereign
// clouds; a leading "*." matches any subdomain (regional endpoints).
var DefaultAllowedHosts = []string{
	"management.azure.com", "*.management.azure.com",
	"management.usgovcloudapi.net", "*.management.usgovcloudapi.net",
	"management.chinacloudapi.cn", "*.management.chinacloudapi.cn",
}

// ErrNotAllowed marks a URI the notifier refuses to call; retrying it is
// pointless, so the lifecycle drops the URI and logs why.
var ErrNotAllowed = errors.New("notification URI not allowed")

// ErrDelivered: this notifier delivered the notification already (ARM
// answered 2xx); it is not posted again. The caller has only to clear the
// URI, which failed the first time.
var ErrDelivered = errors.New("notification already delivered")

// ErrInFlight: another call of this notifier is posting the same
// notification right now; it will record the outcome.
var ErrInFlight = errors.New("notification already being posted")

// maxRemembered bounds the delivered notifications a Notifier remembers:
// their URIs are cleared within a tick or two, and one forgotten is at
// worst posted again (delivery is at least once).
const maxRemembered = 10000

// Config says where notifications may go.
type Config struct {
	// AllowedHosts are host patterns ("host" or "*.domain"), each
	// optionally with ":port"; nil means DefaultAllowedHosts. A pattern
	// without a port admits only the scheme's default port (443): a port
	// is a different service on that host, so it must be listed itself.
	AllowedHosts []string
	// AllowLoopback permits http(s) to 127.0.0.0/8, ::1 and localhost.
	AllowLoopback bool
	// Timeout bounds one POST; 0 means 10 s.
	Timeout time.Duration
}

// ConfigFromEnv reads HCPOPS_NOTIFICATION_HOSTS (comma-separated patterns)
// and HCPOPS_NOTIFICATION_ALLOW_LOOPBACK ("true").
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	var c Config
	if v := strings.TrimSpace(getenv("HCPOPS_NOTIFICATION_HOSTS")); v != "" {
		for _, h := range strings.Split(v, ",") {
			if h = strings.ToLower(strings.TrimSpace(h)); h == "" {
				continue
			}
			if _, _, err := splitPattern(h); err != nil {
				return Config{}, fmt.Errorf("HCPOPS_NOTIFICATION_HOSTS: pattern %q: %w", h, err)
			}
			c.AllowedHosts = append(c.AllowedHosts, h)
		}
	}
	switch v := strings.ToLower(strings.TrimSpace(getenv("HCPOPS_NOTIFICATION_ALLOW_LOOPBACK"))); v {
	case "", "false", "0":
	case "true", "1":
		c.AllowLoopback = true
	default:
		return Config{}, fmt.Errorf("HCPOPS_NOTIFICATION_ALLOW_LOOPBACK=%q: want true or false", v)
	}
	return c, nil
}

// Notifier posts operation-status bodies. Within one process it posts a
// notification (URI and operation) at most once at a time, and never
// again once ARM answered 2xx: ticks that run concurrently, or one whose
// URI clear failed, then see ErrInFlight or ErrDelivered instead.
type Notifier struct {
	cfg    Config
	client *http.Client

	mu        sync.Mutex
	inFlight  map[string]bool
	delivered map[string]bool
	order     []string // delivered keys, oldest first
}

// New builds a Notifier; client nil means a client with cfg.Timeout.
func New(cfg Config, client *http.Client) *Notifier {
	if cfg.AllowedHosts == nil {
		cfg.AllowedHosts = DefaultAllowedHosts
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if client == nil {
		// Redirects are refused: a 3xx could bounce the POST off the allow-list.
		client = &http.Client{
			Timeout:       cfg.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return &Notifier{cfg: cfg, client: client, inFlight: map[string]bool{}, delivered: map[string]bool{}}
}

// Check reports whether uri may be called, with ErrNotAllowed and the reason.
func (n *Notifier) Check(uri string) error {
	u, err := url.Parse(uri)
	if err != nil {
		return fmt.Errorf("%w: %q does not parse: %v", ErrNotAllowed, uri, err)
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return fmt.Errorf("%w: %q has no host", ErrNotAllowed, uri)
	}
	if isLoopback(host) {
		if !n.cfg.AllowLoopback {
			return fmt.Errorf("%w: loopback host %q (set HCPOPS_NOTIFICATION_ALLOW_LOOPBACK=true for local runs)", ErrNotAllowed, host)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("%w: scheme %q", ErrNotAllowed, u.Scheme)
		}
		return nil
	}
	if u.Scheme != "https" {
		return fmt.Errorf("%w: scheme %q, want https", ErrNotAllowed, u.Scheme)
	}
	port, err := portOf(u)
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrNotAllowed, uri, err)
	}
	hostListed := false
	for _, p := range n.cfg.AllowedHosts {
		ph, pp, err := splitPattern(p)
		if err != nil || !hostMatches(ph, host) {
			continue
		}
		hostListed = true
		if pp == port {
			return nil
		}
	}
	if hostListed {
		return fmt.Errorf("%w: port %d of host %q is not on the allow-list (list it as %s:%d)", ErrNotAllowed, port, host, host, port)
	}
	return fmt.Errorf("%w: host %q is not on the allow-list", ErrNotAllowed, host)
}

// httpsPort is the scheme default, the only port a bare host pattern admits.
const httpsPort = 443

// portOf is the port an https URI dials, as a number so "0443" and "443"
// are one port.
func portOf(u *url.URL) (int, error) {
	p := u.Port()
	if p == "" {
		return httpsPort, nil
	}
	return parsePort(p)
}

func parsePort(p string) (int, error) {
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 || strings.ContainsAny(p, "+-") {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", p)
	}
	return n, nil
}

// splitPattern splits "host[:port]" (lower case); no port means 443.
func splitPattern(p string) (host string, port int, err error) {
	host, port = p, httpsPort
	if i := strings.LastIndexByte(p, ':'); i >= 0 {
		if port, err = parsePort(p[i+1:]); err != nil {
			return "", 0, err
		}
		host = p[:i]
	}
	if h := strings.TrimPrefix(host, "*."); h == "" || strings.ContainsAny(h, ":/*@[]") {
		return "", 0, fmt.Errorf("host %q is not a host name or *.domain", host)
	}
	return strings.ToLower(host), port, nil
}

// Notify POSTs the status body to uri. Any non-2xx answer is an error; the
// caller keeps the URI and retries on a later tick. The status line is
// the answer: the body of a 2xx is not read, so an endpoint that trickles
// it costs nothing and the delivery stands.
func (n *Notifier) Notify(ctx context.Context, uri string, status arm.OperationStatus) error {
	if err := n.Check(uri); err != nil {
		return err
	}
	key := uri + " " + status.ID
	if err := n.claim(key); err != nil {
		return fmt.Errorf("notification for %s: %w", status.Name, err)
	}
	err := n.post(ctx, uri, status)
	n.settle(key, err == nil)
	return err
}

func (n *Notifier) post(ctx context.Context, uri string, status arm.OperationStatus) error {
	body, err := status.MarshalIndent()
	if err != nil {
		return fmt.Errorf("encoding status of %s: %w", status.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, uri, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("building notification request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.client.Do(req)
	if err != nil {
		return fmt.Errorf("posting notification for %s: %w", status.Name, err)
	}
	// Closing unread drops the connection rather than wait for a body
	// that may never end.
	defer resp.Body.Close()
	// ARO-HCP fails on >= 400; a 3xx is not a delivery either, since
	// redirects are not followed.
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("posting notification for %s: ARM answered %s", status.Name, resp.Status)
	}
	return nil
}

// claim marks key in flight, or says why it must not be posted now.
func (n *Notifier) claim(key string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.delivered[key]:
		return ErrDelivered
	case n.inFlight[key]:
		return ErrInFlight
	}
	n.inFlight[key] = true
	return nil
}

// settle ends key's flight, remembering a delivery.
func (n *Notifier) settle(key string, delivered bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.inFlight, key)
	if !delivered {
		return
	}
	n.delivered[key] = true
	n.order = append(n.order, key)
	if len(n.order) > maxRemembered {
		delete(n.delivered, n.order[0])
		n.order = n.order[1:]
	}
}

func hostMatches(pattern, host string) bool {
	if rest, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+rest)
	}
	return pattern == host
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
