// Package auth is the caller check on ARM's requests (the status and
// result reads): App Service Authentication validates the caller's Entra
// ID token in front of the Function App and passes its claims in a
// header, and Check admits only the applications configured, ARM's. The
// handler applies it to every forwarded route before anything is read,
// so a refused caller costs no store read.
package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// Settings of the check.
const (
	// EnvMode is "required" (the default) or "none" (local runs only).
	EnvMode = "HCPOPS_AUTH"
	// EnvARMClientAppIDs lists the Entra application ids allowed to call,
	// comma-separated: ARM's, as the RP's registration documents them.
	EnvARMClientAppIDs = "HCPOPS_ARM_CLIENT_APP_IDS"
)

// HeaderClientPrincipal is set by App Service Authentication after it has
// validated the caller's Entra ID token (and stripped any copy the caller
// sent): base64 JSON with the token's claims.
const HeaderClientPrincipal = "X-MS-CLIENT-PRINCIPAL"

// Modes.
const (
	Required = "required"
	None     = "none"
)

// Policy is who may call. The zero Policy checks nothing; FromEnv, which
// the app uses, defaults to Required.
type Policy struct {
	Mode   string   // "", Required or None
	AppIDs []string // lower-case application ids allowed to call
}

// FromEnv reads HCPOPS_AUTH and HCPOPS_ARM_CLIENT_APP_IDS. Unset means
// required: a deployment that forgets the settings refuses every caller.
func FromEnv(getenv func(string) string) (Policy, error) {
	var p Policy
	switch mode := strings.ToLower(strings.TrimSpace(getenv(EnvMode))); mode {
	case "", Required:
		p.Mode = Required
	case None:
		p.Mode = None
	default:
		return Policy{}, fmt.Errorf("%s=%q: want %q (the default) or %q", EnvMode, getenv(EnvMode), Required, None)
	}
	for _, id := range strings.FieldsFunc(getenv(EnvARMClientAppIDs), func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
			return Policy{}, fmt.Errorf("%s: %q is not an application id (a GUID such as 00000000-0000-0000-0000-000000000000)", EnvARMClientAppIDs, id)
		}
		p.AppIDs = append(p.AppIDs, strings.ToLower(id))
	}
	return p, nil
}

// Announce says at start when the check is off, or closes the door to
// every caller.
func (p Policy) Announce(ctx context.Context, logger *slog.Logger) {
	switch {
	case p.Mode == None:
		logger.WarnContext(ctx, "caller check is off ("+EnvMode+"=none): HTTP functions accept any caller; use this only for local runs")
	case p.Mode == Required && len(p.AppIDs) == 0:
		logger.ErrorContext(ctx, "caller check is on but "+EnvARMClientAppIDs+" is empty: every HTTP request will be refused with 401 or 403")
	}
}

// Refusal is a refused caller: the HTTP status, ARM's error code, the
// message sent to the caller, and the reason logged (never sent).
type Refusal struct {
	Status  int
	Code    string
	Message string
	Reason  string
}

// Body is ARM's error response for the refusal.
func (r *Refusal) Body() []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": r.Code, "message": r.Message}})
	return b
}

// Check decides on the principal header App Service Authentication
// injected; nil admits the caller. Nothing else is read.
func (p Policy) Check(h http.Header) *Refusal {
	if p.Mode != Required {
		return nil
	}
	// App Service Authentication sets exactly one copy; several (in any
	// spelling) mean something in front of it added one, and no copy may
	// decide alone.
	if n := len(h.Values(HeaderClientPrincipal)); n > 1 {
		return unauthenticated(fmt.Sprintf("%s sent %d times (more than one copy): the request did not come from App Service Authentication alone", HeaderClientPrincipal, n))
	}
	raw := strings.TrimSpace(h.Get(HeaderClientPrincipal))
	if raw == "" {
		return unauthenticated("no " + HeaderClientPrincipal + " header: the request did not pass App Service Authentication")
	}
	pr, err := decodePrincipal(raw)
	if err != nil {
		return unauthenticated(HeaderClientPrincipal + " is malformed: " + err.Error())
	}
	app := pr.claim("appid", "azp")
	if app == "" {
		return forbidden("the principal names no application (no appid or azp claim)")
	}
	if !slices.Contains(p.AppIDs, strings.ToLower(app)) {
		if len(p.AppIDs) == 0 {
			return forbidden(fmt.Sprintf("application %s is not allowed: %s is empty", app, EnvARMClientAppIDs))
		}
		return forbidden(fmt.Sprintf("application %s is not in %s", app, EnvARMClientAppIDs))
	}
	return nil
}

func unauthenticated(reason string) *Refusal {
	return &Refusal{http.StatusUnauthorized, "AuthenticationFailed", "Authentication failed: the request carries no valid caller identity.", reason}
}

func forbidden(reason string) *Refusal {
	return &Refusal{http.StatusForbidden, "AuthorizationFailed", "The caller is not authorized to perform this action.", reason}
}

// principal is the decoded header: App Service's "client principal".
type principal struct {
	AuthType string `json:"auth_typ"`
	Claims   []struct {
		Typ string `json:"typ"`
		Val string `json:"val"`
	} `json:"claims"`
}

func decodePrincipal(raw string) (principal, error) {
	var b []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err = enc.DecodeString(raw); err == nil {
			break
		}
	}
	if err != nil {
		return principal{}, fmt.Errorf("not base64: %v", err)
	}
	var p principal
	if err := json.Unmarshal(b, &p); err != nil {
		return principal{}, fmt.Errorf("not a JSON object: %v", err)
	}
	if len(p.Claims) == 0 {
		return principal{}, fmt.Errorf("no claims")
	}
	return p, nil
}

// claim returns the first claim of any of the types, in order.
func (p principal) claim(types ...string) string {
	for _, t := range types {
		for _, c := range p.Claims {
			if strings.EqualFold(c.Typ, t) && c.Val != "" {
				return c.Val
			}
		}
	}
	return ""
}
