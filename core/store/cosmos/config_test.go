package cosmos

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

const testKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr string // substring; the setting at fault must be named
	}{
		{
			name: "key connection string",
			env: map[string]string{
				"CosmosDB":        "AccountEndpoint=https://acct.documents.azure.com:443/;AccountKey=" + testKey + ";",
				"COSMOS_DATABASE": "rp",
			},
			want: Config{Endpoint: "https://acct.documents.azure.com:443/", Key: testKey, Database: "rp"},
		},
		{
			name: "connection string wins over identity settings",
			env: map[string]string{
				"CosmosDB":                  "accountendpoint=https://a.documents.azure.com/;accountkey=" + testKey,
				"CosmosDB__accountEndpoint": "https://b.documents.azure.com/",
				"COSMOS_DATABASE":           "rp",
			},
			want: Config{Endpoint: "https://a.documents.azure.com/", Key: testKey, Database: "rp"},
		},
		{
			name: "identity with user-assigned managed identity",
			env: map[string]string{
				"CosmosDB__accountEndpoint": "https://acct.documents.azure.com:443/",
				"CosmosDB__credential":      "ManagedIdentity",
				"CosmosDB__clientId":        "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
				"COSMOS_DATABASE":           "rp",
			},
			want: Config{Endpoint: "https://acct.documents.azure.com:443/", Credential: "managedidentity",
				ClientID: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", Database: "rp"},
		},
		{
			name: "identity with the default credential",
			env:  map[string]string{"CosmosDB__accountEndpoint": "https://acct.documents.azure.com/", "COSMOS_DATABASE": "rp"},
			want: Config{Endpoint: "https://acct.documents.azure.com/", Database: "rp"},
		},
		{
			name: "CA files and the loopback switch",
			env: map[string]string{"CosmosDB__accountEndpoint": "https://127.0.0.1:8081/", "COSMOS_DATABASE": "rp",
				"COSMOS_CA_FILE": "/etc/emulator.pem", "SSL_CERT_FILE": "/etc/ssl/extra.pem", "COSMOS_INSECURE_LOOPBACK": "TRUE"},
			want: Config{Endpoint: "https://127.0.0.1:8081/", Database: "rp",
				CAFiles: []string{"/etc/emulator.pem", "/etc/ssl/extra.pem"}, InsecureLoopbackTLS: true},
		},
		{
			name: "the loopback switch refused for a remote account",
			env: map[string]string{"CosmosDB__accountEndpoint": "https://acct.documents.azure.com/", "COSMOS_DATABASE": "rp",
				"COSMOS_INSECURE_LOOPBACK": "true"},
			wantErr: "setting COSMOS_INSECURE_LOOPBACK: skipping TLS verification is for a loopback emulator or test server only",
		},
		{
			name: "the loopback switch is a boolean",
			env: map[string]string{"CosmosDB__accountEndpoint": "https://127.0.0.1:8081/", "COSMOS_DATABASE": "rp",
				"COSMOS_INSECURE_LOOPBACK": "yes please"},
			wantErr: `setting COSMOS_INSECURE_LOOPBACK: "yes please" is not true or false`,
		},
		{
			name:    "nothing set",
			env:     map[string]string{"COSMOS_DATABASE": "rp"},
			wantErr: "CosmosDB__accountEndpoint",
		},
		{
			name:    "connection string without a key",
			env:     map[string]string{"CosmosDB": "AccountEndpoint=https://acct.documents.azure.com/;", "COSMOS_DATABASE": "rp"},
			wantErr: "setting CosmosDB: connection string has no AccountKey",
		},
		{
			name:    "connection string without an endpoint",
			env:     map[string]string{"CosmosDB": "AccountKey=" + testKey, "COSMOS_DATABASE": "rp"},
			wantErr: "setting CosmosDB: connection string has no AccountEndpoint",
		},
		{
			name:    "connection string garbage",
			env:     map[string]string{"CosmosDB": "not a connection string", "COSMOS_DATABASE": "rp"},
			wantErr: "setting CosmosDB: connection string part",
		},
		{
			name:    "endpoint not a URL",
			env:     map[string]string{"CosmosDB__accountEndpoint": "acct.documents.azure.com", "COSMOS_DATABASE": "rp"},
			wantErr: `setting CosmosDB__accountEndpoint: endpoint "acct.documents.azure.com"`,
		},
		{
			name:    "plain http to a remote host",
			env:     map[string]string{"CosmosDB__accountEndpoint": "http://acct.documents.azure.com/", "COSMOS_DATABASE": "rp"},
			wantErr: "plain http, allowed only on loopback",
		},
		{
			name: "plain http on loopback",
			env:  map[string]string{"CosmosDB__accountEndpoint": "http://127.0.0.1:8081/", "COSMOS_DATABASE": "rp"},
			want: Config{Endpoint: "http://127.0.0.1:8081/", Database: "rp"},
		},
		{
			name: "unknown credential",
			env: map[string]string{"CosmosDB__accountEndpoint": "https://acct.documents.azure.com/",
				"CosmosDB__credential": "clientsecret", "COSMOS_DATABASE": "rp"},
			wantErr: `setting CosmosDB__credential: credential "clientsecret"`,
		},
		{
			name:    "no database",
			env:     map[string]string{"CosmosDB__accountEndpoint": "https://acct.documents.azure.com/"},
			wantErr: "setting COSMOS_DATABASE",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ConfigFromEnv(env(tc.env))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), testKey) {
					t.Fatalf("error leaks the account key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ConfigFromEnv: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestConfigFromEnvNotConfigured(t *testing.T) {
	_, err := ConfigFromEnv(env(nil))
	if !errors.Is(err, ErrNotConfigured) {
		t.Fatalf("err = %v, want ErrNotConfigured so callers fall back to the embedded store", err)
	}
}

func TestInsecureTLSOnlyOnLoopback(t *testing.T) {
	tests := []struct {
		endpoint string
		ok       bool
	}{
		{"https://127.0.0.1:8081/", true},
		{"https://localhost:8081/", true},
		{"https://[::1]:8081/", true},
		{"https://acct.documents.azure.com/", false},
		{"https://10.0.0.4:8081/", false},
	}
	for _, tc := range tests {
		t.Run(tc.endpoint, func(t *testing.T) {
			cfg := Config{Endpoint: tc.endpoint, Key: testKey, Database: "db", InsecureLoopbackTLS: true}
			_, err := New(cfg)
			if tc.ok && err != nil {
				t.Fatalf("New: %v", err)
			}
			if !tc.ok && (err == nil || !strings.Contains(err.Error(), "loopback")) {
				t.Fatalf("New accepted insecure TLS for %s (err %v)", tc.endpoint, err)
			}
		})
	}
}

func TestBadKeyIsNamed(t *testing.T) {
	_, err := New(Config{Endpoint: "https://acct.documents.azure.com/", Key: "not base64!", Database: "db"})
	if err == nil || !strings.Contains(err.Error(), "AccountKey") || strings.Contains(err.Error(), "not base64!") {
		t.Fatalf("err = %v, want it to name AccountKey without echoing the key", err)
	}
}

func TestTokenCredentialChoice(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want any
	}{
		{"managed identity, user-assigned", Config{Credential: CredentialManagedIdentity, ClientID: "abc"}, &azidentity.ManagedIdentityCredential{}},
		{"managed identity, system-assigned", Config{Credential: CredentialManagedIdentity}, &azidentity.ManagedIdentityCredential{}},
		{"client id alone means managed identity", Config{ClientID: "abc"}, &azidentity.ManagedIdentityCredential{}},
		{"nothing: default chain", Config{}, &azidentity.DefaultAzureCredential{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cred, err := tc.cfg.tokenCredential()
			if err != nil {
				t.Fatalf("tokenCredential: %v", err)
			}
			if reflect.TypeOf(cred) != reflect.TypeOf(tc.want) {
				t.Fatalf("credential is %T, want %T", cred, tc.want)
			}
		})
	}
}
