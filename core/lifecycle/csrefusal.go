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

// refusedAbout is refusedBy for a request about the object at href (for
// a create, the cluster it goes under; "" for a cluster's create, which
// has neither): CS's 400 while CS's objects show that object or its
// cluster not ready (installing, updating...) is its "not now", retried,
// never a refusal.
func (e *Engine) refusedAbout(ctx context.Context, href string, refused error, noun, verb string) error {
	if href == "" || !badRequest(refused) {
		return refusedBy(refused, noun, verb)
	}
	cluster, object, err := objectStates(ctx, e.cs, href)
	switch {
	case err != nil:
		return retryLater("clusters service refused to %s the %s (%v); reading the state of %s: %v", verb, noun, refused, href, err)
	case cluster != cs.ClusterStateReady || object != "" && object != readyState:
		return retryLater("clusters service refused to %s the %s while %s is %s (its cluster %s): %w", verb, noun, href,
			orNone(object), cluster, refused)
	}
	return refusedBy(refused, noun, verb)
}

// readyState is every kind's ready (cs.ClusterStateReady,
// NodePoolStateReady, ExternalAuthStateReady).
const readyState = "ready"

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// refusedUnderUninstall: CS refused the DELETE of a node pool or external
// auth at href while its cluster is uninstalling: the child goes with it,
// so the delete is as good as dispatched.
func refusedUnderUninstall(ctx context.Context, c cs.Client, href string, refused error) (bool, error) {
	kind, clusterHref := cs.ParseHref(href)
	if !badRequest(refused) || kind != cs.HrefNodePool && kind != cs.HrefExternalAuth {
		return false, nil
	}
	cl, err := c.GetCluster(ctx, clusterHref)
	if err != nil {
		return false, fmt.Errorf("clusters service refused the delete of %s; reading its cluster: %w", href, err)
	}
	return cl.Status.State == cs.ClusterStateUninstalling, nil
}

// refusedDuringRevocation: CS refused to revoke the break-glass
// credentials of the cluster at clusterHref while it lists one awaiting
// revocation: a revocation is already under way.
func refusedDuringRevocation(ctx context.Context, c cs.Client, clusterHref string, refused error) (bool, error) {
	if !badRequest(refused) {
		return false, nil
	}
	creds, err := c.ListBreakGlassCredentials(ctx, clusterHref)
	if err != nil {
		return false, fmt.Errorf("clusters service refused the revocation for %s; listing its credentials: %w", clusterHref, err)
	}
	for _, cr := range creds {
		if cr.Status == cs.CredentialStateAwaitingRevocation {
			return true, nil
		}
	}
	return false, nil
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
