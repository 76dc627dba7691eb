// Package events holds what the Azure Functions host and a custom handler
// send each other, as plain structs: the invocation request and response
// of every function the host does not forward, the timer trigger's
// TimerInfo, the Cosmos DB trigger's change-feed batch, and the HTTP
// trigger's request and response for a host that does not forward it.
// The handler's functions decode them (leniently, as the host's own
// readers do, naming the field of anything they refuse); the local
// Functions host (harness/devhost/triggerhost) encodes them as the real host
// does; testdata/ holds payloads as the host sends them. No other package
// spells these formats.
package events

import (
	"encoding/json"
)

// InvokeRequest is the body of the host's POST /{function}: each input
// binding's value under Data, trigger metadata under Metadata. Values are
// left raw because each trigger encodes its own differently (a timer's
// TimerInfo as an object, a change-feed batch as a string holding a
// string holding the array).
type InvokeRequest struct {
	Data     map[string]json.RawMessage
	Metadata map[string]json.RawMessage
}

// InvokeResponse is the handler's answer: each output binding's value
// under Outputs, lines the host logs at Information, and the value of a
// $return binding. Any non-2xx status fails the invocation.
type InvokeResponse struct {
	Outputs     map[string]json.RawMessage `json:"Outputs"`
	Logs        []string                   `json:"Logs"`
	ReturnValue json.RawMessage            `json:"ReturnValue"`
	// Error is hcpops's own: the host ignores members it does not know,
	// and a person reading a failed invocation with curl sees the cause.
	Error string `json:"Error,omitempty"`
}

// Invocation headers the host sets on every request to the handler,
// forwarded HTTP requests included.
const (
	HeaderInvocationID = "X-Azure-Functions-InvocationId"
	HeaderHostVersion  = "X-Azure-Functions-HostVersion"
)

// SysMetadata is Metadata.sys, which the host adds to every invocation.
type SysMetadata struct {
	MethodName string
	UtcNow     string // DotNetUTC
	RandGuid   string
}

// RetryContext is Metadata.RetryContext, present on every attempt when the
// function has a retry policy (RetryCount 0 on the first).
type RetryContext struct {
	RetryCount    int             `json:"RetryCount"`
	MaxRetryCount int             `json:"MaxRetryCount"`
	Exception     json.RawMessage `json:"Exception,omitempty"`
}

// RetryContext returns the decoded Metadata.RetryContext, nil when absent.
// The host may send it as an object or as a JSON string holding one.
func (r InvokeRequest) RetryContext() (*RetryContext, error) {
	raw, ok := r.Metadata["RetryContext"]
	if !ok || Kind(raw) == "null" {
		return nil, nil
	}
	if Kind(raw) == "string" {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, Malformed("Metadata.RetryContext: %v", err)
		}
		raw = json.RawMessage(s)
	}
	if Kind(raw) != "object" {
		return nil, Malformed("Metadata.RetryContext must be a JSON object, got %s", Kind(raw))
	}
	var rc RetryContext
	if err := json.Unmarshal(raw, &rc); err != nil {
		return nil, Malformed("Metadata.RetryContext: %v", err)
	}
	return &rc, nil
}

// How the host (Newtonsoft) writes times: a DateTimeOffset in .NET's
// round-trip form with trailing zeros of the fraction dropped, and a UTC
// DateTime.
const (
	DotNetRoundTrip = "2006-01-02T15:04:05.9999999-07:00"
	DotNetUTC       = "2006-01-02T15:04:05.9999999Z07:00"
)
