package cosmos

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// Loopback says the endpoint is on this machine: the emulator or the test
// server, where dev may create containers and skip TLS verification.
func (c Config) Loopback() bool {
	u, err := url.Parse(c.Endpoint)
	return err == nil && isLoopback(u.Hostname())
}

// httpClient is nil (the SDK's default transport) unless the config trusts
// more CAs or skips verification on loopback.
func (c Config) httpClient() (*http.Client, error) {
	if len(c.CAFiles) == 0 && !c.InsecureLoopbackTLS {
		return nil, nil
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.InsecureLoopbackTLS {
		tlsCfg.InsecureSkipVerify = true //nolint:gosec // loopback only, checked in Validate
	} else {
		pool, err := c.rootCAs()
		if err != nil {
			return nil, err
		}
		tlsCfg.RootCAs = pool
	}
	return &http.Client{
		Timeout: 60 * time.Second,
		Transport: &http.Transport{
			Proxy:               proxyUnlessLoopback(c.Loopback()),
			TLSClientConfig:     tlsCfg,
			MaxIdleConns:        256,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
		},
	}, nil
}

// rootCAs is the system pool plus every CA file; a file that cannot be
// read or holds no certificate is an error naming it.
func (c Config) rootCAs() (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	for _, f := range c.CAFiles {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("setting %s or %s: reading CA file: %w", SettingCAFile, SettingSSLCertFile, err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("setting %s or %s: %s holds no PEM certificate", SettingCAFile, SettingSSLCertFile, f)
		}
	}
	return pool, nil
}

// proxyUnlessLoopback keeps loopback traffic off any HTTP proxy the
// environment names.
func proxyUnlessLoopback(loopback bool) func(*http.Request) (*url.URL, error) {
	if loopback {
		return nil
	}
	return http.ProxyFromEnvironment
}

// trustHint says what to set when the endpoint's certificate is not
// trusted, or "" when err is not about that.
func trustHint(err error) string {
	var (
		unknown  x509.UnknownAuthorityError
		invalid  x509.CertificateInvalidError
		hostname x509.HostnameError
		verify   *tls.CertificateVerificationError
	)
	if !errors.As(err, &unknown) && !errors.As(err, &invalid) && !errors.As(err, &hostname) && !errors.As(err, &verify) {
		return ""
	}
	return fmt.Sprintf("the endpoint's TLS certificate is not trusted: set %s (or %s) to a PEM file of its CA, "+
		"or for the emulator or the test server on loopback %s=true (or use its http:// endpoint)",
		SettingCAFile, SettingSSLCertFile, SettingInsecureLoopback)
}

// untrustedStop ends the retries of a request whose certificate is not
// trusted: every retry meets the same certificate, and the caller would
// wait out the whole backoff for the same answer.
type untrustedStop struct{}

func (untrustedStop) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err != nil && trustHint(err) != "" {
		return resp, nonRetriable{err}
	}
	return resp, err
}

// nonRetriable is azcore's mark for an error not worth retrying.
type nonRetriable struct{ error }

func (nonRetriable) NonRetriable() {}

func (e nonRetriable) Unwrap() error { return e.error }
