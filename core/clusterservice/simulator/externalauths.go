package simulator

import (
	"net/http"
	"net/url"
	"sort"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

func (s *Simulator) listExternalAuths(w http.ResponseWriter, r *http.Request) {
	page, size, err := s.paging(r)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	var items []*arohcp.ExternalAuth
	total := 0
	err = s.locked(func(now time.Time) error {
		c, err := s.mustCluster(r.PathValue("id"), now)
		if err != nil {
			return err
		}
		var all []*externalAuth
		for id := range c.externalAuths {
			if ea := c.liveExternalAuth(id, now); ea != nil {
				all = append(all, ea)
			}
		}
		sort.Slice(all, func(i, j int) bool { return all[i].seq < all[j].seq })
		total = len(all)
		for _, ea := range pageOf(all, page, size) {
			obj, err := ea.object(c, now)
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
	writeList(s, w, r, "ExternalAuthList", page, total, items, arohcp.MarshalExternalAuthList)
}

// checkIssuer validates the issuer the way CS does for the fields dispatch
// sends.
func checkIssuer(in *arohcp.ExternalAuth, required bool) error {
	issuer, ok := in.GetIssuer()
	if !ok {
		if required {
			return errf(http.StatusBadRequest, "Attribute 'issuer.url' is required")
		}
		return nil
	}
	raw, ok := issuer.GetURL()
	if !ok && !required {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return errf(http.StatusBadRequest, "Attribute 'issuer.url' must be an https URL, got '%s'", raw)
	}
	return nil
}

func (s *Simulator) postExternalAuth(w http.ResponseWriter, r *http.Request) {
	data, err := readBody(r, false)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	in, err := decode(data, arohcp.UnmarshalExternalAuth)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	if err := checkID("External auth", in.ID()); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := checkIssuer(in, true); err != nil {
		s.fail(w, r, err)
		return
	}
	var out *arohcp.ExternalAuth
	err = s.locked(func(now time.Time) error {
		c, err := s.parentFor(r, now, refuseExternalAuthCreate)
		if err != nil {
			return err
		}
		if c.liveExternalAuth(in.ID(), now) != nil {
			return errf(http.StatusConflict, "External auth with identifier '%s' already exists in cluster '%s'", in.ID(), c.id)
		}
		spec, err := arohcp.NewExternalAuth().Copy(in).Status(nil).Build()
		if err != nil {
			return errf(http.StatusBadRequest, "Invalid external auth: %v", err)
		}
		ea := &externalAuth{id: in.ID(), seq: s.nextSeq(), spec: spec, tl: settled(now, cs.ExternalAuthStateReady)}
		if f, ok := s.takeArmedExternalAuth(c, ea.id); ok {
			ea.tl = settled(now, cs.ExternalAuthStateError)
			ea.message = f.Message
		}
		c.externalAuths[ea.id] = ea
		out, err = ea.object(c, now)
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeObject(s, w, r, http.StatusCreated, out, arohcp.MarshalExternalAuth)
}

func (s *Simulator) mustExternalAuth(r *http.Request, now time.Time, refusal string) (*cluster, *externalAuth, error) {
	c, err := s.parentFor(r, now, refusal)
	if err != nil {
		return nil, nil, err
	}
	id := r.PathValue("ea")
	ea := c.liveExternalAuth(id, now)
	if ea == nil {
		return nil, nil, errf(http.StatusNotFound, "External auth '%s' not found in cluster '%s'", id, c.id)
	}
	return c, ea, nil
}

func (s *Simulator) getExternalAuth(w http.ResponseWriter, r *http.Request) {
	var out *arohcp.ExternalAuth
	err := s.locked(func(now time.Time) error {
		c, ea, err := s.mustExternalAuth(r, now, "")
		if err != nil {
			return err
		}
		out, err = ea.object(c, now)
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeObject(s, w, r, http.StatusOK, out, arohcp.MarshalExternalAuth)
}

func (s *Simulator) patchExternalAuth(w http.ResponseWriter, r *http.Request) {
	data, err := readBody(r, false)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	patch, err := decode(data, arohcp.UnmarshalExternalAuth)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	if err := checkIssuer(patch, false); err != nil {
		s.fail(w, r, err)
		return
	}
	var out *arohcp.ExternalAuth
	err = s.locked(func(now time.Time) error {
		c, ea, err := s.mustExternalAuth(r, now, refuseExternalAuthUpdate)
		if err != nil {
			return err
		}
		if st := c.state(now); st != cs.ClusterStateReady && st != cs.ClusterStateUpdating {
			return errf(http.StatusBadRequest, refuseExternalAuthUpdate, st)
		}
		if st, _ := ea.tl.at(now); st == cs.ExternalAuthStateUninstalling {
			return errf(http.StatusBadRequest, "External auth '%s' is in state '%s', can't update", ea.id, st)
		}
		if id, ok := patch.GetID(); ok && id != ea.id {
			return errf(http.StatusBadRequest, "Attribute 'id' can't be changed from '%s' to '%s'", ea.id, id)
		}
		b := arohcp.NewExternalAuth().Copy(ea.spec)
		if in, ok := patch.GetIssuer(); ok {
			ib := arohcp.NewTokenIssuer().Copy(ea.spec.Issuer())
			if v, ok := in.GetURL(); ok {
				ib.URL(v)
			}
			if v, ok := in.GetAudiences(); ok {
				ib.Audiences(v...)
			}
			if v, ok := in.GetCA(); ok {
				ib.CA(v)
			}
			b.Issuer(ib)
		}
		if ea.spec, err = b.Build(); err != nil {
			return errf(http.StatusBadRequest, "Invalid external auth: %v", err)
		}
		// An accepted update clears an earlier error, as a fixed config would.
		ea.tl = settled(now, cs.ExternalAuthStateReady)
		ea.message = ""
		out, err = ea.object(c, now)
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeObject(s, w, r, http.StatusOK, out, arohcp.MarshalExternalAuth)
}

func (s *Simulator) deleteExternalAuth(w http.ResponseWriter, r *http.Request) {
	err := s.locked(func(now time.Time) error {
		_, ea, err := s.mustExternalAuth(r, now, refuseExternalAuthDelete)
		if err != nil {
			return err
		}
		if st, _ := ea.tl.at(now); st != cs.ExternalAuthStateUninstalling {
			ea.tl = timeline{start: now,
				phases: []phase{{cs.ExternalAuthStateUninstalling, s.durations.ExternalAuthUninstalling}}}
		}
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (ea *externalAuth) object(c *cluster, now time.Time) (*arohcp.ExternalAuth, error) {
	st, since := ea.tl.at(now)
	status := arohcp.NewExternalAuthStatus().
		State(arohcp.NewExternalAuthState().Value(st).LastUpdatedTimestamp(since))
	if st == cs.ExternalAuthStateError && ea.message != "" {
		status.Message(ea.message)
	}
	return arohcp.NewExternalAuth().Copy(ea.spec).
		ID(ea.id).
		HREF(cs.ExternalAuthHref(c.href(), ea.id)).
		Status(status).
		Build()
}
