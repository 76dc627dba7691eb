package clusterservice

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// Class is what the error of a Clusters Service call says, about the
// call and about CS as a whole. Every decision the lifecycle takes on a CS
// error starts from Classify: whether to adopt, retry later, fail the
// operation, back it off, or blame CS instead of the object.
type Class int

const (
	// Answered: no error.
	Answered Class = iota
	// Absent: 404, the object does not exist (for a delete being polled:
	// it is gone).
	Absent
	// Exists: 409, an object with the caller's chosen ID exists already.
	Exists
	// NotNow: a 408, 421, 423 or 425: the same request passes later. CS
	// words its own "not now" as a 400 (Refused) told apart only by its
	// text, which is never read: the lifecycle reads CS's objects instead
	// (core/lifecycle/csrefusal.go).
	NotNow
	// Refused: CS refused the request (another 4xx in its own words):
	// sending it again can never succeed unless CS's objects show that the
	// object or its cluster is not ready yet.
	Refused
	// Denied: 401 or 403, about hcpops's own credentials, not the request.
	Denied
	// Unavailable: CS as a whole cannot serve now: it could not be reached
	// at all (the dial failed: connection refused, no route, a name that
	// does not resolve), or it answered 429 or a gateway's 502, 503 or 504.
	Unavailable
	// Failed: this call failed without saying anything of CS as a whole:
	// a timeout, an unreadable answer, another 5xx.
	Failed
	// Unrecognized: a 4xx whose body is not CS's own (a gateway's, an
	// empty or {} body, HTML, an OCM error without a reason). Something
	// between hcpops and CS answered, or CS said nothing we can act on: no
	// evidence of anything about the object, so the call is retried.
	Unrecognized
)

var classNames = [...]string{"answered", "absent", "exists", "not_now", "refused", "denied", "unavailable", "failed", "unrecognized"}

func (c Class) String() string {
	if c < 0 || int(c) >= len(classNames) {
		return fmt.Sprintf("Class(%d)", int(c))
	}
	return classNames[c]
}

// Working reports whether the answer is evidence that CS works: it
// answered, or refused the request as such in its own words. A timeout,
// garbage, a 5xx or an answer that is not CS's own is no such evidence.
func (c Class) Working() bool { return c != Unavailable && c != Failed && c != Unrecognized }

// Classify sorts a CS call's error; nil is Answered. The status alone
// decides where HTTP gives it a meaning whoever answered (retry later, our
// credentials); elsewhere only CS's own error body (*Error) is read as
// absent, exists, not now or refused. docs/failures.md has the table.
func Classify(err error) Class {
	if err == nil {
		return Answered
	}
	var u *UnrecognizedAnswer
	if errors.As(err, &u) {
		if c, ok := ByStatus(u.Status); ok {
			return c
		}
		return Unrecognized
	}
	var e *Error
	if !errors.As(err, &e) {
		var dns *net.DNSError
		var op *net.OpError
		if errors.As(err, &dns) || errors.As(err, &op) && op.Op == "dial" {
			return Unavailable
		}
		return Failed
	}
	if c, ok := ByStatus(e.Status); ok {
		return c
	}
	switch s := e.Status; {
	case strings.TrimSpace(e.Reason) == "":
		return Unrecognized // CS always says why: an answer that does not is no word of its
	case s == http.StatusNotFound:
		return Absent
	case s == http.StatusConflict:
		return Exists
	case s >= 400 && s < 500:
		return Refused
	}
	return Failed
}

// ByStatus is the class of a status that means the same whoever sent it:
// HTTP's "try again" statuses (408, 421, 423, 425, 429 and the gateway
// 5xx), our own credentials (401, 403), and any other 5xx.
func ByStatus(s int) (Class, bool) {
	switch {
	case s == http.StatusTooManyRequests, s == http.StatusBadGateway, s == http.StatusServiceUnavailable,
		s == http.StatusGatewayTimeout:
		return Unavailable, true
	case s == http.StatusUnauthorized, s == http.StatusForbidden:
		return Denied, true
	case s == http.StatusRequestTimeout, s == http.StatusMisdirectedRequest, s == http.StatusLocked,
		s == http.StatusTooEarly:
		return NotNow, true
	case s >= 500:
		return Failed, true
	}
	return 0, false
}

// UnreadableError is an answer of Clusters Service that could not be
// read: the wrong content type, malformed JSON, or a field of the wrong
// shape. It describes the answer and never quotes it, since the answer
// to a credential call holds a kubeconfig. It carries no status of an
// error, so Classify calls it Failed: no evidence of anything.
type UnreadableError struct {
	Call        string // e.g. "GET /api/clusters_mgmt/v1/clusters/{id}/break_glass_credentials/{id}"
	Status      int    // the HTTP status of the answer
	ContentType string
	Bytes       int    // length of the body read
	Field       string // JSON pointer to the field that failed, "" when unknown
	Problem     string // what is wrong, in words of our own
}

func (e *UnreadableError) Error() string {
	field := e.Field
	if field == "" {
		field = "unknown"
	}
	return fmt.Sprintf("clusters service answer to %s unreadable: status %d, content type %q, %d bytes, field %s: %s (the body is not quoted)",
		e.Call, e.Status, e.ContentType, e.Bytes, field, e.Problem)
}

// UnrecognizedAnswer is an error answer whose body is not Clusters
// Service's own: no JSON of OCM's error shape. It describes the answer
// and never quotes it (a gateway may echo anything). It is no evidence of
// anything about the object: Classify calls a 4xx of it Unrecognized, and
// so a success answer about another object than the one asked (a 2xx
// status says nothing of its own).
type UnrecognizedAnswer struct {
	Method      string
	Path        string
	Status      int
	ContentType string
	Bytes       int
	Shape       string // what the body is instead, e.g. "empty", "not JSON"
	// AnsweredID and AnsweredHref are the object a 2xx answer was about
	// instead of the one Path asks for ("" when it named none).
	AnsweredID   string
	AnsweredHref string
}

func (e *UnrecognizedAnswer) Error() string {
	about := ""
	if e.AnsweredID != "" || e.AnsweredHref != "" {
		about = fmt.Sprintf(" (answered id %q, href %q)", e.AnsweredID, e.AnsweredHref)
	}
	return fmt.Sprintf("an answer that is not Clusters Service's own to %s %s: status %d, content type %q, %d bytes, %s%s (no evidence; the body is not quoted)",
		e.Method, e.Path, e.Status, e.ContentType, e.Bytes, e.Shape, about)
}

// ErrInconsistentList marks a CS list that breaks its own contract: an id
// listed twice with different content, an item a search did not ask for,
// a page over the size asked or a total beyond what the search can
// match. Such a list is no evidence of anything; its objects are read
// with their own GETs.
var ErrInconsistentList = errors.New("clusters service list is inconsistent")

// CallError is a failed Clusters Service call with what an operator needs
// to find it: the Client method, the href it was about and how long it
// took. The client returns every failure as one, so a caller tells a CS
// fault (back the operation off) from its own store's (retry next tick)
// with errors.As. Its message is the underlying error's, unchanged.
type CallError struct {
	Call    string // the Client method, e.g. "GetClusterStatus"
	Href    string
	Elapsed time.Duration
	Err     error
}

func (e *CallError) Error() string { return e.Err.Error() }
func (e *CallError) Unwrap() error { return e.Err }

// CallAttrs are the log attributes of the CS call behind err, if any:
// cs_call, cluster_service_id and elapsed.
func CallAttrs(err error) []any {
	var ce *CallError
	if !errors.As(err, &ce) {
		return nil
	}
	return []any{"cs_call", ce.Call, "cluster_service_id", ce.Href, "elapsed", ce.Elapsed.String()}
}
