package functionapp

import (
	"encoding/json"
	"fmt"
	"time"
)

// DefaultRoutePrefix is the HTTP route prefix when host.json names none.
const DefaultRoutePrefix = "api"

// HostJSON is the part of host.json a trigger host acts on; other keys are
// accepted and ignored, as the real host ignores keys of extensions it lacks.
type HostJSON struct {
	Version       string
	CustomHandler *CustomHandler
	// FunctionTimeout bounds one invocation; 0 when unset.
	FunctionTimeout time.Duration
	// RoutePrefix is extensions.http.routePrefix, without slashes.
	RoutePrefix string
	// Retry is the host-level policy, applied to functions without their own.
	Retry *RetryPolicy
}

// CustomHandler is host.json's customHandler section.
type CustomHandler struct {
	DefaultExecutablePath       string
	WorkingDirectory            string
	Arguments                   []string
	EnableForwardingHTTPRequest bool
}

type hostJSONWire struct {
	Version       string `json:"version"`
	CustomHandler *struct {
		Description struct {
			DefaultExecutablePath string   `json:"defaultExecutablePath"`
			WorkingDirectory      string   `json:"workingDirectory"`
			Arguments             []string `json:"arguments"`
		} `json:"description"`
		EnableForwardingHTTPRequest bool `json:"enableForwardingHttpRequest"`
	} `json:"customHandler"`
	FunctionTimeout string `json:"functionTimeout"`
	Extensions      struct {
		HTTP struct {
			RoutePrefix *string `json:"routePrefix"`
		} `json:"http"`
	} `json:"extensions"`
	Retry *retryWire `json:"retry"`
}

// ParseHostJSON decodes host.json. Keys match case-insensitively, like the
// host's own configuration reader.
func ParseHostJSON(raw []byte) (HostJSON, error) {
	var w hostJSONWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return HostJSON{}, fmt.Errorf("host.json: %w", err)
	}
	h := HostJSON{Version: w.Version, RoutePrefix: DefaultRoutePrefix}
	if w.Version != "2.0" {
		return HostJSON{}, fmt.Errorf("host.json: version %q: want \"2.0\"", w.Version)
	}
	if w.CustomHandler != nil {
		h.CustomHandler = &CustomHandler{
			DefaultExecutablePath:       w.CustomHandler.Description.DefaultExecutablePath,
			WorkingDirectory:            w.CustomHandler.Description.WorkingDirectory,
			Arguments:                   w.CustomHandler.Description.Arguments,
			EnableForwardingHTTPRequest: w.CustomHandler.EnableForwardingHTTPRequest,
		}
	}
	// "-1" means unbounded, like leaving it unset.
	if w.FunctionTimeout != "" && w.FunctionTimeout != "-1" {
		d, err := ParseTimeSpan(w.FunctionTimeout)
		if err != nil {
			return HostJSON{}, fmt.Errorf("host.json: functionTimeout: %w", err)
		}
		h.FunctionTimeout = d
	}
	if p := w.Extensions.HTTP.RoutePrefix; p != nil {
		h.RoutePrefix = trimSlashes(*p)
	}
	if w.Retry != nil {
		p, err := w.Retry.policy()
		if err != nil {
			return HostJSON{}, fmt.Errorf("host.json: retry: %w", err)
		}
		h.Retry = p
	}
	return h, nil
}

func trimSlashes(s string) string {
	for len(s) > 0 && s[0] == '/' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}
