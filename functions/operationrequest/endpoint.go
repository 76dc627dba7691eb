package operationrequest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/handlers"
)

// Endpoint serves one operation read on its route: the host forwards
// ARM's request as is (host.json enableForwardingHttpRequest), and the
// handler's answer goes back to ARM unchanged.
type Endpoint struct {
	Name   string // function folder name
	Type   string // ARM resource type in the path, e.g. hcpOperationStatuses
	Answer func(ctx context.Context, req Request) Answer
}

// Register serves the route.
func (e Endpoint) Register(s *handlers.Server) error {
	if err := s.Route(e.Name, http.MethodGet, ChiPattern(e.Type), e); err != nil {
		return fmt.Errorf("registering %s: %w", e.Name, err)
	}
	return nil
}

// ServeHTTP answers a forwarded request.
func (e Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ans := e.Answer(r.Context(), fromHTTP(r))
	if ans.Expected {
		handlers.AnswerIsExpected(w)
	}
	for k, vs := range ans.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(ans.Status)
	_, _ = w.Write(ans.Body)
}

// Route is the function.json route of an operation read of resourceType:
// ARM's own path (host.json sets the route prefix to "").
func Route(resourceType string) string {
	return "subscriptions/{subscriptionId}/providers/" + arm.ProviderNamespace + "/locations/{location}/" + resourceType + "/{operationId}"
}

// ChiPattern is the function.json route for resourceType, with the fixed
// words matched regardless of case: ARM paths are case-insensitive and the
// host's router is too.
func ChiPattern(resourceType string) string {
	word := func(param, w string) string {
		return "{" + param + ":(?i)" + strings.ReplaceAll(w, ".", `\.`) + "}"
	}
	return "/" + word("s", "subscriptions") + "/{subscriptionId}/" + word("p", "providers") + "/" +
		word("ns", arm.ProviderNamespace) + "/" + word("l", "locations") + "/{location}/" +
		word("t", resourceType) + "/{operationId}"
}

// Answer is the HTTP response; a nil Body means none.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
	// Expected: a 5xx that is the answer meant (an operation's own
	// failure), not a fault; the request's line stays at Info.
	Expected bool
}

// JSON is an answer with a JSON body.
func JSON(status int, body []byte) Answer {
	return Answer{Status: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: body}
}

// HeaderErrorCode carries an error answer's code, as ARO-HCP's
// WriteCloudError sets it: ARM and its logs read the code from it
// without parsing the body.
const HeaderErrorCode = "X-Ms-Error-Code"

// ARMError is an answer in ARM's error shape.
func ARMError(status int, code, target, msg string) Answer {
	return CloudError(status, arm.CloudErrorBody{Code: code, Message: msg, Target: target})
}

// CloudError is e as an answer: {"error": e} and X-Ms-Error-Code.
func CloudError(status int, e arm.CloudErrorBody) Answer {
	body, _ := json.MarshalIndent(struct {
		Error arm.CloudErrorBody `json:"error"`
	}{e}, "", "    ") // a struct of strings always encodes
	ans := JSON(status, body)
	ans.Header.Set(HeaderErrorCode, e.Code)
	return ans
}

// InternalError is the answer when a dependency failed; the cause is logged.
func InternalError() Answer {
	return ARMError(http.StatusInternalServerError, arm.CodeInternalServerError, "", "An internal error occurred; retry the request.")
}

// WithRetryAfter adds ARM's Retry-After (whole seconds) to ans when d is
// positive: how long ARM should wait before it polls again.
func WithRetryAfter(ans Answer, d time.Duration) Answer {
	if d <= 0 {
		return ans
	}
	if ans.Header == nil {
		ans.Header = http.Header{}
	}
	ans.Header.Set("Retry-After", strconv.Itoa(int(d/time.Second)))
	return ans
}
