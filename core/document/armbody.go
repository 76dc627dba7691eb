package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// ARMBody renders the resource the way ARM's GET shows it, which is what an
// operation result returns for a Create or Update. id is the resource ID ARM
// asked about (ARO-HCP answers with the operation's externalId, so the
// caller's casing survives).
//
// This is not ARO-HCP's versioned conversion: it renders the ARM envelope
// (id, name, type, location, tags, systemData, and a cluster's identity) and
// the stored customer properties with provisioningState. For a cluster the
// read-only service-provider values ARM shows (dns.baseDomain, console.url,
// api.url, platform.issuerUrl) are merged in; other service-provider and
// status members stay internal, and no api-version defaulting is applied.
func (r *Resource) ARMBody(id string) ([]byte, error) { return r.ARMBodyAt(id, "") }

// ARMBodyAt is ARMBody as the request's api-version shows a cluster (""
// for none: the stored members as they are). The frontend renders through
// that version's conversion (NewHCPOpenShiftCluster); what of it holds
// whatever the document holds is applied here (clusterAt), and
// docs/arm.md lists what is left.
func (r *Resource) ARMBodyAt(id, apiVersion string) ([]byte, error) {
	if r.partial {
		return nil, r.errPartial()
	}
	doc := r.whole()
	body := tree{"id": id}
	for _, k := range []string{"name", "type", "location", "tags", "systemData"} {
		if v, ok := lookup(doc, []string{"properties", k}); ok {
			body[k] = deepCopy(v)
		}
	}
	if _, ok := body["type"]; !ok {
		body["type"] = r.ResourceType()
	}
	var props tree
	switch r.Kind {
	case KindCluster:
		props, _ = deepCopy(lookupTree(doc, pCustomer)).(tree)
		if v, ok := lookup(doc, []string{"properties", "identity"}); ok {
			body["identity"] = deepCopy(v)
		}
		for _, m := range clusterReadOnly {
			if v, ok := lookup(doc, append([]string{"properties", "serviceProviderProperties"}, m.from...)); ok {
				set(props, m.to, deepCopy(v))
			}
		}
		clusterAt(props, apiVersion)
	case KindNodePool, KindExternalAuth:
		props, _ = deepCopy(lookupTree(doc, pInner)).(tree)
	default:
		return nil, fmt.Errorf("resource %s: a %s has no ARM body", r.ResourceID(), r.Kind)
	}
	props["provisioningState"] = string(r.ProvisioningState())
	body["properties"] = props
	flat, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("rendering resource %s: %w", r.ResourceID(), err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, flat, "", "    "); err != nil {
		return nil, fmt.Errorf("rendering resource %s: %w", r.ResourceID(), err)
	}
	return out.Bytes(), nil
}

// clusterReadOnly maps the service-provider members ARM shows on a cluster
// to where the versioned API puts them.
var clusterReadOnly = []struct{ from, to []string }{
	{[]string{"dns", "baseDomain"}, []string{"dns", "baseDomain"}},
	{[]string{"console", "url"}, []string{"console", "url"}},
	{[]string{"api", "url"}, []string{"api", "url"}},
	// The internal key's casing has varied; either spelling is read.
	{[]string{"platform", "issuerURL"}, []string{"platform", "issuerUrl"}},
	{[]string{"platform", "issuerUrl"}, []string{"platform", "issuerUrl"}},
}

// lookupTree is the object at path, or an empty one.
func lookupTree(t tree, path []string) tree {
	if v, ok := lookupAs[tree](t, path); ok {
		return v
	}
	return tree{}
}

// firstNewShape is the first api-version whose conversion writes some
// numbers even when 0 (Ptr, not PtrOrNil: newShapeZeros) and moves the KMS
// key's vaultName up to kms, beside visibility.
const firstNewShape = "2025-12-23"

// newShapeZeros are the members the new shape writes even when 0: the
// document leaves a zero out (omitempty), the conversion writes it.
var newShapeZeros = [][]string{{"nodeDrainTimeoutMinutes"}, {"network", "hostPrefix"},
	{"autoscaling", "maxNodeProvisionTimeSeconds"}, {"autoscaling", "maxPodGracePeriodSeconds"},
	{"autoscaling", "podPriorityThreshold"}}

// clusterMaps are the members that are maps in the versioned API, not
// structs: written even when empty.
var clusterMaps = [][]string{{"platform", "operatorsAuthentication", "userAssignedIdentities", "controlPlaneOperators"},
	{"platform", "operatorsAuthentication", "userAssignedIdentities", "dataPlaneOperators"}}

// clusterAt applies to props what the frontend's conversion for
// apiVersion does whatever the document holds: every member goes through
// PtrOrNil (a null, false, "", 0 or empty struct is left out) but newShapeZeros
// and the maps, and the KMS profile takes the version's shape. Without an
// api-version (not a date) props stay as stored.
func clusterAt(props tree, apiVersion string) {
	if len(apiVersion) < len(firstNewShape) {
		return
	}
	newShape := apiVersion[:len(firstNewShape)] >= firstNewShape
	if kms, ok := lookupAs[tree](props, []string{"etcd", "dataEncryption", "customerManaged", "kms"}); ok {
		key, _ := kms["activeKey"].(tree)
		switch {
		case !newShape:
			delete(kms, "visibility") // 2024-06-10-preview has none
		case key != nil:
			if v, ok := key["vaultName"]; ok {
				kms["vaultName"] = v
				delete(key, "vaultName")
			}
		}
	}
	keep := map[string]bool{}
	if newShape {
		for _, path := range newShapeZeros {
			if _, ok := lookup(props, path); !ok {
				set(props, path, json.Number("0"))
			}
			keep[strings.Join(path, ".")] = true
		}
	}
	for _, path := range clusterMaps {
		keep[strings.Join(path, ".")] = true
	}
	dropEmpty(props, "", keep)
}

// dropEmpty removes, below t, what PtrOrNil leaves out: null, false, "",
// 0 and objects left empty, except the members keep names (dotted paths).
func dropEmpty(t tree, prefix string, keep map[string]bool) {
	for k, v := range t {
		path := prefix + k
		if keep[path] {
			continue
		}
		switch v := v.(type) {
		case nil:
			delete(t, k)
		case bool:
			if !v {
				delete(t, k)
			}
		case string:
			if v == "" {
				delete(t, k)
			}
		case json.Number:
			if f, err := v.Float64(); err == nil && f == 0 {
				delete(t, k)
			}
		case tree:
			dropEmpty(v, path+".", keep)
			if len(v) == 0 {
				delete(t, k)
			}
		}
	}
}
