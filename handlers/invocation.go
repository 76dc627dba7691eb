package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"

	"github.com/hcpops/hcpops/events"
)

// Invocation is one decoded host request: POST /{function} with the
// function's binding data, plus what the server knows of it.
type Invocation struct {
	events.InvokeRequest
	Function string
	ID       string
	Header   http.Header
}

// Result is what a function hands back: the response the host reads
// (outputs, logs, return value) and the summary the server logs.
type Result struct {
	events.InvokeResponse
	Summary Summary
}

// Summary is an invocation's one log line, for a function whose outcome
// is worth a telemetry record (a tick, a dispatch batch). The server
// writes it once the response is sent, adding the function, the status,
// the duration and, when the invocation failed, the error, and raising
// the level to Warn (4xx) or Error (5xx). The zero Summary is an Info
// "invocation" line.
type Summary struct {
	Msg   string
	Level slog.Level
	Attrs []slog.Attr
}

// InvocationFunc handles one invocation. An *events.MalformedError
// answers 400, any other error 500; both make the host count the
// invocation as failed (and retry it where the function has a retry
// policy). The Result's Summary and Logs count on failure too.
type InvocationFunc func(ctx context.Context, inv Invocation) (Result, error)

// decodeInvocation parses the host's envelope. Field names match
// case-insensitively, as the host's own JSON reader does.
func decodeInvocation(body []byte) (events.InvokeRequest, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return events.InvokeRequest{}, events.Malformed("invocation body is empty; want a JSON object {\"Data\":{...},\"Metadata\":{...}}")
	}
	if !json.Valid(body) {
		var syn *json.SyntaxError
		err := json.Unmarshal(body, new(any))
		if errors.As(err, &syn) {
			return events.InvokeRequest{}, events.Malformed("invocation body is not valid JSON (offset %d): %v", syn.Offset, err)
		}
		return events.InvokeRequest{}, events.Malformed("invocation body is not valid JSON: %v", err)
	}
	if k := events.Kind(body); k != "object" {
		return events.InvokeRequest{}, events.Malformed("invocation body must be a JSON object {\"Data\":{...},\"Metadata\":{...}}, got %s", k)
	}
	var env struct {
		Data     json.RawMessage
		Metadata json.RawMessage
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return events.InvokeRequest{}, events.Malformed("invocation body: %v", err)
	}
	var req events.InvokeRequest
	switch k := events.Kind(env.Data); k {
	case "":
		return events.InvokeRequest{}, events.Malformed("invocation body has no Data object")
	case "object":
		if err := json.Unmarshal(env.Data, &req.Data); err != nil {
			return events.InvokeRequest{}, events.Malformed("Data: %v", err)
		}
	default:
		return events.InvokeRequest{}, events.Malformed("Data must be a JSON object keyed by binding name, got %s", k)
	}
	switch k := events.Kind(env.Metadata); k {
	case "", "null":
		req.Metadata = map[string]json.RawMessage{}
	case "object":
		if err := json.Unmarshal(env.Metadata, &req.Metadata); err != nil {
			return events.InvokeRequest{}, events.Malformed("Metadata: %v", err)
		}
	default:
		return events.InvokeRequest{}, events.Malformed("Metadata must be a JSON object, got %s", k)
	}
	return req, nil
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeResponse sends the host its answer. Outputs and Logs are never
// null; an answer that cannot be encoded (an output that is not JSON) is
// a 500 naming the problem.
func writeResponse(w http.ResponseWriter, status int, resp events.InvokeResponse) int {
	if resp.Outputs == nil {
		resp.Outputs = map[string]json.RawMessage{}
	}
	if resp.Logs == nil {
		resp.Logs = []string{}
	}
	body, err := json.Marshal(resp)
	if err != nil {
		msg := fmt.Sprintf("encoding the invocation result: %v", err)
		body, _ = json.Marshal(events.InvokeResponse{Outputs: map[string]json.RawMessage{}, Logs: []string{msg}, Error: msg})
		status = http.StatusInternalServerError
	}
	writeJSON(w, status, body)
	return status
}

// writeFailure answers with the envelope shape even on errors, so the host
// (and anyone with curl) always gets JSON that says what went wrong.
func writeFailure(w http.ResponseWriter, status int, msg string, logs ...string) {
	writeResponse(w, status, events.InvokeResponse{Logs: append(slices.Clip(logs), msg), Error: msg})
}
