package document

import (
	"bytes"
	"encoding/json"
	"fmt"
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
func (r *Resource) ARMBody(id string) ([]byte, error) {
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
