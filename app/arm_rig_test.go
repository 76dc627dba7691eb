package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/apptest"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/testsupport"
)

const (
	armAPIVersion = "2024-06-10-preview"
	armClient     = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
)

// armPrincipal is the X-MS-CLIENT-PRINCIPAL header App Service
// Authentication injects for ARM's token.
func armPrincipal() string { return apptest.Principal(apptest.ARMAppID) }

// armRig is apptest's rig driven the way the Functions host drives it,
// with ARM's GETs sent over loopback and every log line kept, Debug too.
type armRig struct {
	*apptest.Rig
	fe      *frontend.Frontend
	feedPos string
	// clk, when set, is the app's clock; drive moves it with CS time.
	clk         *testsupport.Clock
	tickPayload []byte
}

func newARMRig(t *testing.T, settings map[string]string) *armRig {
	t.Helper()
	return newARMRigAt(t, settings, nil)
}

// newARMRigAt is newARMRig with the app and frontend on clk (nil: real time).
func newARMRigAt(t *testing.T, settings map[string]string, clk *testsupport.Clock) *armRig {
	t.Helper()
	return newARMRigWith(t, settings, clk, nil)
}

// newARMRigWith is newARMRigAt with the embedded store seen by the app
// through wrap (a fault injector), when wrap is not nil.
func newARMRigWith(t *testing.T, settings map[string]string, clk *testsupport.Clock, wrap func(store.Store) store.Store) *armRig {
	t.Helper()
	env := map[string]string{
		// The rigs' deletes have no witness and their clock is the wall's:
		// a delete completes after three reads of CS's 404 rather than ten
		// minutes of them. The absence rule's own tests are
		// core/lifecycle's.
		"HCPOPS_ABSENCE_WINDOW": "1ms",
	}
	maps.Copy(env, settings)
	var parts app.Parts
	c := clock.Clock(clock.Real{})
	if clk != nil {
		parts.Clock, c = clk, clk
	}
	if wrap != nil {
		dir := t.TempDir()
		st, _, err := apptest.OpenEmbedded(context.Background(), func(k string) string { return map[string]string{"HCPOPS_DATA_DIR": dir}[k] },
			slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		parts.Store = wrap(st)
	}
	rig := apptest.New(t, apptest.Options{Settings: apptest.SettingsOf(env), Parts: parts, Level: slog.LevelDebug})
	r := &armRig{Rig: rig, clk: clk, fe: frontend.New(rig.App.Store, c, uuid.NewString),
		tickPayload: apptest.ReadFile(t, "events/testdata/tick.json")}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("app log:\n%s", rig.Logs.String())
		}
	})
	return r
}

func (r *armRig) opts() frontend.Options {
	return frontend.Options{Location: "eastus", TenantID: tenant, ClientID: armClient}
}

// drive posts the host's payloads to the real handler — the change feed
// to /dispatchOperations, timer ticks to /pollOperations — with CS time
// moving a minute a round, until every named operation is terminal.
func (r *armRig) drive(ops ...*document.OperationDocument) {
	r.T.Helper()
	for round := 0; round < 60; round++ {
		r.deliver()
		r.invoke("/pollOperations", r.tickPayload)
		done := true
		for _, op := range ops {
			if got := r.op(op.Name()); got != nil && !got.Properties.Status.IsTerminal() {
				done = false
			}
		}
		if done {
			return
		}
		r.Sim.Advance(time.Minute)
		if r.clk != nil {
			r.clk.Advance(time.Minute)
		}
	}
	r.T.Fatalf("operations did not finish in 60 rounds")
}

// deliver posts what the change feed has, as the host's Cosmos trigger
// would; a failed batch is the host's to redeliver, and the tick's to
// pick up.
func (r *armRig) deliver() {
	r.T.Helper()
	for {
		page, err := r.App.Store.ChangeFeed(context.Background(), r.feedPos, 100)
		if err != nil {
			r.T.Fatal(err)
		}
		if len(page.Items) == 0 {
			return
		}
		r.feedPos = page.Continuation
		docs, err := triggerhost.EncodeDocuments(page.Items)
		if err != nil {
			r.T.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"Data": map[string]any{"documents": docs},
			"Metadata": map[string]any{"sys": map[string]any{"MethodName": "dispatchOperations"}}})
		r.invoke("/dispatchOperations", body)
	}
}

// invoke posts an invocation envelope and returns the HTTP status.
func (r *armRig) invoke(path string, body []byte) int {
	r.T.Helper()
	resp, err := r.Handler.Client().Post(r.Handler.URL+path, "application/json", bytes.NewReader(body))
	if err != nil {
		r.T.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// op reads an operation; nil when it is gone.
func (r *armRig) op(name string) *document.OperationDocument {
	r.T.Helper()
	item, err := r.App.Store.Get(context.Background(), sub, document.CosmosID(document.OperationResourceID(sub, name)))
	if err != nil {
		return nil
	}
	op, err := document.ParseOperation(item.Body)
	if err != nil {
		r.T.Fatal(err)
	}
	return op
}

// accepted unwraps a frontend answer.
func (r *armRig) accepted(a frontend.Accepted, err error) *document.OperationDocument {
	r.T.Helper()
	if err != nil {
		r.T.Fatal(err)
	}
	return a.Operation
}

// put writes a document as another component of the RP would.
func (r *armRig) put(doc string) {
	r.T.Helper()
	if _, err := r.App.Store.Create(context.Background(), sub, []byte(doc)); err != nil {
		r.T.Fatal(err)
	}
}

// setStatus rewrites an operation's status, as a backend that finished it would.
func (r *armRig) setStatus(name string, s arm.ProvisioningState) {
	r.T.Helper()
	op := r.op(name).Clone()
	op.Properties.SetStatus(time.Now(), s, nil)
	body, err := op.MarshalReplace()
	if err != nil {
		r.T.Fatal(err)
	}
	if _, err := r.App.Store.Replace(context.Background(), sub, op.ID, body, op.ETag); err != nil {
		r.T.Fatal(err)
	}
}

type armReply struct {
	status int
	header http.Header
	body   []byte
}

// get sends ARM's GET; hdr are header name/value pairs.
func (r *armRig) get(path string, hdr ...string) armReply {
	r.T.Helper()
	req, err := http.NewRequest(http.MethodGet, r.Handler.URL+path, nil)
	if err != nil {
		r.T.Fatal(err)
	}
	req.Header.Set("X-MS-CLIENT-PRINCIPAL", armPrincipal()) // as App Service Authentication passes ARM on
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := r.Handler.Client().Do(req)
	if err != nil {
		r.T.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return armReply{status: resp.StatusCode, header: resp.Header, body: b}
}

// caller is ARM's identity headers for the operations this rig submits.
func caller() []string {
	return []string{"X-Ms-Home-Tenant-Id", tenant, "X-Ms-Client-Object-Id", armClient}
}

func resultPath(name string) string {
	return document.OperationResultID(sub, "eastus", name) + "?api-version=" + armAPIVersion
}

func statusPathOf(name string) string {
	return document.OperationID(sub, "eastus", name) + "?api-version=" + armAPIVersion
}

func armErrorOf(t *testing.T, body []byte) arm.CloudErrorBody {
	t.Helper()
	var e struct{ Error arm.CloudErrorBody }
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == "" {
		t.Fatalf("not an ARM error body: %q", body)
	}
	return e.Error
}

// storeHolds reports whether any document in the subscription contains s.
func (r *armRig) storeHolds(s string) bool {
	r.T.Helper()
	found := false
	cont := ""
	for {
		p, err := r.App.Store.ChangeFeed(context.Background(), cont, 1000)
		if err != nil {
			r.T.Fatal(err)
		}
		for _, it := range p.Items {
			if strings.Contains(string(it.Body), s) {
				found = true
			}
		}
		if len(p.Items) == 0 {
			return found
		}
		cont = p.Continuation
	}
}
