package operationstatus

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/handlers"
)

// Binding names in function.json.
const (
	TriggerBinding = handlers.HTTPTriggerBinding
	OutputBinding  = handlers.HTTPOutputBinding
)

// hostRequest is Data.req: the host's JSON rendering of the HTTP request.
type hostRequest struct {
	URL     string                     `json:"Url"`
	Method  string                     `json:"Method"`
	Headers map[string]json.RawMessage `json:"Headers"`
	Params  map[string]string          `json:"Params"`
}

// Invoke answers the envelope form. The invocation succeeds whenever the
// request could be read; the client's status (200, 400, 404...) travels in
// Outputs.res. Only an unreadable Data.req fails the invocation.
func (f *Function) Invoke(ctx context.Context, inv handlers.Invocation) (handlers.Result, error) {
	req, err := decodeHostRequest(inv.Data[TriggerBinding])
	if err != nil {
		return handlers.Result{}, err
	}
	var ans answer
	if m := strings.ToUpper(req.Method); m != "" && m != http.MethodGet {
		ans = armError(http.StatusMethodNotAllowed, "MethodNotAllowed", "",
			"The method '"+req.Method+"' is not supported; use GET.")
	} else {
		sr := lifecycle.StatusRequest{
			SubscriptionID: req.Params["subscriptionId"],
			Location:       req.Params["location"],
			OperationName:  req.Params["operationId"],
		}
		if sr.SubscriptionID == "" && sr.OperationName == "" {
			sr.SubscriptionID, sr.Location, sr.OperationName = paramsFromURL(req.URL)
		}
		ans = f.answer(ctx, sr, req.header, apiVersionFromURL(req.URL))
	}
	res := map[string]any{"statusCode": strconv.Itoa(ans.status), "body": string(ans.body)}
	if ans.body != nil {
		res["headers"] = map[string]string{"Content-Type": "application/json"}
	}
	return handlers.Result{
		Outputs: map[string]any{OutputBinding: res},
		Logs:    []string{"operation status answered " + strconv.Itoa(ans.status)},
	}, nil
}

func decodeHostRequest(raw json.RawMessage) (hostRequest, error) {
	const field = "Data." + TriggerBinding
	if raw == nil {
		return hostRequest{}, handlers.BadInput("%s is missing; want the host's HTTP request object", field)
	}
	if handlers.JSONKind(raw) != "object" {
		return hostRequest{}, handlers.BadInput("%s is %s; want the host's HTTP request object {Url, Method, Headers, Params...}",
			field, handlers.DescribeJSON(raw))
	}
	var wire struct {
		URL     json.RawMessage `json:"Url"`
		Method  json.RawMessage
		Headers json.RawMessage
		Params  json.RawMessage
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return hostRequest{}, handlers.BadInput("%s: %v", field, err)
	}
	var req hostRequest
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  *string
	}{{"Url", wire.URL, &req.URL}, {"Method", wire.Method, &req.Method}} {
		switch handlers.JSONKind(f.raw) {
		case "", "null":
		case "string":
			_ = json.Unmarshal(f.raw, f.dst) // valid: the envelope was parsed already
		default:
			return hostRequest{}, handlers.BadInput("%s.%s is %s; want a string", field, f.name, handlers.DescribeJSON(f.raw))
		}
	}
	switch handlers.JSONKind(wire.Headers) {
	case "", "null":
	case "object":
		if err := json.Unmarshal(wire.Headers, &req.Headers); err != nil {
			return hostRequest{}, handlers.BadInput("%s.Headers: %v", field, err)
		}
	default:
		return hostRequest{}, handlers.BadInput("%s.Headers is %s; want an object of header names", field, handlers.DescribeJSON(wire.Headers))
	}
	switch handlers.JSONKind(wire.Params) {
	case "", "null":
	case "object":
		if err := json.Unmarshal(wire.Params, &req.Params); err != nil {
			return hostRequest{}, handlers.BadInput("%s.Params must map route parameter names to strings: %v", field, err)
		}
	default:
		return hostRequest{}, handlers.BadInput("%s.Params is %s; want an object of route parameters", field, handlers.DescribeJSON(wire.Params))
	}
	return req, nil
}

// header reads a header case-insensitively; the host renders each value as
// an array of strings (older hosts: a string). Two spellings of one name
// are two keys of a map Go iterates in random order, so every value is
// gathered: taking the first would make visibility a coin toss.
func (r hostRequest) header(name string) (string, bool) {
	var vals []string
	for k, raw := range r.Headers {
		if !strings.EqualFold(k, name) {
			continue
		}
		var one string
		if json.Unmarshal(raw, &one) == nil {
			vals = append(vals, one)
			continue
		}
		var many []string
		if json.Unmarshal(raw, &many) != nil {
			return "", false // unreadable identity is no identity
		}
		vals = append(vals, many...)
	}
	return oneValue(vals)
}

// paramsFromURL recovers the route values from the request URL when the
// host sent no Params, matching the fixed words case-insensitively and
// skipping any route prefix such as /api.
func paramsFromURL(raw string) (sub, location, op string) {
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
		strings.EqualFold(s[6], arm.OperationStatusesType) {
		return s[1], s[5], s[7]
	}
	return "", "", ""
}

// apiVersionFromURL reads api-version from the request URL.
func apiVersionFromURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Query().Get(APIVersionParameter)
}
