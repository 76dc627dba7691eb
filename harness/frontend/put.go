package frontend

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// ClusterSpec is what a cluster PUT carries that the backend reads.
type ClusterSpec struct {
	Location                string
	VersionID               string
	ChannelGroup            string
	ManagedResourceGroup    string
	Tags                    map[string]string
	NodeDrainTimeoutMinutes *int
	AuthorizedCIDRs         []string
}

// NodePoolSpec is what a node pool PUT carries.
type NodePoolSpec struct {
	VersionID    string
	ChannelGroup string
	VMSize       string
	Replicas     int
	AutoRepair   bool
	Labels       map[string]string
}

// ExternalAuthSpec is what an external auth PUT carries.
type ExternalAuthSpec struct {
	IssuerURL string
	Audiences []string
	CA        string
}

// PutCluster creates the cluster, or updates it when it exists and no
// operation is in flight.
func (f *Frontend) PutCluster(ctx context.Context, resourceID string, spec ClusterSpec, opts Options) (Accepted, error) {
	return f.putCluster(ctx, resourceID, spec, opts, false)
}

// UpdateCluster is a PUT that only updates: a missing cluster is
// ErrNotFound and nothing is written, as ARM's PATCH answers 404.
func (f *Frontend) UpdateCluster(ctx context.Context, resourceID string, spec ClusterSpec, opts Options) (Accepted, error) {
	return f.putCluster(ctx, resourceID, spec, opts, true)
}

func (f *Frontend) putCluster(ctx context.Context, resourceID string, spec ClusterSpec, opts Options, mustExist bool) (Accepted, error) {
	t, err := parseTarget(resourceID, document.KindCluster)
	if err != nil {
		return Accepted{}, err
	}
	if opts.Location == "" {
		opts.Location = spec.Location
	}
	customer := map[string]any{
		"version":  map[string]any{"id": spec.VersionID, "channelGroup": spec.ChannelGroup},
		"network":  map[string]any{},
		"platform": map[string]any{"managedResourceGroup": spec.ManagedResourceGroup},
		"api":      map[string]any{},
	}
	if spec.NodeDrainTimeoutMinutes != nil {
		customer["nodeDrainTimeoutMinutes"] = *spec.NodeDrainTimeoutMinutes
	}
	if spec.AuthorizedCIDRs != nil {
		customer["api"] = map[string]any{"authorizedCidrs": spec.AuthorizedCIDRs}
	}
	props := map[string]any{"location": spec.Location, "tags": stringMap(spec.Tags), "customerProperties": customer}
	return f.put(ctx, t, nil, props, opts, mustExist)
}

// PutNodePool creates or updates a node pool under an existing cluster.
func (f *Frontend) PutNodePool(ctx context.Context, resourceID string, spec NodePoolSpec, opts Options) (Accepted, error) {
	return f.putNodePool(ctx, resourceID, spec, opts, false)
}

// UpdateNodePool updates an existing node pool; ErrNotFound writes nothing.
func (f *Frontend) UpdateNodePool(ctx context.Context, resourceID string, spec NodePoolSpec, opts Options) (Accepted, error) {
	return f.putNodePool(ctx, resourceID, spec, opts, true)
}

func (f *Frontend) putNodePool(ctx context.Context, resourceID string, spec NodePoolSpec, opts Options, mustExist bool) (Accepted, error) {
	t, parent, opts, err := f.child(ctx, resourceID, document.KindNodePool, opts)
	if err != nil {
		return Accepted{}, err
	}
	inner := map[string]any{
		"version":    map[string]any{"id": spec.VersionID, "channelGroup": spec.ChannelGroup},
		"platform":   map[string]any{"vmSize": spec.VMSize},
		"replicas":   spec.Replicas,
		"autoRepair": spec.AutoRepair,
		"labels":     stringMap(spec.Labels),
	}
	return f.put(ctx, t, parent, map[string]any{"location": parent.Location(), "properties": inner}, opts, mustExist)
}

// PutExternalAuth creates or updates an external auth under an existing
// cluster.
func (f *Frontend) PutExternalAuth(ctx context.Context, resourceID string, spec ExternalAuthSpec, opts Options) (Accepted, error) {
	return f.putExternalAuth(ctx, resourceID, spec, opts, false)
}

// UpdateExternalAuth updates an existing external auth; ErrNotFound
// writes nothing.
func (f *Frontend) UpdateExternalAuth(ctx context.Context, resourceID string, spec ExternalAuthSpec, opts Options) (Accepted, error) {
	return f.putExternalAuth(ctx, resourceID, spec, opts, true)
}

func (f *Frontend) putExternalAuth(ctx context.Context, resourceID string, spec ExternalAuthSpec, opts Options, mustExist bool) (Accepted, error) {
	t, parent, opts, err := f.child(ctx, resourceID, document.KindExternalAuth, opts)
	if err != nil {
		return Accepted{}, err
	}
	audiences := spec.Audiences
	if audiences == nil {
		audiences = []string{}
	}
	inner := map[string]any{
		"issuer":  map[string]any{"url": spec.IssuerURL, "audiences": audiences, "ca": spec.CA},
		"clients": []any{},
		"claim":   map[string]any{},
	}
	return f.put(ctx, t, parent, map[string]any{"properties": inner}, opts, mustExist)
}

// child is a child resource's target and its parent cluster, which must
// take child requests now (checkParent); opts without a location take the
// parent's, as the frontend's do.
func (f *Frontend) child(ctx context.Context, resourceID string, kind document.Kind, opts Options) (target, *document.Resource, Options, error) {
	t, err := parseTarget(resourceID, kind)
	if err != nil {
		return target{}, nil, opts, err
	}
	parent, err := f.checkParent(ctx, t)
	if err != nil {
		return target{}, nil, opts, err
	}
	if opts.Location == "" {
		opts.Location = parent.Location()
	}
	return t, parent, opts, nil
}

// put writes Create (new resource) or Update (existing, terminal) with the
// given member values merged into the resource's properties. mustExist
// refuses a missing resource (ErrNotFound) before anything is written.
func (f *Frontend) put(ctx context.Context, t target, parent *document.Resource, props map[string]any, opts Options, mustExist bool) (Accepted, error) {
	existing, err := f.read(ctx, t)
	if err != nil {
		return Accepted{}, err
	}
	if existing == nil && mustExist {
		return Accepted{}, fmt.Errorf("%s %s: %w; nothing was written", t.kind, t.id, ErrNotFound)
	}
	request := document.RequestCreate
	if existing != nil {
		request = document.RequestUpdate
		if s := existing.ProvisioningState(); !s.IsTerminal() {
			return Accepted{}, &ConflictError{Message: fmt.Sprintf("%s is %s; wait for its operation to finish", t.id, s)}
		}
	}
	op, err := f.newOperation(request, t.id, "", opts, false)
	if err != nil {
		return Accepted{}, err
	}
	opStep, err := createOp(op)
	if err != nil {
		return Accepted{}, err
	}
	var resStep store.BatchOp
	if existing == nil {
		r, err := f.newResource(t, op, props, opts.CreateDeadline)
		if err != nil {
			return Accepted{}, err
		}
		body, err := r.Marshal()
		if err != nil {
			return Accepted{}, fmt.Errorf("encoding %s: %w", t.id, err)
		}
		resStep = store.BatchOp{Kind: store.OpCreate, Body: body}
	} else {
		r, err := mergeProperties(existing, props)
		if err != nil {
			return Accepted{}, err
		}
		r.SetActiveOperationID(op.Name())
		r.SetProvisioningState(arm.ProvisioningStateAccepted)
		if resStep, err = replaceResource(r); err != nil {
			return Accepted{}, err
		}
	}
	if err := f.commit(ctx, t.pk, []store.BatchOp{opStep, resStep}); err != nil {
		return Accepted{}, err
	}
	return Accepted{Operation: op}, nil
}

// newResource renders a fresh resource document in ARO-HCP's shape.
// A create's deadline counts from the operation's startTime, so a caller
// knows it exactly.
func (f *Frontend) newResource(t target, op *document.OperationDocument, props map[string]any, deadline time.Duration) (*document.Resource, error) {
	rid, err := document.ParseResourceID("resourceID", t.id)
	if err != nil {
		return nil, err
	}
	typ := map[document.Kind]string{
		document.KindCluster: arm.ClusterResourceType, document.KindNodePool: arm.NodePoolResourceType,
		document.KindExternalAuth: arm.ExternalAuthResourceType,
	}[t.kind]
	now := f.now().UTC().Format("2006-01-02T15:04:05Z")
	p := map[string]any{
		"cosmosMetadata": map[string]any{"resourceID": t.id, "instanceVersion": 1, "partitionKey": t.pk},
		"id":             t.id, "name": rid.Name, "type": typ,
		"systemData":                map[string]any{"createdAt": now, "lastModifiedAt": now},
		"serviceProviderProperties": map[string]any{},
		"status":                    map[string]any{},
	}
	for k, v := range props {
		p[k] = v
	}
	spp := p["serviceProviderProperties"].(map[string]any)
	switch t.kind {
	case document.KindCluster:
		spp["usesNewClusterDeletionApproach"] = false
	case document.KindNodePool:
		spp["usesNewNodePoolDeletionApproach"] = false
	case document.KindExternalAuth:
		spp["usesNewExternalAuthDeletionApproach"] = false
	}
	raw, err := json.Marshal(map[string]any{
		"id": t.cosmosID, "partitionKey": t.pk, "resourceID": t.id, "resourceType": typ, "properties": p,
	})
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", t.id, err)
	}
	r, err := document.ParseResource(raw)
	if err != nil {
		return nil, err
	}
	r.SetActiveOperationID(op.Name())
	r.SetProvisioningState(arm.ProvisioningStateAccepted)
	if t.kind != document.KindExternalAuth {
		if deadline <= 0 {
			deadline = DefaultCreateDeadline
		}
		r.SetCreateOperationCompletionDeadline(op.Properties.StartTime.Add(deadline))
	}
	return r, nil
}

// mergeProperties overlays props onto the existing resource's properties,
// keeping every member it does not name.
func mergeProperties(r *document.Resource, props map[string]any) (*document.Resource, error) {
	raw, err := r.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", r.ResourceID(), err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", r.ResourceID(), err)
	}
	p, _ := doc["properties"].(map[string]any)
	if p == nil {
		p = map[string]any{}
		doc["properties"] = p
	}
	deepMerge(p, props)
	doc["_etag"] = r.ETag // so the parsed view carries the If-Match value
	raw, err = json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", r.ResourceID(), err)
	}
	return document.ParseResource(raw)
}

func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				deepMerge(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

func stringMap(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
