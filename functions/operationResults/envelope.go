package operationresults

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/handlers"
)

// Binding names in function.json.
const (
	TriggerBinding = "req"
	OutputBinding  = "res"
)

// Invoke answers the envelope form (forwarding off): the request arrives
// as Data.req and the answer goes back in Outputs.res. Only an unreadable
// Data.req fails the invocation.
func (f *Function) Invoke(ctx context.Context, inv handlers.Invocation) (handlers.Result, error) {
	hr, err := handlers.DecodeHTTPRequest("Data."+TriggerBinding, inv.Data[TriggerBinding])
	if err != nil {
		return handlers.Result{}, err
	}
	var ans answer
	if m := strings.ToUpper(hr.Method); m != "" && m != http.MethodGet {
		ans = armError(http.StatusMethodNotAllowed, "MethodNotAllowed", "", "The method '"+hr.Method+"' is not supported; use GET.")
	} else {
		tenant, c1 := hr.Header(HeaderHomeTenantID)
		client, c2 := hr.Header(HeaderClientObjectID)
		referer, _ := hr.Header("Referer")
		host, _ := hr.Header("Host")
		if u, err := url.Parse(hr.URL); host == "" && err == nil {
			host = u.Host
		}
		req := request{
			subscription: hr.Params["subscriptionId"], location: hr.Params["location"], operation: hr.Params["operationId"],
			apiVersion: hr.QueryValue(APIVersionParameter), tenant: tenant, client: client,
			identityConflict: c1 || c2, referer: referer, host: host,
		}
		if req.subscription == "" && req.operation == "" {
			req.subscription, req.location, req.operation = paramsFromURL(hr.URL)
		}
		ans = f.answer(ctx, req)
	}
	return handlers.Result{
		Outputs: map[string]any{OutputBinding: handlers.HTTPResponse(ans.status, ans.header, ans.body)},
		Logs:    []string{"operation result answered " + strconv.Itoa(ans.status)},
	}, nil
}

// paramsFromURL recovers the route values from the URL when the host sent
// no Params, skipping any route prefix such as /api.
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
		strings.EqualFold(s[6], arm.OperationResultsType) {
		return s[1], s[5], s[7]
	}
	return "", "", ""
}
