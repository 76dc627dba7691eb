package handlers

import (
	"strings"
	"testing"
)

func TestPortFromEnv(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		fallback int
		want     int
		wantErr  string
	}{
		{"custom handler port", map[string]string{EnvCustomHandlerPort: "40123", EnvHTTPWorkerPort: "1"}, 8080, 40123, ""},
		{"legacy name", map[string]string{EnvHTTPWorkerPort: "40124"}, 8080, 40124, ""},
		{"fallback", nil, 7000, 7000, ""},
		{"fallback zero picks a free port", nil, 0, 0, ""},
		{"not a number", map[string]string{EnvCustomHandlerPort: "http"}, 8080, 0, `FUNCTIONS_CUSTOMHANDLER_PORT="http"`},
		{"out of range", map[string]string{EnvHTTPWorkerPort: "70000"}, 8080, 0, `FUNCTIONS_HTTPWORKER_PORT="70000"`},
		{"bad fallback", nil, -1, 0, "port -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PortFromEnv(func(k string) string { return tt.env[k] }, tt.fallback)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %d, %v; want %d", got, err, tt.want)
			}
		})
	}
	if got := (Config{Port: 40123}).Addr(); got != "127.0.0.1:40123" {
		t.Errorf("Addr = %q", got)
	}
}
