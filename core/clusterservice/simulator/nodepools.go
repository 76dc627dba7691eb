package simulator

import (
	"net/http"
	"sort"
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
	page, size, err := s.paging(r)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	var items []*arohcp.NodePool
	total := 0
	err = s.locked(func(now time.Time) error {
		c, err := s.mustCluster(r.PathValue("id"), now)
		if err != nil {
			return err
		}
		var all []*nodePool
		for id := range c.nodePools {
			if np := c.liveNodePool(id, now); np != nil {
				all = append(all, np)
			}
		}
		sort.Slice(all, func(i, j int) bool { return all[i].seq < all[j].seq })
		total = len(all)
		for _, np := range pageOf(all, page, size) {
			obj, err := np.object(c, now)
			if err != nil {
				return err
			}
			items = append(items, obj)
		}
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeList(s, w, r, "NodePoolList", page, total, items, arohcp.MarshalNodePoolList)
}

func (s *Simulator) postNodePool(w http.ResponseWriter, r *http.Request) {
	data, err := readBody(r, false)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	in, err := decode(data, arohcp.UnmarshalNodePool)
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
	var out *arohcp.NodePool
	err = s.locked(func(now time.Time) error {
		c, err := s.parentFor(r, now, refuseNodePoolCreate)
		if err != nil {
			return err
		}
		if st := c.state(now); st == cs.ClusterStateError {
			return errf(http.StatusBadRequest, "Cluster '%s' is in state '%s', can't add node pools", c.id, st)
		}
		if c.liveNodePool(in.ID(), now) != nil {
			return errf(http.StatusConflict, "Node pool with identifier '%s' already exists in cluster '%s'", in.ID(), c.id)
		}
		spec, err := arohcp.NewNodePool().Copy(in).Status(nil).Build()
		if err != nil {
			return errf(http.StatusBadRequest, "Invalid node pool: %v", err)
		}
		d := s.durations
		np := &nodePool{id: in.ID(), seq: s.nextSeq(), spec: spec,
			tl: timeline{start: now, final: cs.NodePoolStateReady, phases: []phase{
				{cs.NodePoolStateValidating, d.NodePoolValidating},
				{cs.NodePoolStatePending, d.NodePoolPending},
				{cs.NodePoolStateInstalling, d.NodePoolInstalling},
			}}}
		if f, ok := s.takeArmedNodePool(c, np.id); ok {
			if err := applyNodePoolFailure(np, f, now); err != nil {
				return err
			}
		}
		c.nodePools[np.id] = np
		out, err = np.object(c, now)
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeObject(s, w, r, http.StatusCreated, out, arohcp.MarshalNodePool)
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
	var out *arohcp.NodePool
	err := s.locked(func(now time.Time) error {
		c, np, err := s.mustNodePool(r, now, "")
		if err != nil {
			return err
		}
		out, err = np.object(c, now)
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeObject(s, w, r, http.StatusOK, out, arohcp.MarshalNodePool)
}

func (s *Simulator) getNodePoolStatus(w http.ResponseWriter, r *http.Request) {
	var out *arohcp.NodePoolStatus
	err := s.locked(func(now time.Time) error {
		c, np, err := s.mustNodePool(r, now, "")
		if err != nil {
			return err
		}
		out, err = np.statusBuilder(c, now).Build()
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeObject(s, w, r, http.StatusOK, out, arohcp.MarshalNodePoolStatus)
}

func (s *Simulator) patchNodePool(w http.ResponseWriter, r *http.Request) {
	data, err := readBody(r, false)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	patch, err := decode(data, arohcp.UnmarshalNodePool)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	var out *arohcp.NodePool
	err = s.locked(func(now time.Time) error {
		c, np, err := s.mustNodePool(r, now, refuseNodePoolUpdate)
		if err != nil {
			return err
		}
		if st := c.state(now); st != cs.ClusterStateReady && st != cs.ClusterStateUpdating {
			return errf(http.StatusBadRequest, refuseNodePoolUpdate, st)
		}
		switch st, _ := np.tl.at(now); st {
		case cs.NodePoolStateReady, cs.NodePoolStateUpdating, cs.NodePoolStateRecoverableError:
		default:
			return errf(http.StatusBadRequest, "Node pool can only be updated in a ready state. "+
				"The node pool requested is in '%s' state.", st)
		}
		if id, ok := patch.GetID(); ok && id != np.id {
			return errf(http.StatusBadRequest, "Attribute 'id' can't be changed from '%s' to '%s'", np.id, id)
		}
		b := arohcp.NewNodePool().Copy(np.spec)
		if n, ok := patch.GetReplicas(); ok {
			if n < 0 {
				return errf(http.StatusBadRequest, "Attribute 'replicas' must not be negative, got %d", n)
			}
			b.Replicas(n)
		}
		if labels, ok := patch.GetLabels(); ok {
			b.Labels(labels)
		}
		if np.spec, err = b.Build(); err != nil {
			return errf(http.StatusBadRequest, "Invalid node pool: %v", err)
		}
		np.tl = timeline{start: now, final: cs.NodePoolStateReady,
			phases: []phase{{cs.NodePoolStateUpdating, s.durations.NodePoolUpdating}}}
		np.message = ""
		out, err = np.object(c, now)
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeObject(s, w, r, http.StatusOK, out, arohcp.MarshalNodePool)
}

func (s *Simulator) deleteNodePool(w http.ResponseWriter, r *http.Request) {
	err := s.locked(func(now time.Time) error {
		_, np, err := s.mustNodePool(r, now, refuseNodePoolDelete)
		if err != nil {
			return err
		}
		if st, _ := np.tl.at(now); st != cs.NodePoolStateUninstalling {
			np.tl = timeline{start: now, phases: []phase{{cs.NodePoolStateUninstalling, s.durations.NodePoolUninstalling}}}
		}
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (np *nodePool) href(c *cluster) string { return cs.NodePoolHref(c.href(), np.id) }

func (np *nodePool) object(c *cluster, now time.Time) (*arohcp.NodePool, error) {
	return arohcp.NewNodePool().Copy(np.spec).
		ID(np.id).
		HREF(np.href(c)).
		Status(np.statusBuilder(c, now)).
		Build()
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
