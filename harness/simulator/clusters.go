package simulator

import (
	"net"
	"net/http"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// listClusters answers a cluster search. A search bound to ids (every
// alternative names an id) looks those clusters up instead of scanning
// them all, as a database index would.
func (s *Simulator) listClusters(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, "ClusterList", arohcp.MarshalClusterList,
		func(now time.Time, page, size int) ([]*arohcp.Cluster, int, error) {
			expr := r.URL.Query().Get("search")
			q, err := parseSearch(expr, clusterFields)
			if err != nil {
				return nil, 0, errf(http.StatusBadRequest, "Search expression '%s' is invalid: %v", expr, err)
			}
			ids, bound := q.ids()
			s.ledger.list(r, len(ids))
			candidates := s.liveClusters
			if bound {
				candidates = func(now time.Time) []*cluster { return s.clustersByID(ids, now) }
			}
			var all []*cluster
			for _, c := range candidates(now) {
				if matchSearch(q, c.spec, clusterFields) {
					all = append(all, c)
				}
			}
			return renderPage(all, page, size, func(c *cluster) (*arohcp.Cluster, error) { return c.object(now) })
		})
}

func (s *Simulator) postCluster(w http.ResponseWriter, r *http.Request) {
	in, err := readObject(r, arohcp.UnmarshalCluster)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	if err := validateNewCluster(in); err != nil {
		s.fail(w, r, err)
		return
	}
	id := in.ID()
	if id == "" {
		id = s.newID()
	}
	checkID := s.newUUID()
	serveObject(s, w, r, http.StatusCreated, arohcp.MarshalCluster,
		func(now time.Time) (*arohcp.Cluster, error) {
			if s.liveCluster(id, now) != nil {
				return nil, errf(http.StatusConflict, "Cluster with identifier '%s' already exists", id)
			}
			b := arohcp.NewCluster().Copy(in).ID(id).HREF(cs.ClusterHref(id)).Status(nil)
			if v, ok := in.GetVersion(); ok {
				b.Version(s.resolveVersion(v))
			}
			spec, err := b.Build()
			if err != nil {
				return nil, errf(http.StatusBadRequest, "Invalid cluster: %v", err)
			}
			d := s.durations
			c := &cluster{
				id:      id,
				seq:     s.nextSeq(),
				spec:    spec,
				created: now,
				tl: timeline{start: now, final: cs.ClusterStateReady, phases: []phase{
					{cs.ClusterStateValidating, d.ClusterValidating},
					{cs.ClusterStatePending, d.ClusterPending},
					{cs.ClusterStateInstalling, d.ClusterInstalling},
				}},
				checks:        []inflightCheck{{id: checkID, name: "network"}},
				checksEnded:   now.Add(d.ClusterValidating),
				nodePools:     map[string]*nodePool{},
				externalAuths: map[string]*externalAuth{},
				creds:         map[string]*credential{},
			}
			if f, ok := s.takeArmedCluster(c); ok {
				if err := s.applyClusterFailure(c, f, now); err != nil {
					return nil, err
				}
			}
			s.clusters[id] = c
			return c.object(now)
		})
}

// validateNewCluster checks what dispatch always sends and adoption
// searches on.
func validateNewCluster(in *arohcp.Cluster) error {
	if id, ok := in.GetID(); ok {
		if err := checkID("Cluster", id); err != nil {
			return err
		}
	}
	if in.Name() == "" {
		return errf(http.StatusBadRequest, "Attribute 'name' is required")
	}
	for _, f := range []struct{ name, value string }{
		{"azure.subscription_id", in.Azure().SubscriptionID()},
		{"azure.resource_group_name", in.Azure().ResourceGroupName()},
		{"azure.resource_name", in.Azure().ResourceName()},
	} {
		if f.value == "" {
			return errf(http.StatusBadRequest, "Attribute '%s' is required", f.name)
		}
	}
	return nil
}

func (s *Simulator) getCluster(w http.ResponseWriter, r *http.Request) {
	serveObject(s, w, r, http.StatusOK, arohcp.MarshalCluster, func(now time.Time) (*arohcp.Cluster, error) {
		c, err := s.mustCluster(r.PathValue("id"), now)
		if err != nil {
			return nil, err
		}
		return c.object(now)
	})
}

func (s *Simulator) getClusterStatus(w http.ResponseWriter, r *http.Request) {
	serveObject(s, w, r, http.StatusOK, arohcp.MarshalClusterStatus,
		func(now time.Time) (*arohcp.ClusterStatus, error) {
			c, err := s.mustCluster(r.PathValue("id"), now)
			if err != nil {
				return nil, err
			}
			return c.statusBuilder(now).Build()
		})
}

// getInflightChecks is not paged: CS sends every check on one page.
func (s *Simulator) getInflightChecks(w http.ResponseWriter, r *http.Request) {
	var items []*arohcp.InflightCheck
	err := s.locked(func(now time.Time) error {
		c, err := s.mustCluster(r.PathValue("id"), now)
		if err != nil {
			return err
		}
		items, err = c.inflightChecks(now)
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeList(s, w, r, "InflightCheckList", 1, len(items), items, arohcp.MarshalInflightCheckList)
}

func (s *Simulator) patchCluster(w http.ResponseWriter, r *http.Request) {
	patch, err := readObject(r, arohcp.UnmarshalCluster)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	serveObject(s, w, r, http.StatusOK, arohcp.MarshalCluster, func(now time.Time) (*arohcp.Cluster, error) {
		c, err := s.mustCluster(r.PathValue("id"), now)
		if err != nil {
			return nil, err
		}
		if st, ok := c.acceptsChanges(now); !ok {
			return nil, errf(http.StatusBadRequest, "Cluster '%s' is in state '%s', can't update", c.id, st)
		}
		spec, err := mergeClusterPatch(c, patch)
		if err != nil {
			return nil, err
		}
		c.spec = spec
		c.tl = transition(now, cs.ClusterStateUpdating, s.durations.ClusterUpdating, cs.ClusterStateReady)
		return c.object(now)
	})
}

// mergeClusterPatch applies the fields an update may change and refuses
// changes to the identity fields.
func mergeClusterPatch(c *cluster, p *arohcp.Cluster) (*arohcp.Cluster, error) {
	if id, ok := p.GetID(); ok && id != c.id {
		return nil, errf(http.StatusBadRequest, "Attribute 'id' can't be changed from '%s' to '%s'", c.id, id)
	}
	if name, ok := p.GetName(); ok && name != c.spec.Name() {
		return nil, errf(http.StatusBadRequest, "Attribute 'name' can't be changed from '%s' to '%s'", c.spec.Name(), name)
	}
	b := arohcp.NewCluster().Copy(c.spec)
	if v, ok := p.GetNodeDrainGracePeriod(); ok {
		minutes := v.Value()
		switch v.Unit() {
		case "", "minutes", "minute":
		case "hours", "hour":
			minutes *= 60
		default:
			return nil, errf(http.StatusBadRequest,
				"Attribute 'node_drain_grace_period.unit' must be 'minutes' or 'hours', got '%s'", v.Unit())
		}
		if minutes < 0 || minutes > 10080 {
			return nil, errf(http.StatusBadRequest,
				"Attribute 'node_drain_grace_period' must be between 0 and 10080 minutes, got %v", minutes)
		}
		b.NodeDrainGracePeriod(arohcp.NewValue().Unit("minutes").Value(minutes))
	}
	if api, ok := p.GetAPI(); ok {
		if access, ok := api.GetCIDRBlockAccess(); ok {
			if err := checkCIDRAccess(access); err != nil {
				return nil, err
			}
			ab := arohcp.NewClusterAPI()
			if cur, ok := c.spec.GetAPI(); ok {
				ab.Copy(cur)
			}
			b.API(ab.CIDRBlockAccess(arohcp.NewCIDRBlockAccess().Copy(access)))
		}
	}
	spec, err := b.Build()
	if err != nil {
		return nil, errf(http.StatusBadRequest, "Invalid cluster: %v", err)
	}
	return spec, nil
}

func checkCIDRAccess(a *arohcp.CIDRBlockAccess) error {
	allow := a.Allow()
	switch allow.Mode() {
	case "allow_all":
		if len(allow.Values()) > 0 {
			return errf(http.StatusBadRequest, "Attribute 'api.cidr_block_access.allow.values' must be empty in mode 'allow_all'")
		}
	case "allow_list":
		for _, v := range allow.Values() {
			if _, _, err := net.ParseCIDR(v); err != nil && net.ParseIP(v) == nil {
				return errf(http.StatusBadRequest,
					"Attribute 'api.cidr_block_access.allow.values' contains '%s', which is not a CIDR or IP address", v)
			}
		}
	default:
		return errf(http.StatusBadRequest,
			"Attribute 'api.cidr_block_access.allow.mode' must be 'allow_all' or 'allow_list', got '%s'", allow.Mode())
	}
	return nil
}

// deleteCluster uninstalls the cluster with its children; a repeated
// DELETE does not restart the uninstall.
func (s *Simulator) deleteCluster(w http.ResponseWriter, r *http.Request) {
	s.serveNoContent(w, r, func(now time.Time) error {
		c, err := s.mustCluster(r.PathValue("id"), now)
		if err != nil {
			return err
		}
		if c.state(now) == cs.ClusterStateUninstalling {
			return nil
		}
		gone := transition(now, cs.ClusterStateUninstalling, s.durations.ClusterUninstalling, "")
		c.tl = gone
		for _, np := range c.nodePools {
			np.tl = gone
		}
		for _, ea := range c.externalAuths {
			ea.tl = gone
		}
		return nil
	})
}

// object renders the cluster with its current state.
func (c *cluster) object(now time.Time) (*arohcp.Cluster, error) {
	st := c.state(now)
	b := arohcp.NewCluster().Copy(c.spec).
		ID(c.id).
		HREF(c.href()).
		State(arohcp.ClusterState(st)).
		Status(c.statusBuilder(now))
	if v := runningVersionBuilder(c.spec.Version(), c.upgrades, now); v != nil {
		b.Version(v)
	}
	return b.Build()
}

func (c *cluster) statusBuilder(now time.Time) *arohcp.ClusterStatusBuilder {
	st := c.state(now)
	up := st == cs.ClusterStateReady || st == cs.ClusterStateUpdating
	b := arohcp.NewClusterStatus().
		ID(c.id).
		HREF(c.href() + "/status").
		State(arohcp.ClusterState(st)).
		DNSReady(up).
		OIDCReady(up).
		LimitedSupportReasonCount(0)
	if st == cs.ClusterStateError && c.failure != nil {
		b.ProvisionErrorCode(c.failure.Code).ProvisionErrorMessage(c.failure.Message).Description(c.failure.Message)
		if c.failure.Code == cs.ProvisionErrorInflightChecks {
			b.Description(inflightDescription)
		}
	}
	return b
}

// inflightChecks run while the cluster validates; afterwards they have
// passed, except those a failure injected.
func (c *cluster) inflightChecks(now time.Time) ([]*arohcp.InflightCheck, error) {
	running := c.state(now) == cs.ClusterStateValidating
	var out []*arohcp.InflightCheck
	for _, ch := range c.checks {
		b := arohcp.NewInflightCheck().
			ID(ch.id).
			HREF(c.href() + "/inflight_checks/" + ch.id).
			Name(ch.name).
			StartedAt(c.created).
			Restarts(0)
		switch {
		case running:
			b.State(arohcp.InflightCheckStateRunning).Details(map[string]any{})
		case ch.err != "":
			b.State(arohcp.InflightCheckStateFailed).Details(map[string]any{"error": ch.err}).EndedAt(c.checksEnded)
		default:
			b.State(arohcp.InflightCheckStatePassed).Details(map[string]any{}).EndedAt(c.checksEnded)
		}
		obj, err := b.Build()
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}
