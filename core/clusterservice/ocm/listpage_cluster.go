package ocm

import (
	"context"
	"math"

	jsoniter "github.com/json-iterator/go"
	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// listedCluster is a cluster as a list page gave it.
type listedCluster struct {
	c cs.Cluster
	// inline says the item carried its status (ClusterStatus is a class,
	// which CS may send as a bare link); one without is read with a GET.
	inline bool
}

func (l listedCluster) id() string { return l.c.ID }

// clusterPage asks for one page of the clusters search and reads it.
func (c *Client) clusterPage(ctx context.Context, search string, size, page int) (listPage[listedCluster], error) {
	status, body, err := c.getPage(ctx, cs.ClustersPath, search, size, page)
	if err != nil {
		return listPage[listedCluster]{}, err
	}
	return readClusterPage(status, body)
}

func readClusterPage(status int, body []byte) (listPage[listedCluster], error) {
	return readPage(status, body, clusterReaders)
}

var clusterReaders = pageReaders[listedCluster]{wire: wireCluster, sdk: sdkClusters}

// sdkClusters reads a page's items with the SDK's reader, each then made
// a cs.Cluster.
func sdkClusters(it *jsoniter.Iterator) []listedCluster {
	items := arohcp.ReadClusterList(it)
	out := make([]listedCluster, len(items))
	for i, o := range items {
		out[i] = listedCluster{c: clusterFrom(o), inline: clusterStatusInline(o)}
	}
	return out
}

// wireCluster reads one listed cluster as clusterFrom and
// clusterStatusInline make it of the SDK's object.
func wireCluster(w *wire) listedCluster {
	var out cs.Cluster
	var state, statusKind string
	var hasStatus, allowList bool
	var cidrs []string
	w.object(func(name string) bool {
		switch name {
		case "kind":
			if w.str() != arohcp.ClusterKind {
				w.fail()
			}
		case "id":
			out.ID = w.str()
		case "href":
			out.Href = w.str()
		case "name":
			out.Name = w.str()
		case "state":
			state = w.str()
		case "region":
			w.object(func(name string) bool { return keep(w, name, "id", &out.Region) })
		case "azure":
			a := &out.Azure
			w.object(func(name string) bool {
				return keep(w, name, "subscription_id", &a.SubscriptionID, "resource_group_name", &a.ResourceGroupName,
					"resource_name", &a.ResourceName, "tenant_id", &a.TenantID,
					"managed_resource_group_name", &a.ManagedResourceGroupName)
			})
		case "status":
			hasStatus = true
			st := &out.Status
			w.object(func(name string) bool {
				return keep(w, name, "kind", &statusKind, "state", &st.State, "description", &st.Description,
					"provision_error_code", &st.ProvisionErrorCode, "provision_error_message", &st.ProvisionErrorMessage)
			})
		case "node_drain_grace_period":
			out.NodeDrainGracePeriodMinutes = wireDrainMinutes(w)
		case "api":
			allowList, cidrs = wireAllow(w)
		case "version":
			out.Version = wireVersion(w)
		default:
			w.skip()
			return false
		}
		return true
	})
	if out.Href == "" && out.ID != "" {
		out.Href = cs.ClusterHref(out.ID)
	}
	if allowList {
		out.AuthorizedCIDRs = cidrs
	}
	inline := hasStatus && statusKind != arohcp.ClusterStatusLinkKind && out.Status.State != ""
	if out.Status.State == "" {
		out.Status.State = state
	}
	return listedCluster{c: out, inline: inline}
}

// wireAllow reads an api member's cidr_block_access.allow: whether its
// mode is an allow list, and its values.
func wireAllow(w *wire) (allowList bool, values []string) {
	w.object(func(name string) bool {
		if name != "cidr_block_access" {
			w.skip()
			return false
		}
		w.object(func(name string) bool {
			if name != "allow" {
				w.skip()
				return false
			}
			w.object(func(name string) bool {
				switch name {
				case "mode":
					allowList = w.str() == cidrAllowList
				case "values":
					values = []string{}
					w.array(func() { values = append(values, w.str()) })
				default:
					w.skip()
					return false
				}
				return true
			})
			return true
		})
		return true
	})
	return allowList, values
}

// wireDrainMinutes reads a node_drain_grace_period as clusterFrom does.
func wireDrainMinutes(w *wire) int {
	var value float64
	var unit string
	w.object(func(name string) bool {
		switch name {
		case "value":
			value = w.decimal()
		case "unit":
			unit = w.str()
		default:
			w.skip()
			return false
		}
		return true
	})
	if unit == "hours" || unit == "hour" {
		value *= 60
	}
	return int(math.Round(value))
}
