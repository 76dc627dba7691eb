package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// TestRecordActiveVersion: the service-provider document is created when
// absent, replaced with the new active version (other members kept,
// instanceVersion bumped) when CS reports another, left alone when it
// reports the same, and a replace that lost its etag race is retried, not
// forced.
func TestRecordActiveVersion(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c1")
	ctx := context.Background()
	spRID := clusterRID("c1") + "/serviceProviderClusters/default"
	active := func() (obj, []any) {
		t.Helper()
		doc, _ := e.readDoc(t, spRID)
		list, _ := props(doc)["status"].(obj)["control_plane_version"].(obj)["active_versions"].([]any)
		return doc, list
	}
	// The cluster's create recorded the version CS runs it at.
	if _, list := active(); !reflect.DeepEqual(list, []any{obj{"version": "4.20.25"}}) {
		t.Fatalf("after the create, active_versions = %v; want [4.20.25]", list)
	}
	// Members another writer keeps survive.
	e.editDoc(t, spRID, func(doc obj) {
		props(doc)["spec"] = obj{"control_plane_version": obj{"desired_version": "4.21.20"}}
		props(doc)["status"].(obj)["conditions"] = []any{obj{"type": "Degraded", "status": "False"}}
	})
	res := e.resource(t, clusterRID("c1"))
	before, _ := active()
	if err := recordActiveVersion(ctx, e.store, res, "4.21.20"); err != nil {
		t.Fatal(err)
	}
	after, list := active()
	if !reflect.DeepEqual(list, []any{obj{"version": "4.21.20"}}) {
		t.Errorf("active_versions = %v; want [4.21.20]", list)
	}
	if !reflect.DeepEqual(props(after)["spec"], props(before)["spec"]) ||
		!reflect.DeepEqual(props(after)["status"].(obj)["conditions"], props(before)["status"].(obj)["conditions"]) {
		t.Errorf("other members changed: %v -> %v", props(before), props(after))
	}
	if v := version(after); v != version(before)+1 {
		t.Errorf("instanceVersion %d after a replace, was %d", v, version(before))
	}
	// The same version again writes nothing.
	_, etag := e.readDoc(t, spRID)
	if err := recordActiveVersion(ctx, e.store, res, "4.21.20"); err != nil {
		t.Fatal(err)
	}
	if _, again := e.readDoc(t, spRID); again != etag {
		t.Errorf("a second record of the same version rewrote the document")
	}
	// A lost race is retried later.
	racing := &racingStore{Store: e.store.Store, race: func() {
		e.editDoc(t, spRID, func(doc obj) { props(doc)["touched"] = true })
	}}
	err := recordActiveVersion(ctx, racing, res, "4.22.1")
	if !errors.Is(err, errRetryLater) {
		t.Errorf("record after a racing write = %v; want retry later", err)
	}
	if _, list := active(); !reflect.DeepEqual(list, []any{obj{"version": "4.21.20"}}) {
		t.Errorf("active_versions = %v after the lost race; want them as the racing writer left them", list)
	}
	// A node pool's document has upstream's node pool shape.
	e.drive(t, e.create(t, document.KindNodePool, nodePoolRID("c1", "np1"), request{}))
	doc, _ := e.readDoc(t, nodePoolRID("c1", "np1")+"/serviceProviderNodePools/default")
	if got := props(doc)["status"].(obj)["nodePoolVersion"].(obj)["activeVersions"]; !reflect.DeepEqual(got, []any{obj{"version": "4.20.3"}}) {
		t.Errorf("node pool activeVersions = %v; want [4.20.3]", got)
	}
	if doc["resourceType"] != "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/nodePools/serviceProviderNodePools" {
		t.Errorf("resourceType = %v", doc["resourceType"])
	}
}

// racingStore runs race before its first replace, as another writer
// getting there first.
type racingStore struct {
	store.Store
	race func()
	done bool
}

func (s *racingStore) Replace(ctx context.Context, pk, id string, doc []byte, ifMatch string) (store.Item, error) {
	if !s.done {
		s.done = true
		s.race()
	}
	return s.Store.Replace(ctx, pk, id, doc, ifMatch)
}

func version(doc obj) int64 {
	n, _ := props(doc)["cosmosMetadata"].(obj)["instanceVersion"].(float64)
	return int64(n)
}

// TestServiceProviderDocRoundTrips: a service-provider document with
// members this project does not know (top level and under properties)
// and every Cosmos system member is replaced as every other write is
// (core/document): unknown members kept as written, system members not
// sent back, cosmosMetadata.etag the etag it was read with,
// instanceVersion bumped, the replace guarded by that etag. Before, _lsn
// was sent back and cosmosMetadata.etag left as it was.
func TestServiceProviderDocRoundTrips(t *testing.T) {
	e := newEnv(t)
	e.readyCluster(t, "c1")
	ctx := context.Background()
	spRID := clusterRID("c1") + "/serviceProviderClusters/default"
	e.editDoc(t, spRID, func(doc obj) {
		doc["futureEnvelope"] = obj{"n": 1.5, "list": []any{"a", 2.0}}
		doc["_lsn"] = 42.0
		doc["_attachments"] = "attachments/"
		props(doc)["futureMember"] = "kept"
		props(doc)["cosmosMetadata"].(obj)["etag"] = "an older etag"
	})
	_, readETag := e.readDoc(t, spRID)
	rec := &replaceLog{Store: e.store.Store}
	before, _ := e.readDoc(t, spRID)
	if err := recordActiveVersion(ctx, rec, e.resource(t, clusterRID("c1")), "4.21.20"); err != nil {
		t.Fatal(err)
	}
	if len(rec.replaces) != 1 {
		t.Fatalf("%d replaces, want 1", len(rec.replaces))
	}
	sent, ifMatch := rec.replaces[0].doc, rec.replaces[0].ifMatch
	if ifMatch != readETag {
		t.Errorf("replace If-Match %q, want the etag read %q", ifMatch, readETag)
	}
	for _, k := range []string{"_rid", "_self", "_etag", "_attachments", "_ts", "_lsn"} {
		if _, ok := sent[k]; ok {
			t.Errorf("system member %s sent back: %v", k, sent[k])
		}
	}
	if !reflect.DeepEqual(sent["futureEnvelope"], before["futureEnvelope"]) || props(sent)["futureMember"] != "kept" {
		t.Errorf("unknown members not kept: %v", sent)
	}
	cm := props(sent)["cosmosMetadata"].(obj)
	if cm["etag"] != readETag {
		t.Errorf("cosmosMetadata.etag = %v, want the etag read %q", cm["etag"], readETag)
	}
	if version(sent) != version(before)+1 {
		t.Errorf("instanceVersion %d, want %d", version(sent), version(before)+1)
	}
	list := props(sent)["status"].(obj)["control_plane_version"].(obj)["active_versions"]
	if !reflect.DeepEqual(list, []any{obj{"version": "4.21.20"}}) {
		t.Errorf("active_versions = %v", list)
	}
}

// replaceLog keeps what is sent to Replace, then replaces.
type replaceLog struct {
	store.Store
	replaces []struct {
		doc     obj
		ifMatch string
	}
}

func (s *replaceLog) Replace(ctx context.Context, pk, id string, doc []byte, ifMatch string) (store.Item, error) {
	var m obj
	if err := json.Unmarshal(doc, &m); err != nil {
		return store.Item{}, err
	}
	s.replaces = append(s.replaces, struct {
		doc     obj
		ifMatch string
	}{m, ifMatch})
	return s.Store.Replace(ctx, pk, id, doc, ifMatch)
}
