package ocm

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	ocmerrors "github.com/openshift-online/ocm-sdk-go/errors"
	"github.com/openshift-online/ocm-sdk-go/helpers"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// The poll's batched cluster list, read from its body. The request is the
// SDK's (ClustersListRequest.SendContext's, through the same connection,
// so the same token, retries and observer); only the reading of the page
// differs: wire.go's reader when it understands the page, else the SDK's
// own reader, exactly as SendContext runs it.

// maxPageRoom bounds the room made for a page's items from what the page
// says of itself; readList refuses a page larger than was asked anyway.
const maxPageRoom = 1000

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
	query := url.Values{"page": {strconv.Itoa(page)}, "search": {search}, "size": {strconv.Itoa(size)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "", nil)
	if err != nil {
		return listPage[listedCluster]{}, err
	}
	req.URL = &url.URL{Path: cs.ClustersPath, RawQuery: query.Encode()}
	resp, err := c.conn.RoundTrip(req)
	if err != nil {
		return listPage[listedCluster]{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return listPage[listedCluster]{}, err
	}
	return readClusterPage(resp.StatusCode, body)
}

// readClusterPage reads a page as SendContext would, and maps its errors
// as csError does.
func readClusterPage(status int, body []byte) (listPage[listedCluster], error) {
	switch {
	case len(body) == 0:
		return listPage[listedCluster]{}, csError(nil, status)
	case status >= 400:
		e, err := ocmerrors.UnmarshalErrorStatus(body, status)
		if err != nil {
			return listPage[listedCluster]{}, err
		}
		return listPage[listedCluster]{}, csError(e, status)
	}
	if p, ok := wireClusterPage(body); ok {
		return p, nil
	}
	return sdkClusterPage(body)
}

// sdkClusterPage is the SDK's reading of a clusters page
// (readClustersListResponse), each item then made a cs.Cluster.
func sdkClusterPage(body []byte) (listPage[listedCluster], error) {
	var p listPage[listedCluster]
	it, err := helpers.NewIterator(body)
	if err != nil {
		return p, err
	}
	for {
		field := it.ReadObject()
		if field == "" {
			break
		}
		switch field {
		case "page":
			it.ReadInt()
		case "size":
			p.size, p.hasSize = it.ReadInt(), true
		case "total":
			p.total, p.hasTotal = it.ReadInt(), true
		case "items":
			items := arohcp.ReadClusterList(it)
			p.items = make([]listedCluster, len(items))
			for i, o := range items {
				p.items[i] = listedCluster{c: clusterFrom(o), inline: clusterStatusInline(o)}
			}
		default:
			it.ReadAny()
		}
	}
	if it.Error != nil {
		return listPage[listedCluster]{}, fmt.Errorf("reading a clusters page: %w", it.Error)
	}
	return p, nil
}

// wireClusterPage reads a clusters page with wire.go's reader: false when
// the page holds anything that reader leaves to the SDK's.
func wireClusterPage(body []byte) (listPage[listedCluster], bool) {
	var p listPage[listedCluster]
	w := newWire(body)
	w.object(func(name string) bool {
		switch name {
		case "page":
			w.count()
		case "size":
			p.size, p.hasSize = w.count(), true
		case "total":
			p.total, p.hasTotal = w.count(), true
		case "items":
			// CS sends size before items: room for them at once, up to
			// what a page of ours holds.
			p.items = make([]listedCluster, 0, min(max(p.size, 0), maxPageRoom))
			w.array(func() { p.items = append(p.items, wireCluster(w)) })
		default:
			w.skip()
			return false
		}
		return true
	})
	if !w.end() {
		return listPage[listedCluster]{}, false
	}
	return p, true
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
			var id, raw, channel string
			w.object(func(name string) bool {
				return keep(w, name, "id", &id, "raw_id", &raw, "channel_group", &channel)
			})
			out.Version = cs.RawVersion(id, raw, channel)
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

// keep reads member name into the string paired with it in pairs (name,
// *string, name, *string, ...), or skips it when no pair names it; it
// says which.
func keep(w *wire, name string, pairs ...any) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i].(string) == name {
			*pairs[i+1].(*string) = w.str()
			return true
		}
	}
	w.skip()
	return false
}
