package handlers

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

// Settings of the caller check on HTTP-triggered functions.
const (
	// EnvAuth is "required" (the default) or "none" (local runs only).
	EnvAuth = "HCPOPS_AUTH"
	// EnvARMClientAppIDs lists the Entra application ids allowed to call,
	// comma-separated: ARM's, as the RP's registration documents them.
	EnvARMClientAppIDs = "HCPOPS_ARM_CLIENT_APP_IDS"
)

// HeaderClientPrincipal is set by App Service Authentication after it has
// validated the caller's Entra ID token (and stripped any copy the caller
// sent): base64 JSON with the token's claims.
const HeaderClientPrincipal = "X-MS-CLIENT-PRINCIPAL"

// HTTPTriggerBinding and HTTPOutputBinding are the names every HTTP
// function gives its httpTrigger and http bindings in function.json: the
// caller check reads the request's headers from Data.req of the envelope
// form, and answers a refusal through Outputs.res.
const (
	HTTPTriggerBinding = "req"
	HTTPOutputBinding  = "res"
)

// Auth modes.
const (
	AuthRequired = "required"
	AuthNone     = "none"
)

// Auth is the caller check applied to every HTTP-triggered function (a
// route registered with Route, and the envelope form of the same
// function). The zero Auth checks nothing; AuthFromEnv, which the app
// uses, defaults to AuthRequired.
type Auth struct {
	Mode   string   // "", AuthRequired or AuthNone
	AppIDs []string // lower-case application ids allowed to call
}

// AuthFromEnv reads HCPOPS_AUTH and HCPOPS_ARM_CLIENT_APP_IDS. Unset means
// required: a deployment that forgets the settings refuses every caller.
func AuthFromEnv(getenv func(string) string) (Auth, error) {
	var a Auth
	switch mode := strings.ToLower(strings.TrimSpace(getenv(EnvAuth))); mode {
	case "", AuthRequired:
		a.Mode = AuthRequired
	case AuthNone:
		a.Mode = AuthNone
	default:
		return Auth{}, fmt.Errorf("%s=%q: want %q (the default) or %q", EnvAuth, getenv(EnvAuth), AuthRequired, AuthNone)
	}
	for _, id := range strings.FieldsFunc(getenv(EnvARMClientAppIDs), func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
			return Auth{}, fmt.Errorf("%s: %q is not an application id (a GUID such as 00000000-0000-0000-0000-000000000000)", EnvARMClientAppIDs, id)
		}
		a.AppIDs = append(a.AppIDs, strings.ToLower(id))
	}
	return a, nil
}

// denial is a refused caller: the HTTP status, ARM's error code, the
// message sent to the caller, and the reason logged.
type denial struct {
	status  int
	code    string
	message string
	reason  string
}

// check decides on the principal header App Service Authentication
// injected. Nothing else is read: the store is not touched for a caller
// that is refused.
func (a Auth) check(h http.Header) *denial {
	if a.Mode != AuthRequired {
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
	p, err := decodePrincipal(raw)
	if err != nil {
		return unauthenticated(HeaderClientPrincipal + " is malformed: " + err.Error())
	}
	app := p.claim("appid", "azp")
	if app == "" {
		return forbidden("the principal names no application (no appid or azp claim)")
	}
	if !slices.Contains(a.AppIDs, strings.ToLower(app)) {
		if len(a.AppIDs) == 0 {
			return forbidden(fmt.Sprintf("application %s is not allowed: %s is empty", app, EnvARMClientAppIDs))
		}
		return forbidden(fmt.Sprintf("application %s is not in %s", app, EnvARMClientAppIDs))
	}
	return nil
}

func unauthenticated(reason string) *denial {
	return &denial{http.StatusUnauthorized, "AuthenticationFailed", "Authentication failed: the request carries no valid caller identity.", reason}
}

func forbidden(reason string) *denial {
	return &denial{http.StatusForbidden, "AuthorizationFailed", "The caller is not authorized to perform this action.", reason}
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

// body is ARM's error response for d.
func (d *denial) body() []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": d.code, "message": d.message}})
	return b
}

// refuse answers a forwarded request that failed the check.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, d *denial) {
	s.noteDenied(r.Context(), d)
	writeJSON(w, d.status, d.body())
}

// noteDenied puts the reason on the request's one line (raised to Warn),
// or logs it when there is no such line.
func (s *Server) noteDenied(ctx context.Context, d *denial) {
	if slot := slotFrom(ctx); slot != nil {
		slot.err = d.reason
		return
	}
	s.logger.LogAttrs(ctx, slog.LevelWarn, "caller refused", slog.Int("status", d.status), slog.String("error", d.reason))
}

// checkEnvelope applies the check to the envelope form of an HTTP
// function, whose Data.req is the host's rendering of the request. A
// refusal is a successful invocation whose http output carries the 401 or
// 403, as the function itself would answer. Without a Data.req object the
// function refuses the payload itself (400), reading nothing.
func (s *Server) checkEnvelope(ctx context.Context, inv Invocation) (Result, bool) {
	raw := inv.Data[HTTPTriggerBinding]
	if JSONKind(raw) != "object" {
		return Result{}, true
	}
	d := s.cfg.Auth.check(envelopeHeaders(raw))
	if d == nil {
		return Result{}, true
	}
	s.noteDenied(ctx, d)
	return Result{Outputs: map[string]any{HTTPOutputBinding: map[string]any{
		"statusCode": fmt.Sprint(d.status),
		"body":       string(d.body()),
		"headers":    map[string]string{"Content-Type": "application/json"},
	}}}, false
}

// envelopeHeaders reads the headers of the host's rendering of a request;
// each value is an array of strings (older hosts: a string). Unreadable
// headers yield none, which the check refuses.
func envelopeHeaders(raw json.RawMessage) http.Header {
	h := http.Header{}
	var req struct{ Headers map[string]json.RawMessage }
	if json.Unmarshal(raw, &req) != nil {
		return h
	}
	for k, v := range req.Headers {
		var one string
		var many []string
		switch {
		case json.Unmarshal(v, &one) == nil:
			h.Add(k, one)
		case json.Unmarshal(v, &many) == nil:
			for _, m := range many {
				h.Add(k, m)
			}
		}
	}
	return h
}
