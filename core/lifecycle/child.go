package lifecycle

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
)

// dispatchChildCreate creates the CS node pool or external auth of j.res.
// Its CS ID is deterministic (the lower-cased ARM name under the parent's
// href), so a GET tells whether an earlier attempt created it already and
// a repeated dispatch never creates a second one. A parent cluster not yet
// in CS defers the work to a later tick.
func (e *Engine) dispatchChildCreate(ctx context.Context, j *job) (outcome, error) {
	parentID, err := document.ParentClusterID(j.res.ResourceID())
	if err != nil {
		return outcomeSkipped, fmt.Errorf("%w: %w", errMalformed, err)
	}
	parent, err := e.readResource(ctx, j.op.PartitionKey, parentID)
	if err != nil {
		return outcomeSkipped, err
	}
	if parent == nil || parent.ClusterServiceID() == "" {
		return outcomeDeferred, fmt.Errorf("%w: parent cluster %s is not in clusters service yet", errRetryLater, parentID)
	}
	clusterHref := parent.ClusterServiceID()
	id := strings.ToLower(j.res.Name())

	var href string
	switch j.kind {
	case document.KindNodePool:
		href = cs.NodePoolHref(clusterHref, id)
		_, err = e.cs.GetNodePool(ctx, href)
		if cs.IsNotFound(err) {
			var spec document.NodePoolSpec
			if spec, err = j.res.NodePool(); err != nil {
				return outcomeSkipped, fmt.Errorf("%w: %w", errMalformed, err)
			}
			_, err = e.cs.PostNodePool(ctx, clusterHref, cs.NodePoolSpec{
				ID: id, VersionID: spec.Version.ID, ChannelGroup: spec.Version.ChannelGroup, VMSize: spec.VMSize,
				Replicas: int(spec.Replicas), AutoRepair: spec.AutoRepair, Labels: spec.Labels,
			})
		}
	case document.KindExternalAuth:
		href = cs.ExternalAuthHref(clusterHref, id)
		_, err = e.cs.GetExternalAuth(ctx, href)
		if cs.IsNotFound(err) {
			var iss document.Issuer
			if iss, err = j.res.Issuer(); err != nil {
				return outcomeSkipped, fmt.Errorf("%w: %w", errMalformed, err)
			}
			_, err = e.cs.PostExternalAuth(ctx, clusterHref, cs.ExternalAuthSpec{
				ID: id, IssuerURL: iss.URL, Audiences: iss.Audiences, IssuerCA: iss.CA,
			})
		}
	default:
		return outcomeSkipped, fmt.Errorf("%w: %s is not a node pool or external auth", errMalformed, j.res.ResourceID())
	}
	if err != nil && !isStatus(err, http.StatusConflict) {
		return outcomeSkipped, fmt.Errorf("creating %s %s: %w", j.kind, href, err)
	}
	res, _, err := e.mutateResource(ctx, j.res, func(r *document.Resource) (bool, error) {
		if r.ClusterServiceID() != "" {
			return false, nil
		}
		r.SetClusterServiceID(href)
		return true, nil
	})
	if err != nil {
		return outcomeSkipped, fmt.Errorf("recording clusters service ID %s: %w", href, err)
	}
	if res != nil {
		j.res = res
	}
	j.log.Info("created in clusters service", "cluster_service_id", href)
	return outcomeDispatched, nil
}

// updateTarget is the CS href an update PATCHes. A resource CS never had
// (its create failed before the POST) can never be updated, so such an
// update fails at once instead of waiting forever; href is then "".
func (e *Engine) updateTarget(ctx context.Context, j *job) (string, error) {
	if href := j.res.ClusterServiceID(); href != "" {
		return href, nil
	}
	j.log.Warn("resource has no clusters service object; failing the update")
	_, err := e.updateOperationStatus(ctx, j, arm.ProvisioningStateFailed, &arm.CloudErrorBody{
		Code:    arm.CodeInternalServerError,
		Message: fmt.Sprintf("The %s was never created, so it cannot be updated.", j.kind),
	}, &tally{})
	return "", err
}
