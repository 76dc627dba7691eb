package operationrequest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/handlers"
)

// Endpoint serves one operation read in both forms the host uses: the
// forwarded request (enableForwardingHttpRequest) and, with forwarding
// off, the invocation envelope answered through Outputs.res.
type Endpoint struct {
	Name   string // function folder name
	Type   string // ARM resource type in the path, e.g. hcpOperationStatuses
	Answer func(ctx context.Context, req Request) Answer
}

// Register serves the forwarded route and the envelope form (POST /Name).
func (e Endpoint) Register(s *handlers.Server) error {
	if err := s.Route(e.Name, http.MethodGet, ChiPattern(e.Type), e); err != nil {
		return fmt.Errorf("registering %s: %w", e.Name, err)
	}
	if err := s.Handle(e.Name, e.Invoke); err != nil {
		return fmt.Errorf("registering %s: %w", e.Name, err)
	}
	return nil
}

// ServeHTTP answers a forwarded request.
func (e Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ans := e.Answer(r.Context(), fromHTTP(r))
	for k, vs := range ans.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(ans.Status)
	_, _ = w.Write(ans.Body)
}

// Invoke answers the envelope form. The invocation succeeds whenever the
// request could be read; the client's status (200, 400, 404...) travels
// in Outputs.res. Only an unreadable Data.req fails the invocation.
func (e Endpoint) Invoke(ctx context.Context, inv handlers.Invocation) (handlers.Result, error) {
	hr, err := handlers.DecodeHTTPRequest("Data."+handlers.HTTPTriggerBinding, inv.Data[handlers.HTTPTriggerBinding],
		HeaderHomeTenantID, HeaderClientObjectID)
	if err != nil {
		return handlers.Result{}, err
	}
	var ans Answer
	if m := strings.ToUpper(hr.Method); m != "" && m != http.MethodGet {
		ans = ARMError(http.StatusMethodNotAllowed, "MethodNotAllowed", "", "The method '"+hr.Method+"' is not supported; use GET.")
	} else {
		ans = e.Answer(ctx, fromEnvelope(hr, e.Type))
	}
	// No Logs: the invocation's summary line already says what was answered,
	// and the host would log them a second time (docs/functions.md).
	return handlers.Result{
		Outputs: map[string]any{handlers.HTTPOutputBinding: handlers.HTTPResponse(ans.Status, ans.Header, ans.Body)},
	}, nil
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

// ParamsFromURL recovers the route values from the request URL when the
// host sent no Params, matching the fixed words case-insensitively and
// skipping any route prefix such as /api.
func ParamsFromURL(raw, resourceType string) (sub, location, op string) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", ""
	}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(segs) < 8 {
		return "", "", ""
	}
	s := segs[len(segs)-8:]
	if strings.EqualFold(s[0], "subscriptions") && strings.EqualFold(s[2], "providers") &&
		strings.EqualFold(s[3], arm.ProviderNamespace) && strings.EqualFold(s[4], "locations") &&
		strings.EqualFold(s[6], resourceType) {
		return s[1], s[5], s[7]
	}
	return "", "", ""
}

// Answer is the HTTP response; a nil Body means none.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON is an answer with a JSON body.
func JSON(status int, body []byte) Answer {
	return Answer{Status: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: body}
}

// ARMError is an answer in ARM's error shape.
func ARMError(status int, code, target, msg string) Answer {
	body, _ := json.MarshalIndent(struct {
		Error arm.CloudErrorBody `json:"error"`
	}{arm.CloudErrorBody{Code: code, Message: msg, Target: target}}, "", "    ")
	return JSON(status, body)
}

// InternalError is the answer when a dependency failed; the cause is logged.
func InternalError() Answer {
	return ARMError(http.StatusInternalServerError, arm.CodeInternalServerError, "", "An internal error occurred; retry the request.")
}
