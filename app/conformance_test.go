package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/frontend"
)

// conformanceRow is one operation state and what ARM's async contract
// (Azure/azure-resource-manager-rpc v1.0/async-api-reference.md) says
// each route answers for it.
type conformanceRow struct {
	name   string
	op     string // operation name
	hdr    []string
	status arm.ProvisioningState // "" for missing and hidden
	code   string                // error.code of a Failed or Canceled status
	// result is the results route's status; resultID the id its body
	// names (the resource), when it has one.
	result   int
	resultID string
}

// TestARMConformance runs ARM's async contract, route by route and state
// by state, against the real handler with operations the lifecycle drove
// (or, for states between ticks, wrote) there: the status code, the
// headers (Location, Retry-After, x-ms-request-id) and the body members.
// At 54fa501 it fails on Retry-After, x-ms-request-id, the failed and
// canceled results (a generic 500) and error.code on a Canceled status
// whose writer recorded none.
func TestARMConformance(t *testing.T) {
	r := newARMRig(t, nil)
	ctx := context.Background()
	spec := frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable"}
	c1, c2, c3 := clusterRID("c1"), clusterRID("c2"), clusterRID("c3")

	create := r.accepted(r.fe.PutCluster(ctx, c1, spec, r.opts()))
	gone := r.accepted(r.fe.PutCluster(ctx, c2, spec, r.opts()))
	r.drive(create, gone)
	update := r.accepted(r.fe.PutCluster(ctx, c1, frontend.ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable",
		AuthorizedCIDRs: []string{"10.0.0.0/8"}}, r.opts()))
	r.drive(update)
	cred := r.accepted(r.fe.RequestCredential(ctx, c1, r.opts()))
	r.drive(cred)
	revoke := r.accepted(r.fe.RevokeCredentials(ctx, c1, r.opts()))
	r.drive(revoke)
	del := r.accepted(r.fe.Delete(ctx, c2, r.opts()))
	r.drive(del)
	refused := r.accepted(r.fe.PutNodePool(ctx, c1+"/nodePools/np1", frontend.NodePoolSpec{VersionID: "4.20.3",
		ChannelGroup: "stable", VMSize: "Standard_D8s_v3", Replicas: -3}, r.opts()))
	r.drive(refused)
	// A Failed and a Canceled operation whose writer recorded no error, as
	// an older backend may have left them.
	bare := r.accepted(r.fe.PutCluster(ctx, clusterRID("c4"), spec, r.opts()))
	r.setStatus(bare.Name(), arm.ProvisioningStateFailed)
	bareCancel := r.accepted(r.fe.PutCluster(ctx, clusterRID("c5"), spec, r.opts()))
	r.setStatus(bareCancel.Name(), arm.ProvisioningStateCanceled)
	// Superseded: a delete accepted before the create was dispatched.
	superseded := r.accepted(r.fe.PutCluster(ctx, c3, spec, r.opts()))
	deleting := r.accepted(r.fe.Delete(ctx, c3, r.opts()))
	// States between ticks.
	accepted := r.accepted(r.fe.PutCluster(ctx, clusterRID("c6"), spec, r.opts()))
	provisioning := r.accepted(r.fe.PutCluster(ctx, clusterRID("c7"), spec, r.opts()))
	r.setStatus(provisioning.Name(), arm.ProvisioningStateProvisioning)
	updating := r.accepted(r.fe.PutCluster(ctx, c1, spec, r.opts()))
	r.setStatus(updating.Name(), arm.ProvisioningStateUpdating)

	other := []string{"X-Ms-Home-Tenant-Id", "11111111-1111-1111-1111-111111111111", "X-Ms-Client-Object-Id", armClient}
	rows := []conformanceRow{
		{name: "Accepted", op: accepted.Name(), status: arm.ProvisioningStateAccepted, result: http.StatusAccepted},
		{name: "Provisioning", op: provisioning.Name(), status: arm.ProvisioningStateProvisioning, result: http.StatusAccepted},
		{name: "Updating", op: updating.Name(), status: arm.ProvisioningStateUpdating, result: http.StatusAccepted},
		{name: "Deleting", op: deleting.Name(), status: arm.ProvisioningStateDeleting, result: http.StatusAccepted},
		{name: "Succeeded create", op: create.Name(), status: arm.ProvisioningStateSucceeded, result: http.StatusCreated, resultID: c1},
		{name: "Succeeded update", op: update.Name(), status: arm.ProvisioningStateSucceeded, result: http.StatusOK, resultID: c1},
		{name: "Succeeded credential request", op: cred.Name(), status: arm.ProvisioningStateSucceeded, result: http.StatusOK},
		{name: "Succeeded credential revocation", op: revoke.Name(), status: arm.ProvisioningStateSucceeded, result: http.StatusNoContent},
		{name: "Succeeded delete", op: del.Name(), status: arm.ProvisioningStateSucceeded, result: http.StatusNoContent},
		{name: "Failed, refused", op: refused.Name(), status: arm.ProvisioningStateFailed, code: arm.CodeInvalidRequestContent, result: http.StatusBadRequest},
		{name: "Failed, no error recorded", op: bare.Name(), status: arm.ProvisioningStateFailed, code: arm.CodeInternalServerError, result: http.StatusInternalServerError},
		{name: "Canceled, superseded", op: superseded.Name(), status: arm.ProvisioningStateCanceled, code: arm.CodeCanceled, result: http.StatusConflict},
		{name: "Canceled, no error recorded", op: bareCancel.Name(), status: arm.ProvisioningStateCanceled, code: arm.CodeCanceled, result: http.StatusConflict},
		{name: "missing", op: uuid.NewString(), result: http.StatusNotFound},
		{name: "hidden", op: create.Name(), hdr: other, result: http.StatusNotFound},
	}
	requestIDs := map[string]bool{}
	fresh := func(t *testing.T, h http.Header) {
		t.Helper()
		id := h.Get("X-Ms-Request-Id")
		if _, err := uuid.Parse(id); err != nil || requestIDs[id] {
			t.Errorf("x-ms-request-id = %q: want a fresh UUID on every answer", id)
		}
		requestIDs[id] = true
	}
	for _, row := range rows {
		hdr := row.hdr
		if hdr == nil {
			hdr = caller()
		}
		t.Run("status/"+row.name, func(t *testing.T) {
			got := r.get(statusPathOf(row.op), hdr...)
			fresh(t, got.header)
			checkStatusAnswer(t, row, got)
		})
		t.Run("result/"+row.name, func(t *testing.T) {
			got := r.get(resultPath(row.op), hdr...)
			fresh(t, got.header)
			checkResultAnswer(t, row, got)
		})
	}
}

// checkStatusAnswer holds a status route's answer to the contract.
func checkStatusAnswer(t *testing.T, row conformanceRow, got armReply) {
	t.Helper()
	if got.header.Get("Location") != "" {
		t.Errorf("Location = %q on a status answer", got.header.Get("Location"))
	}
	switch row.name {
	case "missing":
		if got.status != http.StatusNotFound || armErrorOf(t, got.body).Code != arm.CodeResourceNotFound {
			t.Errorf("%d %s, want 404 %s", got.status, got.body, arm.CodeResourceNotFound)
		}
		return
	case "hidden":
		if got.status != http.StatusNotFound || len(got.body) != 0 {
			t.Errorf("%d %q, want 404 with no body (the operation is not confirmed to exist)", got.status, got.body)
		}
		return
	}
	var body map[string]json.RawMessage
	if got.status != http.StatusOK || json.Unmarshal(got.body, &body) != nil {
		t.Fatalf("%d %s, want 200 and a JSON body", got.status, got.body)
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(body[k], &s)
		return s
	}
	p := document.OperationID(sub, "eastus", row.op)
	if str("id") != p || str("name") != path.Base(p) || str("status") != string(row.status) || str("startTime") == "" {
		t.Errorf("id %q name %q status %q startTime %q; want the request's path %s, its last segment, %s and a start",
			str("id"), str("name"), str("status"), str("startTime"), p, row.status)
	}
	if _, end := body["endTime"]; end != row.status.IsTerminal() {
		t.Errorf("endTime present: %v, want it only once terminal (%s)", end, row.status)
	}
	var e struct{ Code string }
	_ = json.Unmarshal(body["error"], &e)
	if e.Code != row.code {
		t.Errorf("error.code = %q, want %q", e.Code, row.code)
	}
	if ra := got.header.Get("Retry-After"); (ra != "") == row.status.IsTerminal() || (ra != "" && ra != "10") {
		t.Errorf("Retry-After = %q for %s, want 10 (seconds, the poll interval) while running, none once terminal", ra, row.status)
	}
}

// checkResultAnswer holds a results route's answer to the contract.
func checkResultAnswer(t *testing.T, row conformanceRow, got armReply) {
	t.Helper()
	if got.status != row.result {
		t.Fatalf("%d %s, want %d", got.status, got.body, row.result)
	}
	loc, ra := got.header.Get("Location"), got.header.Get("Retry-After")
	if got.status == http.StatusAccepted {
		u, err := url.Parse(loc)
		if err != nil || u.Path != document.OperationResultID(sub, "eastus", row.op) || ra != "10" || len(got.body) != 0 {
			t.Errorf("202: Location %q Retry-After %q body %q; want this route for the operation, 10, no body", loc, ra, got.body)
		}
		return
	}
	if loc != "" || ra != "" {
		t.Errorf("Location %q Retry-After %q on a final answer", loc, ra)
	}
	switch {
	case row.code != "": // failed or canceled: the operation's own error
		if e := armErrorOf(t, got.body); e.Code != row.code || e.Message == "" {
			t.Errorf("error %+v, want code %s and a message", e, row.code)
		}
	case row.status == "": // missing, hidden
		if e := armErrorOf(t, got.body); e.Code != arm.CodeResourceNotFound {
			t.Errorf("error %+v, want %s", e, arm.CodeResourceNotFound)
		}
	case got.status == http.StatusNoContent:
		if len(got.body) != 0 {
			t.Errorf("204 with a body %q", got.body)
		}
	case row.resultID != "":
		var res struct{ ID, Name string }
		if json.Unmarshal(got.body, &res) != nil || !strings.EqualFold(res.ID, row.resultID) || res.Name != path.Base(row.resultID) {
			t.Errorf("body %s, want the resource %s", got.body, row.resultID)
		}
	default: // the credential, revoked by now: the frontend leaves the empty kubeconfig out
		if !strings.Contains(string(got.body), `"expirationTimestamp"`) || strings.Contains(string(got.body), `"kubeconfig"`) {
			t.Errorf("body %s, want the revoked credential as the frontend writes it", got.body)
		}
	}
}

// TestARMRequestIDs: the caller's client request id comes back when it
// asks for it, and the request's line carries the three ids ARM and
// support search by; a caller the check refuses still gets a request id;
// a repeated api-version is refused on both routes, naming the parameter.
func TestARMRequestIDs(t *testing.T) {
	r := newARMRig(t, nil)
	op := r.accepted(r.fe.PutCluster(context.Background(), clusterRID("c1"), frontend.ClusterSpec{Location: "eastus", VersionID: "4.20"}, r.opts()))
	const clientID, correlationID = "3f1b7e1c-0c0e-4a8e-9a65-5a7f7f0c1d11", "b2c4d6e8-1a3b-4c5d-8e9f-0a1b2c3d4e5f"
	ids := append(caller(), "X-Ms-Client-Request-Id", clientID, "X-Ms-Correlation-Request-Id", correlationID)

	got := r.get(statusPathOf(op.Name()), append(ids, "X-Ms-Return-Client-Request-Id", "true")...)
	reqID := got.header.Get("X-Ms-Request-Id")
	if got.status != http.StatusOK || got.header.Get("X-Ms-Client-Request-Id") != clientID || reqID == "" {
		t.Fatalf("%d %v: want 200, a request id and the client request id echoed", got.status, got.header)
	}
	var line map[string]any
	for _, l := range strings.Split(r.Logs.String(), "\n") {
		if strings.Contains(l, reqID) {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	if line["msg"] != "request" || line["request_id"] != reqID || line["client_request_id"] != clientID || line["correlation_request_id"] != correlationID {
		t.Errorf("the request's line %v; want request_id %s, client_request_id %s, correlation_request_id %s", line, reqID, clientID, correlationID)
	}
	// docs/operating.md's query finds the line by these keys.
	doc, err := os.ReadFile("../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	q := regexp.MustCompile("(?s)```kusto\n(// query: request\n.*?)```").FindStringSubmatch(string(doc))
	if q == nil {
		t.Fatal("docs/operating.md has no `// query: request` block")
	}
	for _, k := range regexp.MustCompile(`\br\.([a-z_]+)`).FindAllStringSubmatch(q[1], -1) {
		if _, ok := line[k[1]]; !ok && k[1] != "error" { // error: from the invocation's other lines
			t.Errorf("docs/operating.md's request query reads r.%s, which the request's line lacks: %v", k[1], line)
		}
	}
	if got := r.get(resultPath(op.Name()), ids...); got.header.Get("X-Ms-Client-Request-Id") != "" || got.header.Get("X-Ms-Request-Id") == "" {
		t.Errorf("not asked to return it: %v", got.header)
	}

	// No principal (the rig's own client adds ARM's): refused before any
	// function runs, still with an id.
	resp, err := http.Get(r.Handler.URL + statusPathOf(op.Name()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("X-Ms-Request-Id") == "" {
		t.Errorf("refused caller: %d %v, want 401 with x-ms-request-id", resp.StatusCode, resp.Header)
	}

	for _, p := range []string{statusPathOf(op.Name()), resultPath(op.Name())} {
		got := r.get(p+"&api-version=2099-01-01", caller()...)
		if e := armErrorOf(t, got.body); got.status != http.StatusBadRequest || e.Code != arm.CodeInvalidParameter || e.Target != "api-version" {
			t.Errorf("%s with two api-versions: %d %+v, want 400 %s naming api-version", p, got.status, e, arm.CodeInvalidParameter)
		}
	}
}
