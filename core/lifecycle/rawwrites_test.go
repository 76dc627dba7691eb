package lifecycle

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// These are the writes harness/frontend refuses on purpose, which the engine
// must still survive: requests that race an operation in flight, and
// documents no frontend writes (hand-edited, legacy or malformed ones).
// Everything else goes through frontend_test.go.

type obj = map[string]any

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	return b
}

// newOp builds an operation document as the frontend does, for a test to
// bend before writing it.
func (e *env) newOp(t testing.TB, req document.Request, externalID, internalID string, r request) (*document.OperationDocument, []byte) {
	t.Helper()
	name := uuid.NewString()
	p := document.NewOperationParams{
		Request: req, ExternalID: externalID, InternalID: internalID, Location: "eastus", Name: name, Now: e.clk.Now(),
		TenantID: testTenant, ClientID: testClient,
		ClientRequestID: uuid.NewString(), CorrelationRequestID: uuid.NewString(),
	}
	if r.notify {
		p.NotificationURI = e.sink.uri(name)
	}
	op, err := document.NewOperation(p)
	if err != nil {
		t.Fatalf("NewOperation: %v", err)
	}
	body, err := op.MarshalCreate()
	if err != nil {
		t.Fatalf("MarshalCreate: %v", err)
	}
	return op, body
}

// batch writes one transaction straight to the embedded store (not
// through the recording wrapper: those writes are not the engine's).
func (e *env) batch(t testing.TB, ops []store.BatchOp) {
	t.Helper()
	if _, err := e.store.Store.Batch(context.Background(), testPK, ops); err != nil {
		t.Fatalf("raw batch: %v", err)
	}
}

// readDoc reads a stored document as a generic object without the system
// fields, ready to be written back.
func (e *env) readDoc(t testing.TB, rid string) (obj, string) {
	t.Helper()
	item, err := e.store.Store.Get(context.Background(), testPK, document.CosmosID(rid))
	if err != nil {
		t.Fatalf("reading %s: %v", rid, err)
	}
	var m obj
	if err := json.Unmarshal(item.Body, &m); err != nil {
		t.Fatalf("decoding %s: %v", rid, err)
	}
	for _, k := range []string{"_rid", "_self", "_etag", "_attachments", "_ts"} {
		delete(m, k)
	}
	return m, item.ETag
}

// editDoc rewrites a stored resource by hand, as an operator or another
// version of the RP might have left it.
func (e *env) editDoc(t testing.TB, rid string, edit func(obj)) {
	t.Helper()
	doc, etag := e.readDoc(t, rid)
	edit(doc)
	if _, err := e.store.Store.Replace(context.Background(), testPK, document.CosmosID(rid), mustJSON(t, doc), etag); err != nil {
		t.Fatalf("editing %s: %v", rid, err)
	}
}

func props(doc obj) obj { return doc["properties"].(obj) }
func spp(doc obj) obj   { return props(doc)["serviceProviderProperties"].(obj) }

// racingUpdate is a cluster Update accepted while another operation still
// owns the cluster (the frontend answers 409 instead): the cluster goes
// back to Accepted, owned by the new operation.
func (e *env) racingUpdate(t testing.TB, rid string, r request) string {
	t.Helper()
	if k, _, err := document.ResourceKindOfID("rid", rid); err != nil || k != document.KindCluster {
		t.Fatalf("racingUpdate: %s is not a cluster (%v)", rid, err)
	}
	op, opBody := e.newOp(t, document.RequestUpdate, rid, "", r)
	doc, etag := e.readDoc(t, rid)
	spp(doc)["activeOperationId"] = op.Name()
	spp(doc)["provisioningState"] = string(arm.ProvisioningStateAccepted)
	e.batch(t, []store.BatchOp{
		{Kind: store.OpCreate, Body: opBody},
		{Kind: store.OpReplace, ID: document.CosmosID(rid), Body: mustJSON(t, doc), IfMatch: etag},
	})
	return op.Name()
}

// racingCredentialRequest is a credential request accepted just as a
// revocation started (the frontend answers 409 once it has): the operation
// only.
func (e *env) racingCredentialRequest(t testing.TB, cluster string, r request) string {
	t.Helper()
	op, body := e.newOp(t, document.RequestRequestCredential, clusterRID(cluster), "", r)
	e.batch(t, []store.BatchOp{{Kind: store.OpCreate, Body: body}})
	return op.Name()
}
