package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// corpusDoc is one document of testdata/compat as loaded.
type corpusDoc struct {
	file string
	id   string
	body map[string]any
}

func loadCorpus(t *testing.T, r *armRig) map[string]corpusDoc {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "compat", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	out := map[string]corpusDoc{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := r.App.Store.Create(context.Background(), body["partitionKey"].(string), raw); err != nil {
			t.Fatalf("loading %s: %v", f, err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		out[name] = corpusDoc{file: f, id: body["id"].(string), body: body}
	}
	return out
}

// latest is the document's latest version, soft-deleted ones included
// (read from the change feed, which a point read would hide).
func (r *armRig) latest(id string) map[string]any {
	r.T.Helper()
	var last map[string]any
	cont := ""
	for {
		p, err := r.App.Store.ChangeFeed(context.Background(), cont, 1000)
		if err != nil {
			r.T.Fatal(err)
		}
		for _, it := range p.Items {
			var m map[string]any
			if json.Unmarshal(it.Body, &m) == nil && m["id"] == id {
				last = m
			}
		}
		if len(p.Items) == 0 {
			return last
		}
		cont = p.Continuation
	}
}

// changedPaths lists the members that differ between two documents,
// ignoring the Cosmos system fields.
func changedPaths(prefix string, a, b any) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if reflect.DeepEqual(a, b) {
			return nil
		}
		return []string{prefix}
	}
	var out []string
	keys := map[string]bool{}
	for k := range am {
		keys[k] = true
	}
	for k := range bm {
		keys[k] = true
	}
	for k := range keys {
		if prefix == "" && strings.HasPrefix(k, "_") {
			continue
		}
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		out = append(out, changedPaths(p, am[k], bm[k])...)
	}
	slices.Sort(out)
	return out
}

// TestCompatibilityCorpus loads documents shaped as upstream ARO-HCP
// writes them, runs create then delete on them, and checks that hcpops
// changes only the members it owns and deletes exactly what upstream's
// delete completion deletes.
func TestCompatibilityCorpus(t *testing.T) {
	clk := testsupport.NewClock(time.Date(2026, 8, 21, 9, 0, 1, 0, time.UTC))
	r := newARMRigAt(t, nil, clk)
	docs := loadCorpus(t, r)
	ops := func(names ...string) []*document.OperationDocument {
		var out []*document.OperationDocument
		for _, n := range names {
			out = append(out, r.op(strings.TrimPrefix(docs[n].body["resourceID"].(string), "/subscriptions/"+sub+"/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/")))
		}
		return out
	}
	creates := ops("cluster-create", "nodepool-create", "externalauth-create")
	r.drive(creates...)
	for _, op := range creates {
		if got := r.op(op.Name()); got.Properties.Status != arm.ProvisioningStateSucceeded {
			t.Fatalf("%s %s: %s %+v", op.Properties.Request, op.Properties.ExternalID, got.Properties.Status, got.Properties.Error)
		}
	}

	// Only hcpops's own members changed; everything upstream wrote survives.
	owned := map[string][]string{
		"cluster": {"properties.cosmosMetadata.etag", "properties.cosmosMetadata.instanceVersion",
			"properties.serviceProviderProperties.provisioningState", "properties.serviceProviderProperties.activeOperationId",
			"properties.serviceProviderProperties.clusterServiceID", "properties.serviceProviderProperties.pendingClusterServiceID"},
		"nodepool": {"properties.cosmosMetadata.etag", "properties.cosmosMetadata.instanceVersion", "properties.properties.provisioningState",
			"properties.serviceProviderProperties.activeOperationId", "properties.serviceProviderProperties.clusterServiceID"},
		"externalauth": {"properties.cosmosMetadata.etag", "properties.cosmosMetadata.instanceVersion", "properties.properties.provisioningState",
			"properties.serviceProviderProperties.activeOperationId", "properties.serviceProviderProperties.clusterServiceID"},
		// The active versions and channels hcpops keeps from CS (docs/arm.md).
		"serviceprovidercluster": {"properties.cosmosMetadata.etag", "properties.cosmosMetadata.instanceVersion",
			"properties.status.control_plane_version.active_versions", "properties.status.desiredVersionChannels"},
		// internalId is not among them: upstream writes none for these requests.
		"op": {"properties.cosmosMetadata.etag", "properties.cosmosMetadata.instanceVersion", "properties.status", "properties.lastTransitionTime"},
	}
	for name, d := range docs {
		allowed := owned[name]
		if strings.HasSuffix(name, "-create") {
			allowed = owned["op"]
		}
		for _, p := range changedPaths("", d.body, r.latest(d.id)) {
			if !slices.Contains(allowed, p) {
				t.Errorf("%s: hcpops changed %s, which it does not own", d.file, p)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	// The create's result is the cluster as ARM's GET shows it.
	if got := r.get(resultPath(creates[0].Name()), caller()...); got.status != 201 || !strings.Contains(string(got.body), `"baseDomainPrefix": "mycluster"`) {
		t.Fatalf("create result over the corpus: %d %s", got.status, got.body)
	}

	del := r.accepted(r.fe.Delete(context.Background(), docs["cluster"].body["resourceID"].(string), r.opts()))
	r.drive(del)
	if got := r.op(del.Name()); got.Properties.Status != arm.ProvisioningStateSucceeded {
		t.Fatalf("cluster delete: %s %+v", got.Properties.Status, got.Properties.Error)
	}
	for name, d := range docs {
		_, err := r.App.Store.Get(context.Background(), sub, d.id)
		gone := errors.Is(err, store.ErrNotFound)
		switch name {
		case "cluster", "nodepool", "externalauth", "serviceprovidercluster", "managementclustercontent":
			last := r.latest(d.id)
			if !gone || last["ttl"] != float64(30) || last["deletionTimestamp"] == nil {
				t.Errorf("%s: not soft-deleted (read err %v, ttl %v, deletionTimestamp %v)", name, err, last["ttl"], last["deletionTimestamp"])
			}
			if before, after := version(d.body), version(last); after <= before {
				t.Errorf("%s: instanceVersion %d after the delete, was %d", name, after, before)
			}
			if name == "serviceprovidercluster" || name == "managementclustercontent" {
				// Nobody else writes these: the soft delete (and hcpops's
				// active versions and channels) are the only change.
				for _, p := range changedPaths("", d.body, last) {
					switch p {
					case "deletionTimestamp", "ttl", "properties.cosmosMetadata.instanceVersion", "properties.cosmosMetadata.etag",
						"properties.status.control_plane_version.active_versions", "properties.status.desiredVersionChannels":
					default:
						t.Errorf("%s: the soft delete changed %s", name, p)
					}
				}
			}
		case "controller", "nodepool-controller", "subscription":
			if gone || err != nil {
				t.Errorf("%s was deleted (%v); upstream leaves it", name, err)
			}
			if p := changedPaths("", d.body, r.latest(d.id)); len(p) != 0 {
				t.Errorf("%s changed: %v", name, p)
			}
		}
	}
	if got := r.get(resultPath(del.Name()), caller()...); got.status != 204 {
		t.Errorf("delete result over the corpus: %d %s", got.status, got.body)
	}
}

func version(doc map[string]any) int {
	p, _ := doc["properties"].(map[string]any)
	cm, _ := p["cosmosMetadata"].(map[string]any)
	v, _ := cm["instanceVersion"].(float64)
	return int(v)
}
