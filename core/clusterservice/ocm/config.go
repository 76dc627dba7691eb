package ocm

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// Setting names, shared with local.settings.json.
const (
	EnvURL           = "CLUSTERS_SERVICE_URL"
	EnvToken         = "CLUSTERS_SERVICE_TOKEN"
	EnvClientID      = "CLUSTERS_SERVICE_CLIENT_ID"
	EnvClientSecret  = "CLUSTERS_SERVICE_CLIENT_SECRET"
	EnvTokenURL      = "CLUSTERS_SERVICE_TOKEN_URL"
	EnvCAFile        = "CLUSTERS_SERVICE_CA_FILE"
	EnvInsecure      = "CLUSTERS_SERVICE_INSECURE"
	EnvRetryLimit    = "CLUSTERS_SERVICE_RETRY_LIMIT"
	EnvRetryInterval = "CLUSTERS_SERVICE_RETRY_INTERVAL"
	EnvTimeout       = "CLUSTERS_SERVICE_TIMEOUT"
	EnvIDSearch      = "CLUSTERS_SERVICE_ID_SEARCH"
)

// Defaults. The retry limit is small because the poll loop retries on its
// own next tick anyway.
const (
	DefaultRetryLimit    = 2
	DefaultRetryInterval = time.Second
	DefaultTimeout       = 30 * time.Second
)

// Config says how to reach Clusters Service. With no token and no client
// credentials the connection is unauthenticated, as ARO-HCP runs it inside
// the service mesh.
type Config struct {
	URL string

	Token        string // access or offline token
	ClientID     string // client-credentials grant, with ClientSecret
	ClientSecret string
	TokenURL     string // token endpoint; the SDK default (Red Hat SSO) when empty

	CAFile   string // extra trusted CAs (PEM), on top of the system roots
	Insecure bool   // skip TLS verification; only when explicitly asked

	RetryLimit    int           // SDK retries of 429/503 (any method) and 5xx/EOF (GET)
	RetryInterval time.Duration // first retry delay, doubled per retry
	// NoRetryJitter makes the SDK's retry delays exact instead of ±20%
	// drawn from the process's global random source: a simulation that
	// replays a seed needs them exact. Not read from the environment.
	NoRetryJitter bool
	// Timeout bounds each call (retries and pages included); a caller's
	// sooner deadline still wins.
	Timeout time.Duration
	// IDSearch is how batched reads search for ids: IDSearchOr (the
	// default, "id = 'a' or id = 'b'") or IDSearchIn ("id in ('a', 'b')").
	IDSearch string

	// Recorder receives what the transport sees of every request to CS
	// (not read from the environment: whoever builds the client hands the
	// same Recorder to those who read it); nil records nothing.
	Recorder *cs.Recorder

	// Transport, when set, carries every request instead of the SDK's
	// network transport (TLS, CA and proxy settings then do not apply):
	// how unit tests reach CS in memory (package csfake). Not read from
	// the environment.
	Transport http.RoundTripper
}

// ConfigFromEnv reads the CLUSTERS_SERVICE_* settings.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		URL:           getenv(EnvURL),
		Token:         getenv(EnvToken),
		ClientID:      getenv(EnvClientID),
		ClientSecret:  getenv(EnvClientSecret),
		TokenURL:      getenv(EnvTokenURL),
		CAFile:        getenv(EnvCAFile),
		IDSearch:      strings.ToLower(strings.TrimSpace(getenv(EnvIDSearch))),
		RetryLimit:    DefaultRetryLimit,
		RetryInterval: DefaultRetryInterval,
		Timeout:       DefaultTimeout,
	}
	if v := getenv(EnvInsecure); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Config{}, fmt.Errorf("%s=%q: want true or false", EnvInsecure, v)
		}
		c.Insecure = b
	}
	if v := getenv(EnvRetryLimit); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return Config{}, fmt.Errorf("%s=%q: want a non-negative integer", EnvRetryLimit, v)
		}
		c.RetryLimit = n
	}
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{{EnvRetryInterval, &c.RetryInterval}, {EnvTimeout, &c.Timeout}} {
		if v := getenv(d.name); v != "" {
			p, err := time.ParseDuration(v)
			if err != nil || p <= 0 {
				return Config{}, fmt.Errorf("%s=%q: want a positive duration such as 30s", d.name, v)
			}
			*d.dst = p
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate checks the settings before any connection is made; each error
// names the setting at fault.
func (c Config) Validate() error {
	if c.URL == "" {
		return fmt.Errorf("%s is required", EnvURL)
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s=%q: want an http(s) URL such as http://127.0.0.1:8000", EnvURL, c.URL)
	}
	if u.Path != "" && u.Path != "/" {
		return fmt.Errorf("%s=%q: want the service root, without a path", EnvURL, c.URL)
	}
	if (c.ClientID == "") != (c.ClientSecret == "") {
		return fmt.Errorf("%s and %s must be set together", EnvClientID, EnvClientSecret)
	}
	if c.Token != "" && c.ClientID != "" {
		return fmt.Errorf("set either %s or %s/%s, not both", EnvToken, EnvClientID, EnvClientSecret)
	}
	if c.TokenURL != "" {
		if c.Token == "" && c.ClientID == "" {
			return fmt.Errorf("%s is set but neither %s nor %s is", EnvTokenURL, EnvToken, EnvClientID)
		}
		if t, err := url.Parse(c.TokenURL); err != nil || (t.Scheme != "http" && t.Scheme != "https") || t.Host == "" {
			return fmt.Errorf("%s=%q: want an http(s) URL", EnvTokenURL, c.TokenURL)
		}
	}
	if c.RetryLimit < 0 {
		return fmt.Errorf("%s: retry limit %d is negative", EnvRetryLimit, c.RetryLimit)
	}
	if c.RetryInterval < 0 || c.Timeout < 0 {
		return fmt.Errorf("%s and %s must not be negative", EnvRetryInterval, EnvTimeout)
	}
	switch c.IDSearch {
	case "", IDSearchOr, IDSearchIn:
	default:
		return fmt.Errorf("%s=%q: want %q or %q", EnvIDSearch, c.IDSearch, IDSearchOr, IDSearchIn)
	}
	if c.CAFile != "" {
		if _, err := loadCAs(c.CAFile); err != nil {
			return err
		}
	}
	return nil
}

// authenticated reports whether the SDK's OIDC wrapper is needed.
func (c Config) authenticated() bool { return c.Token != "" || c.ClientID != "" }

func loadCAs(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %w", EnvCAFile, path, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s=%q: %w", EnvCAFile, path, errors.New("no PEM certificates in file"))
	}
	return pool, nil
}
