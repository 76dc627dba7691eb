package simulator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	cmv1 "github.com/openshift-online/ocm-sdk-go/clustersmgmt/v1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// Break-glass credentials live under clusters_mgmt/v1 even for aro_hcp
// clusters; the cluster ID is shared between the two prefixes.

func credentialsHref(c *cluster) string {
	return cs.ClustersMgmtPrefix + "/clusters/" + c.id + "/break_glass_credentials"
}

func (s *Simulator) postCredential(w http.ResponseWriter, r *http.Request) {
	data, err := readBody(r, true)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	if len(data) > 0 {
		if _, err := decode(data, cmv1.UnmarshalBreakGlassCredential); err != nil {
			s.badRequest(w, r, "%v", err)
			return
		}
	}
	id := s.newID()
	user := s.newID()[:8]
	serveObject(s, w, r, http.StatusCreated, cmv1.MarshalBreakGlassCredential,
		func(now time.Time) (*cmv1.BreakGlassCredential, error) {
			c, err := s.mustCluster(r.PathValue("id"), now)
			if err != nil {
				return nil, err
			}
			if st, ok := c.acceptsChanges(now); !ok {
				return nil, errf(http.StatusBadRequest,
					"Cluster '%s' is in state '%s', can't create break glass credentials", c.id, st)
			}
			for _, cr := range c.creds {
				if st, _ := cr.tl.at(now); st == cs.CredentialStateAwaitingRevocation {
					return nil, errf(http.StatusBadRequest, "Can't create break glass credentials for cluster '%s' "+
						"while a revocation is in progress", c.id)
				}
			}
			d := s.durations
			cr := &credential{
				id:       id,
				seq:      s.nextSeq(),
				username: "system:customer-break-glass:" + user,
				token:    simulatedToken(id),
				created:  now,
				expires:  now.Add(d.CredentialExpiry),
				tl: timeline{start: now, final: cs.CredentialStateExpired, phases: []phase{
					{cs.CredentialStateCreated, min(d.CredentialIssuing, d.CredentialExpiry)},
					{cs.CredentialStateIssued, max(0, d.CredentialExpiry-d.CredentialIssuing)},
				}},
			}
			c.creds[id] = cr
			return cr.object(c, now)
		})
}

func (s *Simulator) getCredential(w http.ResponseWriter, r *http.Request) {
	serveObject(s, w, r, http.StatusOK, cmv1.MarshalBreakGlassCredential,
		func(now time.Time) (*cmv1.BreakGlassCredential, error) {
			c, err := s.mustCluster(r.PathValue("id"), now)
			if err != nil {
				return nil, err
			}
			id := r.PathValue("bg")
			cr := c.creds[id]
			if cr == nil {
				return nil, errf(http.StatusNotFound, "Break glass credential '%s' not found in cluster '%s'", id, c.id)
			}
			return cr.object(c, now)
		})
}

func (s *Simulator) listCredentials(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, "BreakGlassCredentialList", cmv1.MarshalBreakGlassCredentialList,
		func(now time.Time, page, size int) ([]*cmv1.BreakGlassCredential, int, error) {
			c, err := s.mustCluster(r.PathValue("id"), now)
			if err != nil {
				return nil, 0, err
			}
			return renderPage(c.credentials(), page, size,
				func(cr *credential) (*cmv1.BreakGlassCredential, error) { return cr.object(c, now) })
		})
}

// deleteCredentials revokes every live credential of the cluster. A second
// revocation while one is pending gets the 400 ARO-HCP tolerates.
func (s *Simulator) deleteCredentials(w http.ResponseWriter, r *http.Request) {
	s.serveNoContent(w, r, func(now time.Time) error {
		c, err := s.mustCluster(r.PathValue("id"), now)
		if err != nil {
			return err
		}
		var live []*credential
		for _, cr := range c.creds {
			switch st, _ := cr.tl.at(now); st {
			case cs.CredentialStateAwaitingRevocation:
				return errf(http.StatusBadRequest,
					"Break glass credentials of cluster '%s': revocation has already been requested", c.id)
			case cs.CredentialStateCreated, cs.CredentialStateIssued:
				live = append(live, cr)
			}
		}
		d := s.durations.CredentialRevoking
		for _, cr := range live {
			cr.tl = transition(now, cs.CredentialStateAwaitingRevocation, d, cs.CredentialStateRevoked)
			cr.revokedAt = now.Add(d)
		}
		return nil
	})
}

func (cr *credential) object(c *cluster, now time.Time) (*cmv1.BreakGlassCredential, error) {
	st, _ := cr.tl.at(now)
	b := cmv1.NewBreakGlassCredential().
		ID(cr.id).
		HREF(credentialsHref(c) + "/" + cr.id).
		Username(cr.username).
		Status(cmv1.BreakGlassCredentialStatus(st)).
		ExpirationTimestamp(cr.expires)
	if st == cs.CredentialStateIssued {
		b.Kubeconfig(cr.kubeconfig(c))
	}
	if st == cs.CredentialStateRevoked {
		b.RevocationTimestamp(cr.revokedAt)
	}
	return b.Build()
}

// kubeconfig is what CS hands out once a credential is issued: the
// cluster's API server and a per-credential bearer token.
func (cr *credential) kubeconfig(c *cluster) string {
	name := c.spec.Name()
	if name == "" {
		name = c.id
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: https://api.%[1]s.%[2]s.sim.openshiftapps.com:443
contexts:
- name: %[3]s
  context:
    cluster: %[1]s
    user: %[3]s
current-context: %[3]s
users:
- name: %[3]s
  user:
    token: sha256~%[4]s
`, name, c.id, cr.username, cr.token)
}

// simulatedToken derives the token from the credential id, so issuing one
// draws nothing from the simulator's ID source (transcripts stay stable).
func simulatedToken(id string) string {
	sum := sha256.Sum256([]byte("break-glass:" + id))
	return hex.EncodeToString(sum[:])
}
