package cosmostest_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/store/cosmostest"
)

// TestIdentityOverHTTPS: the server as any Azure client meets it. azidentity
// — ManagedIdentityCredential and DefaultAzureCredential, configured only by
// the App Service variables — gets a token from the server's local identity
// endpoint, and the store reads and writes over https, verifying the
// certificate made at start against its CA file (no skipped verification).
// A token the endpoint did not mint is refused.
func TestIdentityOverHTTPS(t *testing.T) {
	srv := cosmostest.StartOwnServer(t, cosmostest.Options{Identity: true})
	if !strings.HasPrefix(srv.Endpoint, "https://") || srv.CAFile == "" {
		t.Fatalf("server at %s with CA %q: want https and a CA file", srv.Endpoint, srv.CAFile)
	}
	t.Setenv("IDENTITY_ENDPOINT", srv.IdentityEndpoint)
	t.Setenv("IDENTITY_HEADER", srv.IdentityHeader)
	for _, credential := range []string{cosmos.CredentialManagedIdentity, ""} { // "": DefaultAzureCredential
		t.Run("credential="+credential, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			env := map[string]string{
				cosmos.SettingEndpoint: srv.Endpoint, cosmos.SettingCredential: credential,
				cosmos.SettingDatabase: cosmostest.DatabaseName(t), cosmos.SettingCAFile: srv.CAFile,
			}
			cfg, err := cosmos.ConfigFromEnv(func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Key != "" || cfg.InsecureLoopbackTLS {
				t.Fatalf("config %+v: want keyless, verified TLS", cfg)
			}
			s, err := cosmos.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.EnsureContainers(ctx); err != nil {
				t.Fatalf("creating containers with an identity token: %v", err)
			}
			defer func() { _ = s.DropDatabase(context.Background()) }()
			const pk = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
			if _, err := s.Create(ctx, pk, []byte(`{"id":"doc1","partitionKey":"`+pk+`","resourceID":"/x","resourceType":"t"}`)); err != nil {
				t.Fatalf("writing with an identity token: %v", err)
			}
			got, err := s.Get(ctx, pk, "doc1")
			if err != nil || !strings.Contains(string(got.Body), `"resourceID":"/x"`) {
				t.Fatalf("reading it back: %s, %v", got.Body, err)
			}
			if _, err := s.Get(ctx, pk, "nope"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a missing document: %v, want ErrNotFound", err)
			}
		})
	}

	// A token of another issuer: the server answers 401.
	pool, err := cosmosCAs(srv.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	client, err := azcosmos.NewClient(srv.Endpoint, forged{}, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: pool, Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.CreateDatabase(context.Background(), azcosmos.DatabaseProperties{ID: cosmostest.DatabaseName(t)}, nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusUnauthorized {
		t.Errorf("a forged token: %v, want 401", err)
	}
}

// forged is a credential whose token the server never minted.
type forged struct{}

func (forged) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjk5OTk5OTk5OTl9.c2lnbmF0dXJl", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// cosmosCAs is an HTTP client trusting caFile only.
func cosmosCAs(caFile string) (*http.Client, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("no certificate in " + caFile)
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil,
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}, nil
}

const frontendChild = "COSMOSTEST_FRONTEND_CHILD"

// TestFrontendStyleClient: the Cosmos client exactly as ARO-HCP's frontend
// builds it (corecosmosstorage.NewCosmosDatabaseClient: DefaultAzureCredential
// with RequireAzureTokenCredentials, azcosmos.NewClient with the default
// transport, so the process's roots), configured only by the environment
// docs/beside-a-frontend.md gives it: SSL_CERT_FILE, IDENTITY_ENDPOINT,
// IDENTITY_HEADER, AZURE_TOKEN_CREDENTIALS. A child process, since the
// system roots are read once per process.
func TestFrontendStyleClient(t *testing.T) {
	if os.Getenv(frontendChild) != "" {
		frontendStyleChild(t, os.Getenv(frontendChild))
		return
	}
	srv := cosmostest.StartOwnServer(t, cosmostest.Options{Identity: true})
	cmd := exec.Command(os.Args[0], "-test.run=^TestFrontendStyleClient$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), frontendChild+"="+srv.Endpoint, "SSL_CERT_FILE="+srv.CAFile,
		"IDENTITY_ENDPOINT="+srv.IdentityEndpoint, "IDENTITY_HEADER="+srv.IdentityHeader,
		"AZURE_TOKEN_CREDENTIALS=ManagedIdentityCredential")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestFrontendStyleClient") {
		t.Fatalf("the frontend-style client: %v\n%s", err, out)
	}
}

func frontendStyleChild(t *testing.T, endpoint string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cred, err := azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{RequireAzureTokenCredentials: true})
	if err != nil {
		t.Fatal(err)
	}
	client, err := azcosmos.NewClient(endpoint, cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := cosmostest.DatabaseName(t)
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: name}, nil); err != nil {
		t.Fatalf("creating a database: %v", err)
	}
	db, err := client.NewDatabase(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "Resources",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/partitionKey"}}}, nil); err != nil {
		t.Fatalf("creating a container: %v", err)
	}
	c, err := db.NewContainer("Resources")
	if err != nil {
		t.Fatal(err)
	}
	pk := azcosmos.NewPartitionKeyString("p")
	if _, err := c.CreateItem(ctx, pk, []byte(`{"id":"a","partitionKey":"p","n":1}`), nil); err != nil {
		t.Fatalf("writing: %v", err)
	}
	got, err := c.ReadItem(ctx, pk, "a", nil)
	if err != nil || !strings.Contains(string(got.Value), `"n":1`) {
		t.Fatalf("reading back: %s, %v", got.Value, err)
	}
}
