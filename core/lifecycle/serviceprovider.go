package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// Active versions. ARO-HCP's frontend accepts a node pool version change
// only when it knows the versions running: it reads them from the
// cluster's and node pool's service-provider documents, which upstream's
// active-version controllers keep from the management cluster. hcpops
// keeps them from what Clusters Service reports, in the shape upstream's
// coreapi marshals (ServiceProviderCluster: status.control_plane_version.
// active_versions; ServiceProviderNodePool: status.nodePoolVersion.
// activeVersions; entries {"version": "x.y.z"}, newest first), with an
// etag-guarded replace that keeps every other member.

// spDoc is where one kind keeps its active versions.
type spDoc struct {
	segment, typeName string   // child of the resource: "/serviceProviderClusters/default"
	path              []string // under properties, the list's parent
	list              string
}

var spDocs = map[document.Kind]spDoc{
	document.KindCluster: {segment: "/serviceProviderClusters/default", typeName: "serviceProviderClusters",
		path: []string{"status", "control_plane_version"}, list: "active_versions"},
	document.KindNodePool: {segment: "/serviceProviderNodePools/default", typeName: "nodePools/serviceProviderNodePools",
		path: []string{"status", "nodePoolVersion"}, list: "activeVersions"},
}

// recordActiveVersion makes version the active version in res's
// service-provider document: created when absent, replaced (etag-guarded,
// instanceVersion bumped, other members kept) when its newest entry
// differs, left alone otherwise. A lost race is retried later.
func recordActiveVersion(ctx context.Context, st store.Store, res *document.Resource, version string) error {
	sp, ok := spDocs[res.Kind]
	if !ok || version == "" {
		return nil
	}
	rid := res.ResourceID() + sp.segment
	pk, id := res.PartitionKey(), document.CosmosID(rid)
	item, err := st.Get(ctx, pk, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		doc := newSPDoc(rid, pk, id, sp)
		setActive(doc, sp, version)
		body, err := json.Marshal(doc)
		if err != nil {
			return fmt.Errorf("encoding %s: %w", rid, err)
		}
		if _, err := st.Create(ctx, pk, body); errors.Is(err, store.ErrConflict) {
			return retryLater("%s was created meanwhile", rid)
		} else if err != nil {
			return fmt.Errorf("creating %s: %w", rid, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("reading %s: %w", rid, err)
	}
	dec := json.NewDecoder(bytes.NewReader(item.Body))
	dec.UseNumber() // numbers stay as written
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("%w: %s: %w", errMalformed, rid, err)
	}
	if activeNewest(doc, sp) == version {
		return nil
	}
	for _, k := range []string{"_rid", "_self", "_etag", "_attachments", "_ts"} {
		delete(doc, k)
	}
	setActive(doc, sp, version)
	if meta, ok := member(doc, "properties", "cosmosMetadata"); ok {
		n, ok := meta["instanceVersion"].(json.Number)
		v, err := n.Int64()
		if !ok || err != nil {
			v = 1 // ARO-HCP reads a document without one as 1
		}
		meta["instanceVersion"] = v + 1
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", rid, err)
	}
	if _, err := st.Replace(ctx, pk, id, body, item.ETag); errors.Is(err, store.ErrPreconditionFailed) {
		return retryLater("%s changed meanwhile", rid)
	} else if err != nil {
		return fmt.Errorf("replacing %s: %w", rid, err)
	}
	return nil
}

func newSPDoc(rid, pk, id string, sp spDoc) map[string]any {
	return map[string]any{
		"id": id, "partitionKey": pk, "resourceID": rid,
		"resourceType": arm.ClusterResourceType + "/" + sp.typeName,
		"properties": map[string]any{
			"cosmosMetadata": map[string]any{"resourceID": rid, "instanceVersion": 1, "partitionKey": pk},
		},
	}
}

// member walks doc's objects along path, creating none; ok is false when
// one is missing or not an object.
func member(doc map[string]any, path ...string) (map[string]any, bool) {
	cur := doc
	for _, k := range path {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// activeNewest is the first entry's version, "" when there is none.
func activeNewest(doc map[string]any, sp spDoc) string {
	parent, ok := member(doc, append([]string{"properties"}, sp.path...)...)
	if !ok {
		return ""
	}
	list, _ := parent[sp.list].([]any)
	if len(list) == 0 {
		return ""
	}
	first, _ := list[0].(map[string]any)
	v, _ := first["version"].(string)
	return strings.TrimPrefix(v, "v")
}

// setActive makes version the only active version, creating the path.
func setActive(doc map[string]any, sp spDoc, version string) {
	cur := doc
	for _, k := range append([]string{"properties"}, sp.path...) {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	cur[sp.list] = []any{map[string]any{"version": version}}
}
