package armread

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

func TestStatus(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	explicit := e.create(t, document.KindCluster, clusterRID("c1"), request{})
	deletion := e.remove(t, clusterRID("c1"), request{})[0] // cancels the create

	// Documents the frontend would never write, for the visibility rules.
	write := func(edit func(*document.OperationDocument)) string {
		op, _ := e.newOp(t, document.RequestCreate, clusterRID("odd"), "", request{})
		edit(op)
		body, err := op.MarshalCreate()
		if err != nil {
			t.Fatal(err)
		}
		e.batch(t, []store.BatchOp{{Kind: store.OpCreate, Body: body}})
		return op.Name()
	}
	noOperationID := write(func(o *document.OperationDocument) { o.Properties.OperationID = "" })
	otherSub := write(func(o *document.OperationDocument) {
		o.Properties.OperationID = strings.Replace(o.Properties.OperationID, testSub, "00000000-0000-0000-0000-000000000001", 1)
	})
	anyone := write(func(o *document.OperationDocument) { o.Properties.TenantID, o.Properties.ClientID = "", "" })

	caller := StatusRequest{SubscriptionID: testSub, Location: "westus", HomeTenantID: testTenant, ClientObjectID: testClient}
	with := func(name string, edit func(*StatusRequest)) StatusRequest {
		r := caller
		r.OperationName = name
		if edit != nil {
			edit(&r)
		}
		return r
	}
	tests := []struct {
		name    string
		req     StatusRequest
		wantErr error
		status  arm.ProvisioningState
	}{
		{"caller sees its operation", with(explicit, nil), nil, arm.ProvisioningStateCanceled},
		{"ids compare case-insensitively", with(explicit, func(r *StatusRequest) {
			r.HomeTenantID, r.ClientObjectID, r.SubscriptionID = strings.ToUpper(testTenant), strings.ToUpper(testClient), strings.ToUpper(testSub)
		}), nil, arm.ProvisioningStateCanceled},
		{"a later operation on the same resource", with(deletion, nil), nil, arm.ProvisioningStateDeleting},
		{"another tenant", with(explicit, func(r *StatusRequest) { r.HomeTenantID = "11111111-1111-1111-1111-111111111111" }), ErrOperationNotVisible, ""},
		{"another client", with(explicit, func(r *StatusRequest) { r.ClientObjectID = "" }), ErrOperationNotVisible, ""},
		{"no stored tenant or client", with(anyone, func(r *StatusRequest) { r.HomeTenantID, r.ClientObjectID = "x", "y" }), nil, arm.ProvisioningStateAccepted},
		{"no operationId", with(noOperationID, nil), ErrOperationNotVisible, ""},
		{"operationId in another subscription", with(otherSub, nil), ErrOperationNotVisible, ""},
		{"missing", with("8a0f7c62-7a44-4a8e-9d8f-2f0d3e1c0b11", nil), ErrOperationNotFound, ""},
		{"not a UUID", with("../../etc", nil), ErrOperationNotFound, ""},
		{"no subscription", with(explicit, func(r *StatusRequest) { r.SubscriptionID = "" }), ErrOperationNotFound, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.Logs.String())
			got, err := e.reads.Status(ctx, tc.req)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			// The caller gets a bare 404; the operator reads why in the log.
			hidden := `level=INFO msg="operation hidden from caller" operation_id=` + tc.req.OperationName
			if logged := strings.Contains(e.Logs.String()[before:], hidden); logged != errors.Is(err, ErrOperationNotVisible) {
				t.Errorf("logged %q: %v, want %v", hidden, logged, !logged)
			}
			if err != nil {
				return
			}
			if got.Status != tc.status || got.Name != tc.req.OperationName || !strings.HasSuffix(got.ID, "/"+tc.req.OperationName) {
				t.Errorf("status = %+v, want %s for %s", got, tc.status, tc.req.OperationName)
			}
			if (got.EndTime != nil) != tc.status.IsTerminal() {
				t.Errorf("endTime = %v for status %s", got.EndTime, got.Status)
			}
		})
	}
}

// TestDamagedDocumentsAreErrors: a stored operation or resource that does
// not parse costs ARM's poll an error (a 500, polled again), never a 404
// that would end its poll.
func TestDamagedDocumentsAreErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, e *env, op string)
		read   func(*ReadService, StatusRequest) error
	}{
		{"operation, status read", func(t *testing.T, e *env, op string) {
			e.EditDoc(t, document.OperationResourceID(testSub, op), func(doc obj) { props(doc)["status"] = 7 })
		}, func(r *ReadService, req StatusRequest) error { _, err := r.Status(ctx, req); return err }},
		{"operation, result read", func(t *testing.T, e *env, op string) {
			e.EditDoc(t, document.OperationResourceID(testSub, op), func(doc obj) { props(doc)["status"] = 7 })
		}, func(r *ReadService, req StatusRequest) error { _, err := r.Result(ctx, req); return err }},
		{"resource of a succeeded create, result read", func(t *testing.T, e *env, op string) {
			e.EditDoc(t, document.OperationResourceID(testSub, op), func(doc obj) {
				props(doc)["status"] = string(arm.ProvisioningStateSucceeded)
			})
			e.EditDoc(t, clusterRID("c1"), func(doc obj) { doc["properties"] = "not an object" })
		}, func(r *ReadService, req StatusRequest) error { _, err := r.Result(ctx, req); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			op := e.create(t, document.KindCluster, clusterRID("c1"), request{})
			tc.damage(t, e, op)
			err := tc.read(e.reads, StatusRequest{SubscriptionID: testSub, OperationName: op, HomeTenantID: testTenant, ClientObjectID: testClient})
			if !errors.Is(err, errMalformed) || errors.Is(err, ErrOperationNotFound) || errors.Is(err, ErrResultGone) {
				t.Errorf("err = %v, want a malformed document, not a 404", err)
			}
		})
	}
}
