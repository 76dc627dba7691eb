package handlers

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/google/uuid"
)

// ARM's request-id headers (Azure/azure-resource-manager-rpc,
// common-api-details.md): ARM and support tie a customer's complaint to
// an RP's log by them.
const (
	HeaderRequestID            = "X-Ms-Request-Id"
	HeaderClientRequestID      = "X-Ms-Client-Request-Id"
	HeaderReturnClientID       = "X-Ms-Return-Client-Request-Id"
	HeaderCorrelationRequestID = "X-Ms-Correlation-Request-Id"
)

// Attribute keys of a forwarded request's line that carry those ids.
const (
	AttrRequestID            = "request_id"
	AttrClientRequestID      = "client_request_id"
	AttrCorrelationRequestID = "correlation_request_id"
)

// armIDs are the ids of one forwarded request.
type armIDs struct {
	request, client, correlation string
}

// stampARMIDs gives the answer a fresh x-ms-request-id, echoes the
// caller's x-ms-client-request-id when it asks for it, and keeps all three
// for the request's line.
func stampARMIDs(w http.ResponseWriter, r *http.Request) armIDs {
	ids := armIDs{request: uuid.NewString(), client: r.Header.Get(HeaderClientRequestID),
		correlation: r.Header.Get(HeaderCorrelationRequestID)}
	w.Header().Set(HeaderRequestID, ids.request)
	if ids.client != "" && strings.EqualFold(strings.TrimSpace(r.Header.Get(HeaderReturnClientID)), "true") {
		w.Header().Set(HeaderClientRequestID, ids.client)
	}
	return ids
}

// attrs are the line's attributes: the request id always, the caller's
// when given.
func (ids armIDs) attrs() []slog.Attr {
	if ids.request == "" {
		return nil
	}
	a := []slog.Attr{slog.String(AttrRequestID, ids.request)}
	if ids.client != "" {
		a = append(a, slog.String(AttrClientRequestID, ids.client))
	}
	if ids.correlation != "" {
		a = append(a, slog.String(AttrCorrelationRequestID, ids.correlation))
	}
	return a
}

// entryWriter is the ResponseWriter a route's handler gets: it carries
// the request's line, so that the handler can say what the line should
// say of its answer without the context carrying it.
type entryWriter struct {
	http.ResponseWriter
	e *entry
}

// AnswerIsExpected marks the forwarded request's answer as one the route
// meant to give whatever its status (an operation's own failure, answered
// with the 5xx a synchronous request would have got): its line stays at
// Info. A route's handler calls it with the ResponseWriter it was given.
func AnswerIsExpected(w http.ResponseWriter) {
	if ew, ok := w.(entryWriter); ok {
		ew.e.expected = true
	}
}
