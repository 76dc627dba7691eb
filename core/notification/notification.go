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
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
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

// Config says where notifications may go.
type Config struct {
	// AllowedHosts are host patterns ("host" or "*.domain"); nil means
	// DefaultAllowedHosts.
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
			if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
				c.AllowedHosts = append(c.AllowedHosts, h)
			}
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

// Notifier posts operation-status bodies.
type Notifier struct {
	cfg    Config
	client *http.Client
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
	return &Notifier{cfg: cfg, client: client}
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
	for _, p := range n.cfg.AllowedHosts {
		if hostMatches(p, host) {
			return nil
		}
	}
	return fmt.Errorf("%w: host %q is not on the allow-list", ErrNotAllowed, host)
}

// Notify POSTs the status body to uri. Any non-2xx answer is an error; the
// caller keeps the URI and retries on a later tick.
func (n *Notifier) Notify(ctx context.Context, uri string, status arm.OperationStatus) error {
	if err := n.Check(uri); err != nil {
		return err
	}
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
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	// ARO-HCP fails on >= 400; a 3xx is not a delivery either, since
	// redirects are not followed.
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("posting notification for %s: ARM answered %s", status.Name, resp.Status)
	}
	return nil
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
