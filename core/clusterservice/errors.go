package clusterservice

import (
	"errors"
	"net"
	"net/http"
	"strings"
)

// StatusOf is the HTTP status of a CS error response; 0 for nil and for an
// error that never got an answer from CS (a transport failure, a timeout).
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// IsNotFound reports whether CS answered 404: the object does not exist
// (for a delete being polled: it is gone).
func IsNotFound(err error) bool { return StatusOf(err) == http.StatusNotFound }

// IsConflict reports whether CS answered 409: an object with the caller's
// chosen ID exists already.
func IsConflict(err error) bool { return StatusOf(err) == http.StatusConflict }

// IsRetryable reports whether the same call may succeed later without any
// change on our side: a 5xx, a 429, or a failure that never reached CS.
func IsRetryable(err error) bool {
	s := StatusOf(err)
	return s == 0 && err != nil || s == http.StatusTooManyRequests || s >= 500
}

// IsUnavailable reports whether err says that Clusters Service as a whole
// cannot serve now, not that one call about one object failed: CS could
// not be reached at all (the dial failed: connection refused, no route, a
// name that does not resolve), or it answered 429 or a gateway's 502, 503
// or 504. A timeout, an unreadable answer or another status is about the
// call; the change feed uses the difference to decide whether a failure
// costs its whole batch or only one operation.
func IsUnavailable(err error) bool {
	switch StatusOf(err) {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	case 0:
		var dns *net.DNSError
		var op *net.OpError
		return errors.As(err, &dns) || errors.As(err, &op) && op.Op == "dial"
	}
	return false
}

// IsRefused reports whether CS refused the request itself, so that
// sending it again can never succeed: a 4xx other than 404 (absent: a
// question the caller asks), 409 (exists: adopted), 429 and 408 (try
// later), 401 and 403 (hcpops's own credentials, not the request), and
// other than a 400 that names a state of the object or its cluster: CS
// words every "not now" and "already under way" that way (IsBusy,
// IsAlreadyUninstalling, "must be in a deletable state", "is in state
// 'installing'"), and those pass.
func IsRefused(err error) bool {
	s := StatusOf(err)
	switch {
	case s < 400 || s >= 500:
		return false
	case s == http.StatusNotFound, s == http.StatusConflict, s == http.StatusTooManyRequests,
		s == http.StatusRequestTimeout, s == http.StatusUnauthorized, s == http.StatusForbidden:
		return false
	}
	return !refused(err, "state") && !IsRevocationRequested(err)
}

// CS says "not now" and "already being deleted" only with a 400 whose
// reason is English text, the same for every kind. ARO-HCP matches these
// words; keeping the matching here is what lets the lifecycle ask a
// question instead.

// IsBusy reports whether CS refused a change because the object, or its
// cluster, is in a state that does not allow it yet (installing,
// updating...): the same request succeeds once that passes.
func IsBusy(err error) bool {
	return refused(err, "is in state", "can't update") ||
		refused(err, "can only be updated", "state")
}

// IsAlreadyUninstalling reports whether CS refused to delete a node pool or
// external auth because its cluster is being deleted: the child goes with
// it, so the delete is as good as dispatched.
func IsAlreadyUninstalling(err error) bool {
	return refused(err, "deletable state", "uninstalling")
}

// IsRevocationRequested reports whether CS refused to revoke a cluster's
// break-glass credentials because a revocation is already under way.
func IsRevocationRequested(err error) bool {
	return refused(err, "revocation has already been requested")
}

// refused reports whether err is a CS 400 whose reason contains every one
// of the phrases, ignoring case.
func refused(err error, phrases ...string) bool {
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest {
		return false
	}
	reason := strings.ToLower(e.Reason)
	for _, p := range phrases {
		if !strings.Contains(reason, strings.ToLower(p)) {
			return false
		}
	}
	return true
}
