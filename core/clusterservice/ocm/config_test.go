package ocm

import (
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeCA writes the certificate of a TLS test server as a PEM file.
func writeCA(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigFromEnv(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(nil)
	defer tlsSrv.Close()
	ca := writeCA(t, tlsSrv)
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{EnvURL: "http://127.0.0.1:8000"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		name    string
		env     map[string]string
		wantErr []string
		check   func(Config) bool
	}{
		{"minimal", base, nil, func(c Config) bool {
			return c.URL == "http://127.0.0.1:8000" && !c.authenticated() && !c.Insecure &&
				c.RetryLimit == DefaultRetryLimit && c.RetryInterval == DefaultRetryInterval && c.Timeout == DefaultTimeout
		}},
		{"missing URL", map[string]string{}, []string{EnvURL, "required"}, nil},
		{"non-http URL", with(EnvURL, "ftp://x"), []string{EnvURL, `"ftp://x"`}, nil},
		{"URL with a path", with(EnvURL, "http://cs:8000/api"), []string{EnvURL, "without a path"}, nil},
		{"insecure", with(EnvInsecure, "true"), nil, func(c Config) bool { return c.Insecure }},
		{"insecure typo", with(EnvInsecure, "yes"), []string{EnvInsecure, `"yes"`}, nil},
		{"token", with(EnvToken, "t"), nil, func(c Config) bool { return c.authenticated() && c.Token == "t" }},
		{"client credentials", with(EnvClientID, "id", EnvClientSecret, "s", EnvTokenURL, "https://sso.example.com/token"), nil,
			func(c Config) bool { return c.authenticated() && c.ClientID == "id" && c.TokenURL != "" }},
		{"client id alone", with(EnvClientID, "id"), []string{EnvClientID, EnvClientSecret}, nil},
		{"secret alone", with(EnvClientSecret, "s"), []string{EnvClientID, EnvClientSecret}, nil},
		{"token and client", with(EnvToken, "t", EnvClientID, "id", EnvClientSecret, "s"), []string{"either", EnvToken}, nil},
		{"token URL alone", with(EnvTokenURL, "https://sso"), []string{EnvTokenURL}, nil},
		{"bad token URL", with(EnvToken, "t", EnvTokenURL, "sso"), []string{EnvTokenURL, `"sso"`}, nil},
		{"retry limit zero", with(EnvRetryLimit, "0"), nil, func(c Config) bool { return c.RetryLimit == 0 }},
		{"retry limit negative", with(EnvRetryLimit, "-1"), []string{EnvRetryLimit, `"-1"`}, nil},
		{"retry interval", with(EnvRetryInterval, "10ms"), nil, func(c Config) bool { return c.RetryInterval == 10*time.Millisecond }},
		{"bad timeout", with(EnvTimeout, "soon"), []string{EnvTimeout, `"soon"`}, nil},
		{"zero timeout", with(EnvTimeout, "0s"), []string{EnvTimeout}, nil},
		{"id search in", with(EnvIDSearch, " IN "), nil, func(c Config) bool { return c.IDSearch == IDSearchIn }},
		{"id search or", with(EnvIDSearch, "or"), nil, func(c Config) bool { return c.IDSearch == IDSearchOr }},
		{"id search typo", with(EnvIDSearch, "any"), []string{EnvIDSearch, `"any"`, "or", "in"}, nil},
		{"CA file", with(EnvCAFile, ca), nil, func(c Config) bool { return c.CAFile == ca }},
		{"missing CA file", with(EnvCAFile, "/nonexistent/ca.pem"), []string{EnvCAFile, "/nonexistent/ca.pem"}, nil},
		{"CA file without certificates", with(EnvCAFile, garbage), []string{EnvCAFile, "no PEM certificates"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ConfigFromEnv(func(k string) string { return tc.env[k] })
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("no error, config %+v", cfg)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil || !tc.check(cfg) {
				t.Fatalf("config = %+v, %v", cfg, err)
			}
		})
	}
}
