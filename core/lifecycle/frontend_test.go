package lifecycle

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// This file plays the ARO-HCP frontend: it writes operation and resource
// documents the way the frontend does (data model §4.2), one transactional
// batch per request.

const (
	testSub    = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	testPK     = testSub
	testRG     = "myRG"
	testTenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
	testClient = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
)

func clusterRID(name string) string {
	return "/subscriptions/" + testSub + "/resourceGroups/" + testRG + "/providers/" + arm.ClusterResourceType + "/" + name
}

func nodePoolRID(cluster, name string) string { return clusterRID(cluster) + "/nodePools/" + name }

func externalAuthRID(cluster, name string) string {
	return clusterRID(cluster) + "/externalAuths/" + name
}

type obj = map[string]any

// request is what the caller of an ARM request sends.
type request struct {
	notify   bool // carry an Azure-AsyncNotificationUri
	implicit bool // a child delete the frontend adds to a cluster delete
}

// newOp builds an operation document as the frontend does.
func (e *env) newOp(t testing.TB, req document.Request, externalID, internalID string, r request) (*document.OperationDocument, []byte) {
	t.Helper()
	name := uuid.NewString()
	p := document.NewOperationParams{
		Request: req, ExternalID: externalID, InternalID: internalID, Location: "eastus", Name: name, Now: e.clk.Now(),
	}
	if !r.implicit {
		p.TenantID, p.ClientID = testTenant, testClient
		p.ClientRequestID, p.CorrelationRequestID = uuid.NewString(), uuid.NewString()
		if r.notify {
			p.NotificationURI = e.sink.uri(name)
		}
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

// resourceDoc is a new resource document of kind at rid, owned by opName.
func resourceDoc(kind document.Kind, rid, opName string) obj {
	name := rid[strings.LastIndex(rid, "/")+1:]
	typ := map[document.Kind]string{
		document.KindCluster: arm.ClusterResourceType, document.KindNodePool: arm.NodePoolResourceType,
		document.KindExternalAuth: arm.ExternalAuthResourceType,
	}[kind]
	props := obj{
		"cosmosMetadata": obj{"resourceID": rid, "instanceVersion": 1, "partitionKey": testPK},
		"id":             rid, "name": name, "type": typ, "systemData": obj{"createdBy": "u@example.com"},
		"serviceProviderProperties": obj{"activeOperationId": opName},
		"status":                    obj{},
	}
	spp := props["serviceProviderProperties"].(obj)
	switch kind {
	case document.KindCluster:
		props["location"] = "eastus"
		props["tags"] = obj{"env": "test"}
		props["customerProperties"] = obj{
			"version":                 obj{"id": "4.20", "channelGroup": "stable"},
			"api":                     obj{"visibility": "Public", "authorizedCidrs": []any{"10.0.0.0/8"}},
			"platform":                obj{"managedResourceGroup": name + "-mrg"},
			"nodeDrainTimeoutMinutes": 15,
			"someFutureCustomerField": obj{"kept": []any{true, 1.5, "x"}},
		}
		spp["provisioningState"] = "Accepted"
		spp["usesNewClusterDeletionApproach"] = false
		props["identity"] = obj{"type": "UserAssigned"}
	case document.KindNodePool:
		props["location"] = "eastus"
		props["properties"] = obj{
			"provisioningState": "Accepted",
			"version":           obj{"id": "4.20.3", "channelGroup": "stable"},
			"platform":          obj{"vmSize": "Standard_D8s_v3"},
			"replicas":          2, "autoRepair": true, "labels": obj{"team": "blue"},
		}
		spp["usesNewNodePoolDeletionApproach"] = false
	case document.KindExternalAuth:
		props["properties"] = obj{
			"provisioningState": "Accepted",
			"issuer":            obj{"url": "https://login.microsoftonline.com/" + testTenant + "/v2.0", "audiences": []any{"app-1"}, "ca": ""},
			"clients":           []any{}, "claim": obj{},
		}
		spp["usesNewExternalAuthDeletionApproach"] = false
	}
	return obj{
		"id": document.CosmosID(rid), "partitionKey": testPK, "resourceID": rid, "resourceType": typ,
		"properties": props,
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	return b
}

// batch writes the frontend's transaction straight to the embedded store
// (not through the recording wrapper: those writes are not the engine's).
func (e *env) batch(t testing.TB, ops []store.BatchOp) {
	t.Helper()
	if _, err := e.store.Store.Batch(context.Background(), testPK, ops); err != nil {
		t.Fatalf("frontend batch: %v", err)
	}
}

// create is a PUT of a new resource: the operation and the resource in one
// batch, the resource Accepted and owned by the operation.
func (e *env) create(t testing.TB, kind document.Kind, rid string, r request, edit ...func(obj)) string {
	t.Helper()
	op, opBody := e.newOp(t, document.RequestCreate, rid, "", r)
	doc := resourceDoc(kind, rid, op.Name())
	for _, f := range edit {
		f(doc)
	}
	e.batch(t, []store.BatchOp{
		{Kind: store.OpCreate, Body: opBody},
		{Kind: store.OpCreate, Body: mustJSON(t, doc)},
	})
	return op.Name()
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

func props(doc obj) obj { return doc["properties"].(obj) }
func spp(doc obj) obj   { return props(doc)["serviceProviderProperties"].(obj) }

// setState writes provisioningState where the resource's kind keeps it.
func setState(doc obj, s arm.ProvisioningState) {
	if strings.EqualFold(doc["resourceType"].(string), arm.ClusterResourceType) {
		spp(doc)["provisioningState"] = string(s)
		return
	}
	props(doc)["properties"].(obj)["provisioningState"] = string(s)
}

// update is a PATCH: an Update operation, the resource Accepted, owned by
// it and carrying the change.
func (e *env) update(t testing.TB, rid string, r request, change func(obj)) string {
	t.Helper()
	op, opBody := e.newOp(t, document.RequestUpdate, rid, "", r)
	doc, etag := e.readDoc(t, rid)
	change(doc)
	spp(doc)["activeOperationId"] = op.Name()
	setState(doc, arm.ProvisioningStateAccepted)
	e.batch(t, []store.BatchOp{
		{Kind: store.OpCreate, Body: opBody},
		{Kind: store.OpReplace, ID: document.CosmosID(rid), Body: mustJSON(t, doc), IfMatch: etag},
	})
	return op.Name()
}

// remove is a DELETE. A cluster delete also deletes each node pool and
// external auth with an implicit operation; every active operation on a
// deleted resource is canceled. It returns the operation names, the
// requested one first.
func (e *env) remove(t testing.TB, rid string, r request) []string {
	t.Helper()
	ctx := context.Background()
	targets := []string{rid}
	kind, _, err := document.ResourceKindOfID("rid", rid)
	if err != nil {
		t.Fatalf("delete of %s: %v", rid, err)
	}
	if kind == document.KindCluster {
		err := e.store.Store.Children(ctx, testPK, rid, func(items []store.Item) error {
			for _, it := range items {
				var d struct{ ResourceID, ResourceType string }
				_ = json.Unmarshal(it.Body, &d)
				if k, err := document.ResourceKind(d.ResourceType); err == nil && k != document.KindCluster {
					targets = append(targets, d.ResourceID)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("listing children: %v", err)
		}
	}
	var ops []store.BatchOp
	var names []string
	now := e.clk.Now().UTC()
	for i, target := range targets {
		ops = append(ops, e.cancelActive(t, target)...)
		rr := r
		rr.implicit = i > 0
		op, opBody := e.newOp(t, document.RequestDelete, target, "", rr)
		names = append(names, op.Name())
		doc, etag := e.readDoc(t, target)
		s := spp(doc)
		s["deletionTimestamp"] = now.Format(time.RFC3339)
		s["activeOperationId"] = op.Name()
		setState(doc, arm.ProvisioningStateDeleting)
		for _, f := range []string{"usesNewClusterDeletionApproach", "usesNewNodePoolDeletionApproach", "usesNewExternalAuthDeletionApproach"} {
			if _, ok := s[f]; ok {
				s[f] = true
			}
		}
		if i == 0 && kind == document.KindCluster {
			s["deleteOperationCompletionDeadline"] = now.Add(12 * time.Hour).Format(time.RFC3339)
		}
		ops = append(ops,
			store.BatchOp{Kind: store.OpCreate, Body: opBody},
			store.BatchOp{Kind: store.OpReplace, ID: document.CosmosID(target), Body: mustJSON(t, doc), IfMatch: etag})
	}
	e.batch(t, ops)
	return names
}

// cancelActive returns the batch steps that cancel the active operations
// on exactly rid (CancelActiveOperations).
func (e *env) cancelActive(t testing.TB, rid string) []store.BatchOp {
	t.Helper()
	var ops []store.BatchOp
	err := e.store.Store.ActiveOperations(context.Background(), store.ActiveOperationsQuery{}, func(items []store.Item) error {
		for _, it := range items {
			op, err := document.ParseOperation(it.Body)
			if err != nil || !strings.EqualFold(op.Properties.ExternalID, rid) || op.Properties.Status.IsTerminal() {
				continue
			}
			op.Properties.SetStatus(e.clk.Now(), arm.ProvisioningStateCanceled, supersededError())
			body, err := op.MarshalReplace()
			if err != nil {
				return err
			}
			ops = append(ops, store.BatchOp{Kind: store.OpReplace, ID: op.ID, Body: body, IfMatch: op.ETag})
		}
		return nil
	})
	if err != nil {
		t.Fatalf("canceling active operations: %v", err)
	}
	return ops
}

// requestCredential is POST requestadmincredential: the operation only.
func (e *env) requestCredential(t testing.TB, cluster string, r request) string {
	t.Helper()
	op, body := e.newOp(t, document.RequestRequestCredential, clusterRID(cluster), "", r)
	e.batch(t, []store.BatchOp{{Kind: store.OpCreate, Body: body}})
	return op.Name()
}

// revokeCredentials is POST revokecredentials: the operation carries the
// cluster's CS ID and the cluster points at the operation.
func (e *env) revokeCredentials(t testing.TB, cluster string, r request) string {
	t.Helper()
	rid := clusterRID(cluster)
	doc, etag := e.readDoc(t, rid)
	op, body := e.newOp(t, document.RequestRevokeCredentials, rid, spp(doc)["clusterServiceID"].(string), r)
	spp(doc)["revokeCredentialsOperationId"] = op.Name()
	e.batch(t, []store.BatchOp{
		{Kind: store.OpCreate, Body: body},
		{Kind: store.OpReplace, ID: document.CosmosID(rid), Body: mustJSON(t, doc), IfMatch: etag},
	})
	return op.Name()
}

// readyCluster creates cluster name and drives it to Succeeded.
func (e *env) readyCluster(t testing.TB, name string) string {
	t.Helper()
	op := e.create(t, document.KindCluster, clusterRID(name), request{})
	e.drive(t, op)
	e.wantOp(t, op, arm.ProvisioningStateSucceeded, "")
	return e.resource(t, clusterRID(name)).ClusterServiceID()
}
