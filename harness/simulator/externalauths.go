package simulator

import (
	"net/http"
	"net/url"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

func (s *Simulator) listExternalAuths(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, "ExternalAuthList", arohcp.MarshalExternalAuthList,
		func(now time.Time, page, size int) ([]*arohcp.ExternalAuth, int, error) {
			s.ledger.list(r, 0) // CS's external auth list takes no search
			c, err := s.mustCluster(r.PathValue("id"), now)
			if err != nil {
				return nil, 0, err
			}
			return renderPage(c.liveExternalAuths(now), page, size,
				func(ea *externalAuth) (*arohcp.ExternalAuth, error) { return ea.object(c, now) })
		})
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
	in, err := readObject(r, arohcp.UnmarshalExternalAuth)
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
	serveObject(s, w, r, http.StatusCreated, arohcp.MarshalExternalAuth,
		func(now time.Time) (*arohcp.ExternalAuth, error) {
			c, err := s.parentFor(r, now, refuseExternalAuthCreate)
			if err != nil {
				return nil, err
			}
			if c.liveExternalAuth(in.ID(), now) != nil {
				return nil, errf(http.StatusConflict,
					"External auth with identifier '%s' already exists in cluster '%s'", in.ID(), c.id)
			}
			spec, err := arohcp.NewExternalAuth().Copy(in).Status(nil).Build()
			if err != nil {
				return nil, errf(http.StatusBadRequest, "Invalid external auth: %v", err)
			}
			ea := &externalAuth{id: in.ID(), seq: s.nextSeq(), spec: spec, tl: settled(now, cs.ExternalAuthStateReady)}
			if f, ok := takeArmedChild(s.armed.externalAuths, c, ea.id); ok {
				ea.tl = settled(now, cs.ExternalAuthStateError)
				ea.message = f.Message
			}
			c.externalAuths[ea.id] = ea
			return ea.object(c, now)
		})
}

// mustExternalAuth resolves {id}/{ea} to a live external auth or a CS 404.
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
	serveObject(s, w, r, http.StatusOK, arohcp.MarshalExternalAuth,
		func(now time.Time) (*arohcp.ExternalAuth, error) {
			c, ea, err := s.mustExternalAuth(r, now, "")
			if err != nil {
				return nil, err
			}
			return ea.object(c, now)
		})
}

func (s *Simulator) patchExternalAuth(w http.ResponseWriter, r *http.Request) {
	patch, err := readObject(r, arohcp.UnmarshalExternalAuth)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	if err := checkIssuer(patch, false); err != nil {
		s.fail(w, r, err)
		return
	}
	serveObject(s, w, r, http.StatusOK, arohcp.MarshalExternalAuth,
		func(now time.Time) (*arohcp.ExternalAuth, error) {
			c, ea, err := s.mustExternalAuth(r, now, refuseExternalAuthUpdate)
			if err != nil {
				return nil, err
			}
			if st, ok := c.acceptsChanges(now); !ok {
				return nil, errf(http.StatusBadRequest, refuseExternalAuthUpdate, st)
			}
			if st, _ := ea.tl.at(now); st == cs.ExternalAuthStateUninstalling {
				return nil, errf(http.StatusBadRequest, "External auth '%s' is in state '%s', can't update", ea.id, st)
			}
			spec, err := mergeExternalAuthPatch(ea, patch)
			if err != nil {
				return nil, err
			}
			ea.spec = spec
			// An accepted update clears an earlier error, as a fixed config would.
			ea.tl = settled(now, cs.ExternalAuthStateReady)
			ea.message = ""
			return ea.object(c, now)
		})
}

// mergeExternalAuthPatch applies the issuer fields an update may change and
// refuses a change of ID.
func mergeExternalAuthPatch(ea *externalAuth, patch *arohcp.ExternalAuth) (*arohcp.ExternalAuth, error) {
	if id, ok := patch.GetID(); ok && id != ea.id {
		return nil, errf(http.StatusBadRequest, "Attribute 'id' can't be changed from '%s' to '%s'", ea.id, id)
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
	spec, err := b.Build()
	if err != nil {
		return nil, errf(http.StatusBadRequest, "Invalid external auth: %v", err)
	}
	return spec, nil
}

// deleteExternalAuth starts the uninstall; a repeated DELETE does not
// restart it.
func (s *Simulator) deleteExternalAuth(w http.ResponseWriter, r *http.Request) {
	s.serveNoContent(w, r, func(now time.Time) error {
		_, ea, err := s.mustExternalAuth(r, now, refuseExternalAuthDelete)
		if err != nil {
			return err
		}
		if st, _ := ea.tl.at(now); st != cs.ExternalAuthStateUninstalling {
			ea.tl = transition(now, cs.ExternalAuthStateUninstalling, s.durations.ExternalAuthUninstalling, "")
		}
		return nil
	})
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
