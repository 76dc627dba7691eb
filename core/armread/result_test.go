package armread

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/admission"
	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/simulator"
	"github.com/hcpops/hcpops/harness/store/counting"
)

func resultRequest(name string) StatusRequest {
	return StatusRequest{SubscriptionID: testSub, Location: "eastus", OperationName: name, HomeTenantID: testTenant, ClientObjectID: testClient}
}

// credentialIssued is an env with a ready cluster and a credential request
// that succeeded, and that operation's name.
func credentialIssued(t *testing.T) (*env, string) {
	t.Helper()
	e := newEnv(t)
	e.readyCluster(t, "c1")
	name := e.requestCredential(t, "c1", request{})
	e.Drive(t, name)
	e.WantOp(t, name, arm.ProvisioningStateSucceeded, "")
	return e, name
}

// TestCredentialResultFaults: a CS that fails costs only this read (an
// error, not a 404 and not a write); a credential CS no longer has is gone.
func TestCredentialResultFaults(t *testing.T) {
	e, name := credentialIssued(t)
	ctx := context.Background()

	res, err := e.reads.Result(ctx, resultRequest(name))
	if err != nil || res.Request != document.RequestRequestCredential || !strings.Contains(string(res.Body), `"kubeconfig": "apiVersion: v1`) {
		t.Fatalf("Result = %+v %s, %v", res, res.Body, err)
	}
	if strings.Contains(e.Logs.String(), "sha256~") {
		t.Errorf("the kubeconfig's token reached the log")
	}
	var line strings.Builder
	slog.New(slog.NewJSONHandler(&line, nil)).Info("result", "result", res)
	for _, s := range []string{fmt.Sprint(res), fmt.Sprintf("%+v", res), fmt.Sprintf("%#v", res), line.String()} {
		if strings.Contains(s, "sha256~") || strings.Contains(s, "kind: Config") || !strings.Contains(s, "body_bytes") {
			t.Errorf("a result renders its body: %s", s)
		}
	}

	before := e.store.Counts().Writes()
	if err := e.Sim.SetFaults(simulator.Faults{ErrorRate: 1, ErrorStatus: 503}); err != nil {
		t.Fatal(err)
	}
	_, err = e.reads.Result(ctx, resultRequest(name))
	if err == nil || errors.Is(err, ErrResultGone) || errors.Is(err, ErrOperationNotFound) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("CS 503: %v, want a read error naming the status", err)
	}
	if err := e.Sim.SetFaults(simulator.Faults{}); err != nil {
		t.Fatal(err)
	}
	if n := e.store.Counts().Writes() - before; n != 0 {
		t.Errorf("a result read wrote %d documents", n)
	}

	// An internalId that is not a credential href is the document's fault.
	e.EditDoc(t, document.OperationResourceID(testSub, name), func(doc obj) { props(doc)["internalId"] = "/api/aro_hcp/v1alpha1/clusters/x" })
	if _, err := e.reads.Result(ctx, resultRequest(name)); err == nil || !errors.Is(err, errMalformed) {
		t.Errorf("bad internalId: %v", err)
	}
	e.EditDoc(t, document.OperationResourceID(testSub, name), func(doc obj) {
		props(doc)["internalId"] = "/api/clusters_mgmt/v1/clusters/" + strings.Repeat("0", 32) + "/break_glass_credentials/nope"
	})
	if _, err := e.reads.Result(ctx, resultRequest(name)); !errors.Is(err, ErrResultGone) {
		t.Errorf("credential CS does not have: %v, want ErrResultGone", err)
	}
}

// TestAdmit: the gate reads the subscription document and fills the home
// tenant; a damaged document is an error, not a pass.
func TestAdmit(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	req := AdmitRequest{Method: "GET", SubscriptionID: testSub, APIVersion: "2024-06-10-preview"}
	if tenant, err := e.reads.Admit(ctx, req); err != nil || tenant != "" {
		t.Fatalf("no subscription document: %q, %v", tenant, err)
	}
	subDoc := `{"id":"` + document.SubscriptionCosmosID(testSub) + `","partitionKey":"` + testPK + `","resourceID":"/subscriptions/` + testSub +
		`","resourceType":"Microsoft.Resources/subscriptions","properties":{"state":"Suspended","properties":{"tenantId":"` + testTenant + `"}}}`
	if _, err := e.store.Create(ctx, testPK, []byte(subDoc)); err != nil {
		t.Fatal(err)
	}
	if tenant, err := e.reads.Admit(ctx, req); err != nil || tenant != testTenant {
		t.Fatalf("suspended GET: %q, %v; want admitted with the subscription's tenant", tenant, err)
	}
	put := req
	put.Method = "PUT"
	var rej *admission.Rejection
	if _, err := e.reads.Admit(ctx, put); !errors.As(err, &rej) || rej.Status != 409 {
		t.Fatalf("suspended PUT: %v, want a 409 rejection", err)
	}
	e.EditDoc(t, "/subscriptions/"+testSub, func(doc obj) { props(doc)["state"] = 7 })
	if _, err := e.reads.Admit(ctx, req); err == nil || errors.As(err, &rej) || !strings.Contains(err.Error(), "properties.state") {
		t.Fatalf("damaged subscription document: %v, want an error naming the field", err)
	}
}

// hangingStore never answers a point read until the caller gives up, as a
// Cosmos account in trouble would.
type hangingStore struct{ *counting.Store }

func (h hangingStore) Get(ctx context.Context, pk, id string) (store.Item, error) {
	<-ctx.Done()
	return store.Item{}, ctx.Err()
}

// TestRequestReadsAreBounded: a store that hangs costs ARM's poll an error
// after the read service's Timeout, whatever the request's own context
// allows.
func TestRequestReadsAreBounded(t *testing.T) {
	e := newEnv(t)
	eng, err := NewReadService(ReadDeps{Store: hangingStore{e.store}, ClusterService: e.CS}, ReadConfig{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background() // no deadline of its own
	if _, err := eng.Result(ctx, resultRequest("8a0f7c62-7a44-4a8e-9d8f-2f0d3e1c0b11")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Result on a hung store: %v, want the read's deadline", err)
	}
	if _, err := eng.Status(ctx, resultRequest("8a0f7c62-7a44-4a8e-9d8f-2f0d3e1c0b11")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Status on a hung store: %v, want the read's deadline", err)
	}
	if _, err := eng.Admit(ctx, AdmitRequest{Method: "GET", SubscriptionID: testSub, APIVersion: "2024-06-10-preview"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Admit on a hung store: %v, want the read's deadline", err)
	}
}

// quotingCS is a CS client whose credential read fails the way a decoder
// that quotes its input does.
type quotingCS struct {
	cs.Client
	secret string
}

func (q quotingCS) GetBreakGlassCredential(context.Context, string) (cs.BreakGlassCredential, error) {
	return cs.BreakGlassCredential{}, fmt.Errorf("readObjectStart: expect { or n, but found \", error found in #10 byte of ...|%s|...", q.secret)
}

// TestCredentialErrorCarriesNoBytes: whatever the client's error says, the
// result's error keeps only what cannot quote the credential; a CS status
// and a described answer stay readable.
func TestCredentialErrorCarriesNoBytes(t *testing.T) {
	e, name := credentialIssued(t)
	ctx := context.Background()
	const secret = "sha256~0123456789abcdef0123456789abcdef"
	eng, err := NewReadService(ReadDeps{Store: e.store, ClusterService: quotingCS{Client: e.CS, secret: secret},
		Logger: slog.New(slog.NewTextHandler(e.Logs, nil))}, ReadConfig{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = eng.Result(ctx, resultRequest(name))
	if err == nil || strings.Contains(err.Error(), "0123456789") || !strings.Contains(err.Error(), "break-glass credential") {
		t.Fatalf("Result: %v; want an error naming the credential read and none of its bytes", err)
	}
	// A CS status is kept as it is.
	if err := e.Sim.SetFaults(simulator.Faults{ErrorRate: 1, ErrorStatus: 503}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.reads.Result(ctx, resultRequest(name)); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("CS 503: %v, want the status kept", err)
	}
}

// TestRevokedCredentialBody: once the cluster's credentials are revoked, a
// credential request's result is what ARO-HCP's frontend writes for CS's
// answer: the expiration alone, no "kubeconfig": "".
func TestRevokedCredentialBody(t *testing.T) {
	e, name := credentialIssued(t)
	revoke := e.Submit(t, func(ctx context.Context, fe *frontend.Frontend, o frontend.Options) (frontend.Accepted, error) {
		return fe.RevokeCredentials(ctx, clusterRID("c1"), o)
	})
	e.Drive(t, revoke)
	e.WantOp(t, revoke, arm.ProvisioningStateSucceeded, "")
	res, err := e.reads.Result(context.Background(), resultRequest(name))
	if err != nil {
		t.Fatal(err)
	}
	expires := e.Op(t, name).Properties.StartTime.Add(24 * time.Hour).UTC().Format(time.RFC3339Nano)
	if want := "{\n    \"expirationTimestamp\": \"" + expires + "\"\n}"; string(res.Body) != want {
		t.Errorf("revoked credential's body:\n%s\nwant\n%s", res.Body, want)
	}
}

// TestResourceResultAtTheRequestsVersion: a create's result is rendered
// as the request's api-version shows the cluster (document.ARMBodyAt):
// the 2025-12-23 shape writes a zero node drain timeout, the 2024-06-10
// one leaves it out.
func TestResourceResultAtTheRequestsVersion(t *testing.T) {
	e := newEnv(t)
	op := e.create(t, document.KindCluster, clusterRID("c1"), request{})
	e.Drive(t, op)
	for version, want := range map[string]bool{"2025-12-23-preview": true, "2024-06-10-preview": false} {
		req := resultRequest(op)
		req.APIVersion = version
		res, err := e.reads.Result(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(res.Body), `"nodeDrainTimeoutMinutes": 0`); got != want {
			t.Errorf("at %s: nodeDrainTimeoutMinutes 0 shown = %v, want %v:\n%s", version, got, want, res.Body)
		}
	}
}
