package cosmos

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// Setting names, shared with function.json and local.settings.json: the
// Functions host resolves the change-feed binding's connection the same way.
const (
	SettingConnectionString = "CosmosDB"
	SettingEndpoint         = "CosmosDB__accountEndpoint"
	SettingCredential       = "CosmosDB__credential"
	SettingClientID         = "CosmosDB__clientId"
	SettingDatabase         = "COSMOS_DATABASE"
	// SettingCAFile names a PEM file of CAs to trust beside the system's,
	// for an endpoint with a private CA (the emulator's exported cert).
	SettingCAFile = "COSMOS_CA_FILE"
	// SettingSSLCertFile is OpenSSL's variable, which Go's system pool
	// honours; read here too so it also works from local.settings.json.
	SettingSSLCertFile = "SSL_CERT_FILE"
	// SettingInsecureLoopback skips TLS verification, for the emulator and
	// the test server on loopback only.
	SettingInsecureLoopback = "COSMOS_INSECURE_LOOPBACK"
)

// Container names, fixed by ARO-HCP's data model.
const (
	ResourcesContainer = "Resources"
	LeasesContainer    = "leases"
)

// CredentialManagedIdentity is the only value CosmosDB__credential takes.
const CredentialManagedIdentity = "managedidentity"

// ErrNotConfigured says no Cosmos connection is set, so the caller should
// use the embedded store instead.
var ErrNotConfigured = errors.New("no Cosmos DB connection configured")

// Defaults for the retry bound on throttled (429) and unavailable (503) answers.
const (
	DefaultMaxRetries    = 5
	DefaultRetryDelay    = 200 * time.Millisecond
	DefaultMaxRetryDelay = 10 * time.Second
	DefaultPageSize      = 100
)

// Config says where the store lives and how to authenticate.
type Config struct {
	// Endpoint is the account URL, e.g. https://myaccount.documents.azure.com:443/.
	Endpoint string
	// Key is the account key; empty means identity-based access (azidentity).
	Key string
	// Credential is "" or CredentialManagedIdentity.
	Credential string
	// ClientID selects a user-assigned managed identity.
	ClientID string
	// Database holds the Resources and leases containers.
	Database string

	// MaxRetries bounds retries of 429/503 answers: 0 means DefaultMaxRetries,
	// negative means none.
	MaxRetries int32
	// RetryDelay and MaxRetryDelay shape the backoff; 0 means the defaults.
	// A service-sent retry-after takes precedence, capped by MaxRetryDelay.
	RetryDelay    time.Duration
	MaxRetryDelay time.Duration
	// PageSize is the query page size when the caller gives none.
	PageSize int

	// CAFiles are PEM files of CAs trusted beside the system pool
	// (COSMOS_CA_FILE, SSL_CERT_FILE).
	CAFiles []string
	// InsecureLoopbackTLS skips TLS verification, for the emulator and the
	// local test server whose certificates are self-signed (the test
	// server's has expired): Validate refuses it for any endpoint that is
	// not a loopback address.
	InsecureLoopbackTLS bool
}

// ConfigFromEnv reads the Cosmos settings through getenv (os.Getenv in
// production). It returns ErrNotConfigured when neither CosmosDB nor
// CosmosDB__accountEndpoint is set.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	var cfg Config
	if cs := strings.TrimSpace(getenv(SettingConnectionString)); cs != "" {
		endpoint, key, err := parseConnectionString(cs)
		if err != nil {
			return Config{}, fmt.Errorf("setting %s: %w", SettingConnectionString, err)
		}
		cfg.Endpoint, cfg.Key = endpoint, key
	} else if endpoint := strings.TrimSpace(getenv(SettingEndpoint)); endpoint != "" {
		cfg.Endpoint = endpoint
		cfg.Credential = strings.ToLower(strings.TrimSpace(getenv(SettingCredential)))
		cfg.ClientID = strings.TrimSpace(getenv(SettingClientID))
	} else {
		return Config{}, fmt.Errorf("%w: set %s or %s", ErrNotConfigured, SettingConnectionString, SettingEndpoint)
	}
	cfg.Database = strings.TrimSpace(getenv(SettingDatabase))
	for _, name := range []string{SettingCAFile, SettingSSLCertFile} {
		if f := strings.TrimSpace(getenv(name)); f != "" {
			cfg.CAFiles = append(cfg.CAFiles, f)
		}
	}
	switch v := strings.TrimSpace(getenv(SettingInsecureLoopback)); strings.ToLower(v) {
	case "", "false":
	case "true":
		cfg.InsecureLoopbackTLS = true
	default:
		return Config{}, fmt.Errorf("setting %s: %q is not true or false", SettingInsecureLoopback, v)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Validate checks every field and names the setting at fault.
func (c Config) Validate() error {
	u, err := url.Parse(c.Endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("setting %s: endpoint %q is not an http(s) URL with a host", endpointSetting(c), c.Endpoint)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return fmt.Errorf("setting %s: endpoint %q uses plain http, allowed only on loopback", endpointSetting(c), c.Endpoint)
	}
	if c.Key == "" {
		switch c.Credential {
		case "", CredentialManagedIdentity:
		default:
			return fmt.Errorf("setting %s: credential %q is not supported, want %q or unset", SettingCredential, c.Credential, CredentialManagedIdentity)
		}
	}
	if c.Database == "" {
		return fmt.Errorf("setting %s: database name is empty", SettingDatabase)
	}
	if c.InsecureLoopbackTLS && !isLoopback(u.Hostname()) {
		return fmt.Errorf("setting %s: skipping TLS verification is for a loopback emulator or test server only, and endpoint %s is on %q; trust its CA with %s instead",
			SettingInsecureLoopback, c.Endpoint, u.Hostname(), SettingCAFile)
	}
	if c.PageSize < 0 {
		return fmt.Errorf("page size %d is negative", c.PageSize)
	}
	return nil
}

func endpointSetting(c Config) string {
	if c.Key != "" {
		return SettingConnectionString + " (AccountEndpoint)"
	}
	return SettingEndpoint
}

// parseConnectionString reads AccountEndpoint=...;AccountKey=...; and never
// echoes the key in errors.
func parseConnectionString(cs string) (endpoint, key string, err error) {
	for _, part := range strings.Split(cs, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			return "", "", fmt.Errorf("connection string part %q is not name=value", redactPart(part))
		}
		switch {
		case strings.EqualFold(name, "AccountEndpoint"):
			endpoint = value
		case strings.EqualFold(name, "AccountKey"):
			key = value
		}
	}
	if endpoint == "" {
		return "", "", errors.New("connection string has no AccountEndpoint")
	}
	if key == "" {
		return "", "", errors.New("connection string has no AccountKey")
	}
	return endpoint, key, nil
}

// redactPart keeps a malformed part recognisable without leaking a secret.
func redactPart(part string) string {
	if len(part) <= 8 {
		return part
	}
	return part[:8] + "..."
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tokenCredential picks the identity for keyless access: a managed identity
// (user-assigned when ClientID is set) when asked for one or when a client
// id is given, else DefaultAzureCredential.
func (c Config) tokenCredential() (azcore.TokenCredential, error) {
	if c.Credential == CredentialManagedIdentity || c.ClientID != "" {
		opts := &azidentity.ManagedIdentityCredentialOptions{}
		if c.ClientID != "" {
			opts.ID = azidentity.ClientID(c.ClientID)
		}
		cred, err := azidentity.NewManagedIdentityCredential(opts)
		if err != nil {
			return nil, fmt.Errorf("creating managed identity credential (client id %q): %w", c.ClientID, err)
		}
		return cred, nil
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return nil, fmt.Errorf("creating default Azure credential: %w", err)
	}
	return cred, nil
}
