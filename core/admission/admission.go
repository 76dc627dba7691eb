// Package admission holds the rules ARO-HCP's frontend applies to an ARM
// request before it reads anything: the api-version must be one the RP
// serves, and the subscription must be in a state that allows the request
// (its home tenant also fills a missing X-Ms-Home-Tenant-Id). hcpops applies
// them to the operation status and result routes, so a poll answers what
// ARO-HCP's frontend would.
package admission

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// DefaultAPIVersions are the api-versions ARO-HCP serves (upstream c3f02f9e).
var DefaultAPIVersions = []string{"2024-06-10-preview", "2025-12-23-preview", "2026-06-30-preview", "2026-09-01-preview"}

// Setting names read by ConfigFromEnv.
const (
	// EnvAPIVersions is a comma-separated list replacing DefaultAPIVersions.
	EnvAPIVersions = "HCPOPS_API_VERSIONS"
	// EnvSubscriptionDocument says what to do when the store holds no
	// subscription document: "optional" (default) lets the request through,
	// "required" refuses it as ARO-HCP does.
	EnvSubscriptionDocument = "HCPOPS_SUBSCRIPTION_DOCUMENT"
)

// Config is the gate's settings.
type Config struct {
	// APIVersions are the accepted api-versions; empty means the defaults.
	APIVersions []string
	// RequireSubscriptionDocument refuses requests for a subscription the
	// store has no document for. Off by default: a backend-only deployment
	// may share a database whose subscription documents another component
	// owns, or none at all.
	RequireSubscriptionDocument bool
}

// ConfigFromEnv reads the settings; each error names the setting and value.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	var c Config
	if v := strings.TrimSpace(getenv(EnvAPIVersions)); v != "" {
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if p == "" || strings.ContainsAny(p, " /?&") {
				return Config{}, fmt.Errorf("%s=%q: %q is not an api-version; want e.g. 2024-06-10-preview,2025-12-23-preview", EnvAPIVersions, v, p)
			}
			c.APIVersions = append(c.APIVersions, p)
		}
	}
	switch v := strings.TrimSpace(getenv(EnvSubscriptionDocument)); strings.ToLower(v) {
	case "", "optional":
	case "required":
		c.RequireSubscriptionDocument = true
	default:
		return Config{}, fmt.Errorf("%s=%q: want optional or required", EnvSubscriptionDocument, v)
	}
	return c, nil
}

// Rejection is a request the gate refuses, with ARM's answer.
type Rejection struct {
	Status  int // HTTP status
	Code    string
	Target  string
	Message string
}

func (r *Rejection) Error() string {
	return fmt.Sprintf("request refused (%d %s): %s", r.Status, r.Code, r.Message)
}

// CheckAPIVersion refuses a missing or unknown api-version with ARO-HCP's
// codes and messages. The comparison is exact, as upstream's map lookup.
func (c Config) CheckAPIVersion(v string) *Rejection {
	if v == "" {
		return &Rejection{Status: http.StatusBadRequest, Code: arm.CodeInvalidParameter, Target: "api-version",
			Message: "The request is missing required parameter 'api-version'."}
	}
	known := c.APIVersions
	if len(known) == 0 {
		known = DefaultAPIVersions
	}
	if !slices.Contains(known, v) {
		return &Rejection{Status: http.StatusBadRequest, Code: arm.CodeInvalidResourceType, Target: "api-version",
			Message: fmt.Sprintf("The resource type '%s' could not be found API version '%s'.", arm.ClusterResourceType, v)}
	}
	return nil
}

// CheckSubscription applies ARO-HCP's subscription-state rules to a request
// with this method. sub is the store's document, nil when there is none.
// An unknown state is an error (ARO-HCP answers 500), not a rejection.
func (c Config) CheckSubscription(subscriptionID string, sub *document.Subscription, method string) (*Rejection, error) {
	if subscriptionID == "" {
		// ARO-HCP names the path segment as its router spells it, with no target.
		return &Rejection{Status: http.StatusBadRequest, Code: arm.CodeInvalidParameter,
			Message: "The request is missing required parameter 'subscriptionid'."}, nil
	}
	unregistered := &Rejection{Status: http.StatusBadRequest, Code: arm.CodeInvalidSubscriptionState,
		Message: fmt.Sprintf("Request is not allowed in unregistered subscription '%s'.", subscriptionID)}
	if sub == nil {
		if c.RequireSubscriptionDocument {
			return unregistered, nil
		}
		return nil, nil
	}
	inState := func(status int) *Rejection {
		return &Rejection{Status: status, Code: arm.CodeInvalidSubscriptionState,
			Message: fmt.Sprintf("Request is not allowed in subscription in state '%s'.", sub.State)}
	}
	switch sub.State {
	case document.SubscriptionRegistered:
		return nil, nil
	case document.SubscriptionUnregistered:
		return unregistered, nil
	case document.SubscriptionWarned, document.SubscriptionSuspended:
		switch strings.ToUpper(method) {
		case http.MethodGet, http.MethodDelete:
			return nil, nil
		}
		return inState(http.StatusConflict), nil
	case document.SubscriptionDeleted:
		return inState(http.StatusBadRequest), nil
	}
	return nil, fmt.Errorf("subscription %s: unknown state %q", subscriptionID, sub.State)
}
