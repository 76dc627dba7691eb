package simulator

import (
	"net/http"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// Refusals for changes under a cluster that is being deleted, worded as CS
// words them (ARO-HCP matches on the delete texts).
const (
	refuseNodePoolCreate     = "Cluster is in state '%s', can't create node pools"
	refuseNodePoolUpdate     = "Node pools can only be updated on clusters in an updatable state. The cluster requested is in '%s' state."
	refuseNodePoolDelete     = "Cannot delete node pool: its parent cluster must be in a deletable state. Parent cluster state: '%s'"
	refuseExternalAuthCreate = "Cluster is in state '%s', can't create external auths"
	refuseExternalAuthUpdate = "ExternalAuths can only be updated on clusters in an updatable state. The cluster requested is in '%s' state."
	refuseExternalAuthDelete = "Cannot delete ExternalAuth: its parent cluster must be in deletable state. Parent cluster state: '%s'"
)

// parentFor returns the cluster a child request addresses; with a refusal
// it also refuses the change while the cluster is uninstalling.
func (s *Simulator) parentFor(r *http.Request, now time.Time, refusal string) (*cluster, error) {
	c, err := s.mustCluster(r.PathValue("id"), now)
	if err != nil {
		return nil, err
	}
	if st := c.state(now); refusal != "" && st == cs.ClusterStateUninstalling {
		return nil, errf(http.StatusBadRequest, refusal, st)
	}
	return c, nil
}

func (s *Simulator) listNodePools(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, "NodePoolList", arohcp.MarshalNodePoolList,
		func(now time.Time, page, size int) ([]*arohcp.NodePool, int, error) {
			expr := r.URL.Query().Get("search")
			q, err := parseSearch(expr, nodePoolFields)
			if err != nil {
				return nil, 0, errf(http.StatusBadRequest, "Search expression '%s' is invalid: %v", expr, err)
			}
			ids, _ := q.ids()
			s.ledger.list(r, len(ids))
			c, err := s.mustCluster(r.PathValue("id"), now)
			if err != nil {
				return nil, 0, err
			}
			var all []*nodePool
			for _, np := range c.liveNodePools(now) {
				if matchSearch(q, np, nodePoolFields) {
					all = append(all, np)
				}
			}
			return renderPage(all, page, size,
				func(np *nodePool) (*arohcp.NodePool, error) { return np.object(c, now) })
		})
}

func (s *Simulator) postNodePool(w http.ResponseWriter, r *http.Request) {
	in, err := readObject(r, arohcp.UnmarshalNodePool)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	if err := checkID("Node pool", in.ID()); err != nil {
		s.fail(w, r, err)
		return
	}
	if n, ok := in.GetReplicas(); ok && n < 0 {
		s.badRequest(w, r, "Attribute 'replicas' must not be negative, got %d", n)
		return
	}
	serveObject(s, w, r, http.StatusCreated, arohcp.MarshalNodePool,
		func(now time.Time) (*arohcp.NodePool, error) {
			c, err := s.parentFor(r, now, refuseNodePoolCreate)
			if err != nil {
				return nil, err
			}
			if st := c.state(now); st == cs.ClusterStateError {
				return nil, errf(http.StatusBadRequest, "Cluster '%s' is in state '%s', can't add node pools", c.id, st)
			}
			if c.liveNodePool(in.ID(), now) != nil {
				return nil, errf(http.StatusConflict,
					"Node pool with identifier '%s' already exists in cluster '%s'", in.ID(), c.id)
			}
			b := arohcp.NewNodePool().Copy(in).Status(nil)
			if v, ok := in.GetVersion(); ok {
				b.Version(s.resolveVersion(v))
			}
			spec, err := b.Build()
			if err != nil {
				return nil, errf(http.StatusBadRequest, "Invalid node pool: %v", err)
			}
			d := s.durations
			np := &nodePool{id: in.ID(), seq: s.nextSeq(), spec: spec,
				tl: timeline{start: now, final: cs.NodePoolStateReady, phases: []phase{
					{cs.NodePoolStateValidating, d.NodePoolValidating},
					{cs.NodePoolStatePending, d.NodePoolPending},
					{cs.NodePoolStateInstalling, d.NodePoolInstalling},
				}}}
			if f, ok := takeArmedChild(s.armed.nodePools, c, np.id); ok {
				if err := applyNodePoolFailure(np, f, now); err != nil {
					return nil, err
				}
			}
			c.nodePools[np.id] = np
			return np.object(c, now)
		})
}

// mustNodePool resolves {id}/{np} to a live node pool or a CS 404.
func (s *Simulator) mustNodePool(r *http.Request, now time.Time, refusal string) (*cluster, *nodePool, error) {
	c, err := s.parentFor(r, now, refusal)
	if err != nil {
		return nil, nil, err
	}
	id := r.PathValue("np")
	np := c.liveNodePool(id, now)
	if np == nil {
		return nil, nil, errf(http.StatusNotFound, "Node pool '%s' not found in cluster '%s'", id, c.id)
	}
	return c, np, nil
}

func (s *Simulator) getNodePool(w http.ResponseWriter, r *http.Request) {
	serveObject(s, w, r, http.StatusOK, arohcp.MarshalNodePool,
		func(now time.Time) (*arohcp.NodePool, error) {
			c, np, err := s.mustNodePool(r, now, "")
			if err != nil {
				return nil, err
			}
			return np.object(c, now)
		})
}

func (s *Simulator) getNodePoolStatus(w http.ResponseWriter, r *http.Request) {
	serveObject(s, w, r, http.StatusOK, arohcp.MarshalNodePoolStatus,
		func(now time.Time) (*arohcp.NodePoolStatus, error) {
			c, np, err := s.mustNodePool(r, now, "")
			if err != nil {
				return nil, err
			}
			return np.statusBuilder(c, now).Build()
		})
}

func (s *Simulator) patchNodePool(w http.ResponseWriter, r *http.Request) {
	patch, err := readObject(r, arohcp.UnmarshalNodePool)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	serveObject(s, w, r, http.StatusOK, arohcp.MarshalNodePool,
		func(now time.Time) (*arohcp.NodePool, error) {
			c, np, err := s.mustNodePool(r, now, refuseNodePoolUpdate)
			if err != nil {
				return nil, err
			}
			if st, ok := c.acceptsChanges(now); !ok {
				return nil, errf(http.StatusBadRequest, refuseNodePoolUpdate, st)
			}
			switch st, _ := np.tl.at(now); st {
			case cs.NodePoolStateReady, cs.NodePoolStateUpdating, cs.NodePoolStateRecoverableError:
			default:
				return nil, errf(http.StatusBadRequest, "Node pool can only be updated in a ready state. "+
					"The node pool requested is in '%s' state.", st)
			}
			spec, err := mergeNodePoolPatch(np, patch)
			if err != nil {
				return nil, err
			}
			np.spec = spec
			np.tl = transition(now, cs.NodePoolStateUpdating, s.durations.NodePoolUpdating, cs.NodePoolStateReady)
			np.message = ""
			return np.object(c, now)
		})
}

// mergeNodePoolPatch applies the fields an update may change and refuses a
// change of ID.
func mergeNodePoolPatch(np *nodePool, patch *arohcp.NodePool) (*arohcp.NodePool, error) {
	if id, ok := patch.GetID(); ok && id != np.id {
		return nil, errf(http.StatusBadRequest, "Attribute 'id' can't be changed from '%s' to '%s'", np.id, id)
	}
	b := arohcp.NewNodePool().Copy(np.spec)
	if n, ok := patch.GetReplicas(); ok {
		if n < 0 {
			return nil, errf(http.StatusBadRequest, "Attribute 'replicas' must not be negative, got %d", n)
		}
		b.Replicas(n)
	}
	if labels, ok := patch.GetLabels(); ok {
		b.Labels(labels)
	}
	spec, err := b.Build()
	if err != nil {
		return nil, errf(http.StatusBadRequest, "Invalid node pool: %v", err)
	}
	return spec, nil
}

// deleteNodePool starts the uninstall; a repeated DELETE does not restart
// it.
func (s *Simulator) deleteNodePool(w http.ResponseWriter, r *http.Request) {
	s.serveNoContent(w, r, func(now time.Time) error {
		_, np, err := s.mustNodePool(r, now, refuseNodePoolDelete)
		if err != nil {
			return err
		}
		if st, _ := np.tl.at(now); st != cs.NodePoolStateUninstalling {
			np.tl = transition(now, cs.NodePoolStateUninstalling, s.durations.NodePoolUninstalling, "")
		}
		return nil
	})
}

func (np *nodePool) href(c *cluster) string { return cs.NodePoolHref(c.href(), np.id) }

func (np *nodePool) object(c *cluster, now time.Time) (*arohcp.NodePool, error) {
	b := arohcp.NewNodePool().Copy(np.spec).
		ID(np.id).
		HREF(np.href(c)).
		Status(np.statusBuilder(c, now))
	if v := runningVersionBuilder(np.spec.Version(), np.upgrades, now); v != nil {
		b.Version(v)
	}
	return b.Build()
}

func (np *nodePool) statusBuilder(c *cluster, now time.Time) *arohcp.NodePoolStatusBuilder {
	st, since := np.tl.at(now)
	current := 0
	switch st {
	case cs.NodePoolStateReady, cs.NodePoolStateUpdating, cs.NodePoolStateUninstalling:
		current = np.spec.Replicas()
	case cs.NodePoolStateRecoverableError:
		current = np.spec.Replicas() / 2
	}
	b := arohcp.NewNodePoolStatus().
		ID(np.id).
		HREF(np.href(c) + "/status").
		CurrentReplicas(current).
		State(arohcp.NewNodePoolState().NodePoolStateValue(st).LastUpdatedTimestamp(since))
	if np.message != "" && (st == cs.NodePoolStateError || st == cs.NodePoolStateRecoverableError) {
		b.Message(np.message)
	}
	return b
}
