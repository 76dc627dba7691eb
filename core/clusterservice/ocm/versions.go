package ocm

import (
	"context"
	"fmt"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// versionsPath is CS's OpenShift versions collection.
const versionsPath = cs.AroHCPPrefix + "/versions"

func versionFrom(o *arohcp.Version) cs.Version {
	return cs.Version{ID: o.ID(), RawID: o.RawID(), ChannelGroup: o.ChannelGroup(), Enabled: o.Enabled(),
		Default: o.Default(), EndOfLife: o.EndOfLifeTimestamp(), AvailableUpgrades: o.AvailableUpgrades()}
}

// ListVersions reads every page of CS's versions that match search ("" for all).
func (c *Client) ListVersions(ctx context.Context, search string) ([]cs.Version, error) {
	return call(ctx, c, "ListVersions", versionsPath, func(ctx context.Context) ([]cs.Version, error) {
		versions := arohcp.NewVersionsClient(c.lists, versionsPath)
		out, err := collect(ctx, "GET "+versionsPath+" search="+search, maxVersions, func(ctx context.Context, page int) ([]cs.Version, int, bool, error) {
			req := versions.List().Page(page)
			if search != "" {
				req.Search(search)
			}
			resp, err := req.SendContext(ctx)
			if err := csError(err, resp.Status()); err != nil {
				return nil, 0, false, err
			}
			var items []cs.Version
			for _, o := range resp.Items().Slice() {
				items = append(items, versionFrom(o))
			}
			total, ok := resp.GetTotal()
			return items, total, ok, nil
		})
		if err != nil {
			return nil, fmt.Errorf("listing versions (search %q): %w", search, err)
		}
		return out, nil
	})
}

// GetVersion reads one version by its CS id (openshift-v4.21.20).
func (c *Client) GetVersion(ctx context.Context, id string) (cs.Version, error) {
	return call(ctx, c, "GetVersion", versionsPath+"/"+id, func(ctx context.Context) (cs.Version, error) {
		o, err := objectOf[*arohcp.Version](arohcp.NewVersionsClient(c.conn, versionsPath).Version(id).Get().SendContext(ctx))
		if err != nil {
			return cs.Version{}, fmt.Errorf("reading version %s: %w", id, err)
		}
		return versionFrom(o), nil
	})
}
