package ocm

import (
	"context"

	jsoniter "github.com/json-iterator/go"
	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// listedNodePool is a node pool as a list page gave it. Its Href is only
// what the item said: ListNodePoolsByHref puts the href asked for in an
// empty one, as nodePoolFrom does for a GET.
type listedNodePool struct {
	np     cs.NodePool
	inline bool // the item carried its status (see listedCluster)
}

func (l listedNodePool) id() string { return l.np.ID }

// nodePoolPage asks for one page of a cluster's node pools search and
// reads it.
func (c *Client) nodePoolPage(ctx context.Context, clusterHref, search string, size, page int) (listPage[listedNodePool], error) {
	status, body, err := c.getPage(ctx, clusterHref+"/node_pools", search, size, page)
	if err != nil {
		return listPage[listedNodePool]{}, err
	}
	return readPage(status, body, nodePoolReaders)
}

var nodePoolReaders = pageReaders[listedNodePool]{wire: wireNodePool, sdk: sdkNodePools}

func sdkNodePools(it *jsoniter.Iterator) []listedNodePool {
	items := arohcp.ReadNodePoolList(it)
	out := make([]listedNodePool, len(items))
	for i, o := range items {
		st, ok := o.GetStatus()
		out[i] = listedNodePool{np: nodePoolFrom(o, ""), inline: ok && !st.Link() && st.State().NodePoolStateValue() != ""}
	}
	return out
}

// wireNodePool reads one listed node pool as sdkNodePools makes it of
// the SDK's object.
func wireNodePool(w *wire) listedNodePool {
	var out cs.NodePool
	var statusKind string
	var hasStatus bool
	w.object(func(name string) bool {
		switch name {
		case "kind":
			if w.str() != arohcp.NodePoolKind {
				w.fail()
			}
		case "id":
			out.ID = w.str()
		case "href":
			out.Href = w.str()
		case "replicas":
			out.Replicas = w.count()
		case "labels":
			out.Labels = map[string]string{}
			w.object(func(name string) bool {
				out.Labels[name] = w.str()
				return true
			})
		case "status":
			hasStatus = true
			st := &out.Status
			w.object(func(name string) bool {
				switch name {
				case "kind":
					statusKind = w.str()
				case "current_replicas":
					st.CurrentReplicas = w.count()
				case "message":
					st.Message = w.str()
				case "state":
					w.object(func(name string) bool { return keep(w, name, "value", &st.State) })
				default:
					w.skip()
					return false
				}
				return true
			})
		case "version":
			out.Version = wireVersion(w)
		default:
			w.skip()
			return false
		}
		return true
	})
	inline := hasStatus && statusKind != arohcp.NodePoolStatusLinkKind && out.Status.State != ""
	return listedNodePool{np: out, inline: inline}
}
