package cosmos

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store"
)

// fakeAccount is a TLS server on loopback that answers like an account
// holding nothing: its own certificate is what the client must trust.
func fakeAccount(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/" {
			host := "https://" + r.Host + "/"
			_, _ = w.Write([]byte(`{"id":"fake","writableLocations":[{"name":"local","databaseAccountEndpoint":"` + host +
				`"}],"readableLocations":[{"name":"local","databaseAccountEndpoint":"` + host + `"}],"enableMultipleWriteLocations":false}`))
			return
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"code":"NotFound","message":"Entity with the specified id does not exist in the system."}`))
	}))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return srv, ca
}

// TestTrustSettings: an endpoint with a private CA is refused with a hint
// naming the settings, and trusted through COSMOS_CA_FILE, SSL_CERT_FILE
// or, on loopback, COSMOS_INSECURE_LOOPBACK.
func TestTrustSettings(t *testing.T) {
	srv, ca := fakeAccount(t)
	base := map[string]string{"CosmosDB": "AccountEndpoint=" + srv.URL + "/;AccountKey=" + testKey, "COSMOS_DATABASE": "db"}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for k, v := range base {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name    string
		env     map[string]string
		trusted bool
	}{
		{"system roots only", base, false},
		{"COSMOS_CA_FILE", with(SettingCAFile, ca), true},
		{"SSL_CERT_FILE", with(SettingSSLCertFile, ca), true},
		{"COSMOS_INSECURE_LOOPBACK", with(SettingInsecureLoopback, "true"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ConfigFromEnv(env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			cfg.MaxRetries = -1
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err = s.Get(ctx, "pk", "missing")
			if tc.trusted {
				if !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("Get over a trusted connection = %v, want ErrNotFound from the server", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "x509") ||
				!strings.Contains(err.Error(), SettingCAFile) || !strings.Contains(err.Error(), SettingInsecureLoopback) {
				t.Fatalf("Get over an untrusted connection = %v, want the x509 error with a hint naming %s and %s",
					err, SettingCAFile, SettingInsecureLoopback)
			}
		})
	}
}

func TestBadCAFileIsNamed(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{junk: "holds no PEM certificate", "/nonexistent/ca.pem": "no such file"} {
		_, err := New(Config{Endpoint: "https://acct.documents.azure.com/", Key: testKey, Database: "db", CAFiles: []string{file}})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), SettingCAFile) {
			t.Errorf("New with CA file %s = %v, want an error naming %s and saying %q", file, err, SettingCAFile, want)
		}
	}
}
