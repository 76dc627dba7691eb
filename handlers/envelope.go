package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
)

// Invocation is one decoded host request: POST /{function} with body
// {"Data":{...},"Metadata":{...}}. Values are left raw because each trigger
// encodes its own differently (Cosmos documents arrive double-encoded,
// a timer's TimerInfo as an object); the function adapter decodes its own.
type Invocation struct {
	Function string
	ID       string
	Data     map[string]json.RawMessage
	Metadata map[string]json.RawMessage
	Header   http.Header
}

// Result is what a function hands back; the server renders it as the
// {"Outputs","Logs","ReturnValue"} object the host reads.
type Result struct {
	Outputs     map[string]any
	Logs        []string
	ReturnValue any
}

// InvocationFunc handles one invocation. An *InputError answers 400, any
// other error 500; both make the host count the invocation as failed (and
// retry it where the function has a retry policy).
type InvocationFunc func(ctx context.Context, inv Invocation) (Result, error)

// RetryContext is Metadata.RetryContext, present on every attempt when the
// function has a retry policy (RetryCount 0 on the first).
type RetryContext struct {
	RetryCount    int             `json:"RetryCount"`
	MaxRetryCount int             `json:"MaxRetryCount"`
	Exception     json.RawMessage `json:"Exception,omitempty"`
}

// RetryContext returns the decoded Metadata.RetryContext, nil when absent.
// The host may send it as an object or as a JSON string holding one.
func (inv Invocation) RetryContext() (*RetryContext, error) {
	raw, ok := inv.Metadata["RetryContext"]
	if !ok || JSONKind(raw) == "null" {
		return nil, nil
	}
	if JSONKind(raw) == "string" {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, BadInput("Metadata.RetryContext: %v", err)
		}
		raw = json.RawMessage(s)
	}
	if JSONKind(raw) != "object" {
		return nil, BadInput("Metadata.RetryContext must be a JSON object, got %s", JSONKind(raw))
	}
	var rc RetryContext
	if err := json.Unmarshal(raw, &rc); err != nil {
		return nil, BadInput("Metadata.RetryContext: %v", err)
	}
	return &rc, nil
}

// response is the wire shape. Error is ours: the host ignores unknown keys,
// and a person reading a failed invocation with curl sees the cause at once.
type response struct {
	Outputs     map[string]any `json:"Outputs"`
	Logs        []string       `json:"Logs"`
	ReturnValue any            `json:"ReturnValue"`
	Error       string         `json:"Error,omitempty"`
}

// decodeInvocation parses the host's envelope. Field names match
// case-insensitively, as the host's own JSON reader does.
func decodeInvocation(body []byte) (Invocation, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return Invocation{}, BadInput("invocation body is empty; want a JSON object {\"Data\":{...},\"Metadata\":{...}}")
	}
	if !json.Valid(body) {
		var syn *json.SyntaxError
		err := json.Unmarshal(body, new(any))
		if errors.As(err, &syn) {
			return Invocation{}, BadInput("invocation body is not valid JSON (offset %d): %v", syn.Offset, err)
		}
		return Invocation{}, BadInput("invocation body is not valid JSON: %v", err)
	}
	if k := JSONKind(body); k != "object" {
		return Invocation{}, BadInput("invocation body must be a JSON object {\"Data\":{...},\"Metadata\":{...}}, got %s", k)
	}
	var env struct {
		Data     json.RawMessage
		Metadata json.RawMessage
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return Invocation{}, BadInput("invocation body: %v", err)
	}
	inv := Invocation{}
	switch k := JSONKind(env.Data); k {
	case "":
		return Invocation{}, BadInput("invocation body has no Data object")
	case "object":
		if err := json.Unmarshal(env.Data, &inv.Data); err != nil {
			return Invocation{}, BadInput("Data: %v", err)
		}
	default:
		return Invocation{}, BadInput("Data must be a JSON object keyed by binding name, got %s", k)
	}
	switch k := JSONKind(env.Metadata); k {
	case "", "null":
		inv.Metadata = map[string]json.RawMessage{}
	case "object":
		if err := json.Unmarshal(env.Metadata, &inv.Metadata); err != nil {
			return Invocation{}, BadInput("Metadata: %v", err)
		}
	default:
		return Invocation{}, BadInput("Metadata must be a JSON object, got %s", k)
	}
	return inv, nil
}

// JSONKind names the kind of a JSON value from its first byte: "object",
// "array", "string", "number", "boolean", "null", or "" when empty. It does
// not validate; use it on values already parsed by encoding/json.
func JSONKind(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// DescribeJSON names a value's kind with its article, for error messages:
// "an object", "a string", "null", "nothing".
func DescribeJSON(raw json.RawMessage) string {
	switch k := JSONKind(raw); k {
	case "object", "array":
		return "an " + k
	case "null":
		return "null"
	case "":
		return "nothing"
	default:
		return "a " + k
	}
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// encodeResponse never fails for the shapes it builds itself; an Outputs
// value that cannot be encoded becomes a 500 naming the problem.
func encodeResponse(status int, resp response) (int, []byte) {
	if resp.Outputs == nil {
		resp.Outputs = map[string]any{}
	}
	if resp.Logs == nil {
		resp.Logs = []string{}
	}
	body, err := json.Marshal(resp)
	if err != nil {
		msg := fmt.Sprintf("encoding the invocation result: %v", err)
		body, _ = json.Marshal(response{Outputs: map[string]any{}, Logs: []string{msg}, Error: msg})
		return http.StatusInternalServerError, body
	}
	return status, body
}

// writeFailure answers with the envelope shape even on errors, so the host
// (and anyone with curl) always gets JSON that says what went wrong.
func writeFailure(w http.ResponseWriter, status int, msg string, logs ...string) {
	code, body := encodeResponse(status, response{Logs: append(slices.Clip(logs), msg), Error: msg})
	writeJSON(w, code, body)
}
