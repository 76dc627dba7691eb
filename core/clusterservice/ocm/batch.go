package ocm

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// Batched reads: one list request stands for many single-object GETs.
// Whether CS fills status in list items could not be verified (its server
// is not public), so an item listed without status is left out and its
// caller falls back to the GET. A list is evidence only when it keeps its
// own contract (see readList): one that does not is an error wrapping
// cs.ErrInconsistentList, and its caller GETs each object.

// ID search forms for CLUSTERS_SERVICE_ID_SEARCH. "or" joins equality
// terms, which the CS search language documents; "in" is shorter but not
// documented for CS.
const (
	IDSearchOr = "or"
	IDSearchIn = "in"
)

// idSearch renders the search for objects with these ids, written
// into one buffer: quoting each id on its own and joining them cost a
// tick an allocation per operation.
func (c *Client) idSearch(ids []string) string {
	first, sep, end := "id = ", " or id = ", ""
	if c.idForm == IDSearchIn {
		first, sep, end = "id in (", ", ", ")"
	}
	n := len(first) + len(end)
	for _, id := range ids {
		n += len(id) + 2 + len(sep) + strings.Count(id, "'")
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(first)
	for i, id := range ids {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteByte('\'')
		for {
			q := strings.IndexByte(id, '\'')
			if q < 0 {
				break
			}
			b.WriteString(id[:q+1])
			b.WriteByte('\'')
			id = id[q+1:]
		}
		b.WriteString(id)
		b.WriteByte('\'')
	}
	b.WriteString(end)
	return b.String()
}

func (c *Client) ListClustersByHref(ctx context.Context, hrefs []string) (map[string]cs.Cluster, error) {
	return call(ctx, c, "ListClustersByHref", firstOf(hrefs), func(ctx context.Context) (map[string]cs.Cluster, error) {
		if len(hrefs) == 0 {
			return map[string]cs.Cluster{}, nil
		}
		want := make(map[string]string, len(hrefs)) // lower-cased CS ID -> href asked for
		ids := make([]string, 0, len(hrefs))
		for _, h := range hrefs {
			id, err := parseCluster("cluster href", h)
			if err != nil {
				return nil, fmt.Errorf("listing clusters: %w", err)
			}
			if k := strings.ToLower(id); want[k] == "" {
				want[k] = h
				ids = append(ids, id)
			}
		}
		search := c.idSearch(ids)
		rules := listRules{call: "GET " + cs.ClustersPath + " search=" + search, want: want, size: len(ids), searched: true,
			under: strings.ToLower(cs.ClustersPath) + "/"}
		items, err := readList(ctx, rules, func(ctx context.Context, page int) (listPage[listedCluster], error) {
			return c.clusterPage(ctx, search, len(ids), page)
		}, listedCluster.id, func(l listedCluster) string { return l.c.Href }, func(a, b listedCluster) bool { return reflect.DeepEqual(a.c, b.c) })
		if err != nil {
			return nil, fmt.Errorf("listing %d clusters by id: %w", len(ids), err)
		}
		out := make(map[string]cs.Cluster, len(items))
		for k, o := range items {
			if o.inline {
				out[want[k]] = o.c
			}
		}
		return out, nil
	})
}

// clusterStatusInline reports whether a listed cluster carries its status
// (ClusterStatus is a class, which CS may send as a bare link).
func clusterStatusInline(o *arohcp.Cluster) bool {
	st, ok := o.GetStatus()
	return ok && !st.Link() && st.State() != ""
}

func (c *Client) ListNodePoolsByHref(ctx context.Context, clusterHref string, hrefs []string) (map[string]cs.NodePool, error) {
	return call(ctx, c, "ListNodePoolsByHref", clusterHref, func(ctx context.Context) (map[string]cs.NodePool, error) {
		_, want, ids, err := c.childrenWanted("node pool", clusterHref, hrefs, cs.NodePoolsSegment)
		if err != nil || len(ids) == 0 {
			return map[string]cs.NodePool{}, err
		}
		parent, _ := parseCluster("cluster href", clusterHref) // childrenWanted checked it
		search := c.idSearch(ids)
		rules := listRules{call: "GET " + clusterHref + "/node_pools search=" + search, want: want, size: len(ids), searched: true,
			under: strings.ToLower(cs.ClusterHref(parent) + cs.NodePoolsSegment)}
		items, err := readList(ctx, rules, func(ctx context.Context, page int) (listPage[listedNodePool], error) {
			return c.nodePoolPage(ctx, cs.ClusterHref(parent), search, len(ids), page)
		}, listedNodePool.id, func(l listedNodePool) string { return l.np.Href }, func(a, b listedNodePool) bool { return reflect.DeepEqual(a.np, b.np) })
		if err != nil {
			return nil, fmt.Errorf("listing %d node pools of %s: %w", len(ids), clusterHref, err)
		}
		out := make(map[string]cs.NodePool, len(items))
		for k, o := range items {
			if o.inline {
				np := o.np
				if np.Href == "" {
					np.Href = want[k]
				}
				out[want[k]] = np
			}
		}
		return out, nil
	})
}

// externalAuthPageSize is CS's default page size; a cluster has few
// external auths, so one page is the rule.
const externalAuthPageSize = 100

// maxExternalAuthPages bounds the pages of one cluster's external auths:
// the list takes no search, so only a bound on pages keeps a CS that never
// ends its list from holding the call.
const maxExternalAuthPages = 10

func (c *Client) ListExternalAuthsByHref(ctx context.Context, clusterHref string, hrefs []string) (map[string]cs.ExternalAuth, error) {
	return call(ctx, c, "ListExternalAuthsByHref", clusterHref, func(ctx context.Context) (map[string]cs.ExternalAuth, error) {
		_, want, ids, err := c.childrenWanted("external auth", clusterHref, hrefs, cs.ExternalAuthsSegment)
		if err != nil || len(ids) == 0 {
			return map[string]cs.ExternalAuth{}, err
		}
		parent, _ := parseCluster("cluster href", clusterHref) // childrenWanted checked it
		auths := arohcp.NewClusterClient(c.lists, cs.ClusterHref(parent)).ExternalAuthConfig().ExternalAuths()
		rules := listRules{call: "GET " + clusterHref + "/external_auth_config/external_auths", want: want, size: externalAuthPageSize,
			maxPages: maxExternalAuthPages, under: strings.ToLower(cs.ClusterHref(parent) + cs.ExternalAuthsSegment)}
		items, err := readList(ctx, rules, func(ctx context.Context, page int) (listPage[*arohcp.ExternalAuth], error) {
			resp, err := auths.List().Size(externalAuthPageSize).Page(page).SendContext(ctx)
			if err := csError(err, resp.Status()); err != nil {
				return listPage[*arohcp.ExternalAuth]{}, err
			}
			return pageOf(resp.Items().Slice(), resp.GetSize, resp.GetTotal), nil
		}, (*arohcp.ExternalAuth).ID, (*arohcp.ExternalAuth).HREF, func(a, b *arohcp.ExternalAuth) bool {
			return reflect.DeepEqual(externalAuthFrom(a, ""), externalAuthFrom(b, ""))
		})
		if err != nil {
			return nil, fmt.Errorf("listing external auths of %s: %w", clusterHref, err)
		}
		out := make(map[string]cs.ExternalAuth, len(ids))
		for k, po := range items {
			if o := *po; o != nil {
				if st, ok := o.GetStatus(); ok && st.State().Value() != "" {
					out[want[k]] = externalAuthFrom(o, want[k])
				}
			}
		}
		return out, nil
	})
}

// childrenWanted checks that every href is a child of clusterHref and maps
// the lower-cased child IDs to the hrefs asked for.
func (c *Client) childrenWanted(kind, clusterHref string, hrefs []string, segment string) (*arohcp.ClusterClient, map[string]string, []string, error) {
	cc, err := c.clusterClient(clusterHref)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("listing %ss: %w", kind, err)
	}
	parent, _ := parseCluster("cluster href", clusterHref)
	want := make(map[string]string, len(hrefs))
	ids := make([]string, 0, len(hrefs))
	for _, h := range hrefs {
		cid, id, err := parseChild(kind+" href", h, segment)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("listing %ss: %w", kind, err)
		}
		if !strings.EqualFold(cid, parent) {
			return nil, nil, nil, fmt.Errorf("listing %ss of %s: %s href %q belongs to cluster %s", kind, clusterHref, kind, h, cid)
		}
		if k := strings.ToLower(id); want[k] == "" {
			want[k] = h
			ids = append(ids, id)
		}
	}
	return cc, want, ids, nil
}
