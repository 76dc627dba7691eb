package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// CS says "not now", "its cluster is already being deleted" and "a
// revocation is already under way" with the same 400 it refuses a bad
// request with, told apart only by English text (ARO-HCP matches the
// words). hcpops never reads the words: after such a 400 it reads CS's own
// objects, which the client checks are about the object asked, and decides
// on their states. A check answers (true, nil) when the objects say the
// request is as good as done, (false, nil) when they do not, and an error
// when CS could not be read: no evidence either way, so the dispatch is
// retried.

// badRequest reports whether err is CS's own 400.
func badRequest(err error) bool {
	var ce *cs.Error
	return errors.As(err, &ce) && ce.Status == http.StatusBadRequest
}

// csStates are CS's states of the object a refused request was about and
// of its cluster ("" object for a cluster's own).
type csStates struct{ cluster, object string }

// busy: the object or its cluster is not ready (installing, updating...),
// so CS's 400 may be its "not now".
func (s csStates) busy() bool {
	return s.cluster != cs.ClusterStateReady || s.object != "" && s.object != readyState
}

// readyState is every kind's ready (cs.ClusterStateReady,
// NodePoolStateReady, ExternalAuthStateReady).
const readyState = "ready"

// after400 reads CS's objects after its 400 to a request about href (for
// a create, the cluster it goes under): ok is false when refused is no
// such 400 or href is "" (a cluster's create has neither), and there is
// nothing to read. An object CS cannot be read about is no evidence
// either way: the dispatch is retried.
func (e *Engine) after400(ctx context.Context, href string, refused error) (st csStates, ok bool, err error) {
	if href == "" || !badRequest(refused) {
		return csStates{}, false, nil
	}
	if st.cluster, st.object, err = objectStates(ctx, e.cs, href); err != nil {
		return csStates{}, false, retryLater("clusters service refused a request about %s (%v); reading its state: %v", href, refused, err)
	}
	return st, true, nil
}

// notNowOrRefused is CS's 400 as what its objects make it: "not now",
// retried, while the object or its cluster is busy; else a refusal.
func notNowOrRefused(refused error, st csStates, ok bool, noun, verb string) error {
	if ok && st.busy() {
		return busyLater("clusters service refused to %s the %s while it or its cluster is %s/%s: %w", verb, noun,
			orNone(st.object), st.cluster, refused)
	}
	return refusedBy(refused, noun, verb)
}

// refusedAbout is refusedBy for a request about the object at href, its
// 400 judged by CS's objects (after400, notNowOrRefused).
func (e *Engine) refusedAbout(ctx context.Context, href string, refused error, noun, verb string) error {
	st, ok, err := e.after400(ctx, href, refused)
	if err != nil {
		return err
	}
	return notNowOrRefused(refused, st, ok, noun, verb)
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// refusedDuringRevocation: CS refused to revoke the break-glass
// credentials of the cluster at clusterHref while it lists one awaiting
// revocation (a revocation is under way), or none that is not revoked or
// expired and one revoked (one went through, perhaps ours whose answer was
// lost, finishing while CS's 400 travelled). Either way the poll decides on
// CS's list.
func refusedDuringRevocation(ctx context.Context, c cs.Client, clusterHref string, refused error) (bool, error) {
	if !badRequest(refused) {
		return false, nil
	}
	creds, err := c.ListBreakGlassCredentials(ctx, clusterHref)
	if err != nil {
		return false, retryLater("clusters service refused the revocation for %s (%v); listing its credentials: %v", clusterHref, refused, err)
	}
	var awaiting, revoked, live bool
	for _, cr := range creds {
		switch cr.Status {
		case cs.CredentialStateAwaitingRevocation:
			awaiting = true
		case cs.CredentialStateRevoked:
			revoked = true
		case cs.CredentialStateExpired:
		default:
			live = true
		}
	}
	return awaiting || revoked && !live, nil
}

// objectStates are the CS states of the cluster of href and, for a node
// pool or external auth, of the object itself ("" for a cluster).
func objectStates(ctx context.Context, c cs.Client, href string) (cluster, object string, err error) {
	kind, clusterHref := cs.ParseHref(href)
	switch kind {
	case cs.HrefNodePool:
		np, err := c.GetNodePool(ctx, href)
		if err != nil {
			return "", "", err
		}
		object = np.Status.State
	case cs.HrefExternalAuth:
		ea, err := c.GetExternalAuth(ctx, href)
		if err != nil {
			return "", "", err
		}
		object = ea.Status.State
	case cs.HrefCluster:
	default:
		return "", "", fmt.Errorf("%w: %s is not a cluster, node pool or external auth", errMalformed, href)
	}
	cl, err := c.GetCluster(ctx, clusterHref)
	if err != nil {
		return "", "", err
	}
	return cl.Status.State, object, nil
}
