package ocm

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// maxErrorBody bounds what is read of an error answer to judge it: CS's
// own errors are a few hundred bytes, and a gateway's page is not read on.
const maxErrorBody = 64 << 10

// evidence lets through to the SDK only error answers that are Clusters
// Service's own: a JSON body of OCM's error shape. The SDK reads any JSON
// object as an error and makes up nothing for the rest, so without this a
// gateway's {"statusCode":404} or an empty 404 would read as CS saying the
// object is gone. Any other 4xx becomes an *cs.UnrecognizedAnswer, which
// Classify calls no evidence. Statuses whose meaning does not depend on
// who sent them (429, 5xx, 401, 403, HTTP's retry statuses) pass as they
// are: the SDK retries some of them itself.
func evidence(next http.RoundTripper) http.RoundTripper { return checkAnswers(next, false) }

// listEvidence is evidence for the connection of the lists hcpops decides
// from: a 2xx answer must also have OCM's list shape.
func listEvidence(next http.RoundTripper) http.RoundTripper { return checkAnswers(next, true) }

func checkAnswers(next http.RoundTripper, lists bool) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if lists && err == nil && resp.StatusCode < 300 {
			return listShape(req, resp)
		}
		if err == nil && req.Method == http.MethodGet && resp.StatusCode >= 200 && resp.StatusCode < 300 &&
			strings.HasPrefix(req.URL.Path, "/api/") {
			if id, ok := askedObject(req.URL.Path); ok {
				return aboutAsked(req, resp, id) // about.go
			}
		}
		if err != nil || resp.StatusCode < 400 || !strings.HasPrefix(req.URL.Path, "/api/") {
			return resp, err
		}
		body, readErr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody+1))
		_ = resp.Body.Close()
		if readErr != nil {
			return nil, readErr
		}
		ct := resp.Header.Get("Content-Type")
		shape := errorShape(resp.StatusCode, ct, body)
		_, statusSpeaks := cs.ByStatus(resp.StatusCode)
		switch {
		case shape == "":
			resp.Body = io.NopCloser(bytes.NewReader(body))
		case statusSpeaks:
			// The status speaks for itself, and the SDK's retries read
			// it: pass it on with nothing of the body, which the SDK
			// would otherwise quote in its error.
			resp.Body, resp.ContentLength = http.NoBody, 0
			resp.Header.Set("Content-Type", "application/json")
		default:
			return nil, &cs.UnrecognizedAnswer{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode,
				ContentType: ct, Bytes: len(body), Shape: shape}
		}
		return resp, nil
	})
}

// ocmError is the part of OCM's error shape that makes an answer CS's own.
type ocmError struct {
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

// errorShape is "" when body is CS's own error for status, and otherwise
// what it is instead, in words that never quote it.
func errorShape(status int, contentType string, body []byte) string {
	if len(body) > maxErrorBody {
		return "a body over 64 KiB"
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return "an empty body"
	}
	if mt, _, err := mime.ParseMediaType(contentType); err != nil || mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return "not JSON by its content type"
	}
	var e ocmError
	if err := json.Unmarshal(body, &e); err != nil {
		return "not a JSON object"
	}
	switch {
	case e.Kind != "Error":
		return "JSON without OCM's kind \"Error\""
	case e.ID != strconv.Itoa(status):
		return "an OCM error whose id is not its status"
	case strings.TrimSpace(e.Code) == "":
		return "an OCM error without a code"
	case strings.TrimSpace(e.Reason) == "":
		return "an OCM error without a reason"
	}
	return ""
}

// A list is CS's word only in OCM's list shape: {"kind": "…List", "page",
// "size", "total", "items"}. The SDK reads any JSON object as a list, so
// without this a gateway's 200 {} reads as an empty list: no upgrade
// policy, no version offered, no credential awaiting revocation. Every
// list read through collect, the upgrade code's, the inflight checks and
// the batched external auths are sent on the lists connection, which
// checks it (listEvidence); any other answer becomes an
// *cs.UnrecognizedAnswer with its status, as error bodies do above. The
// tick's batched cluster and node pool lists (listpage.go) do not need
// it: an object they leave out is read with its own GET, whose answer is
// judged as any other.

// maxShapeBody bounds what is read of a list answer to judge its shape;
// the rest, if any, is passed on unread for the list's own limits.
const maxShapeBody = listPageSize*maxListItemBytes + listEnvelopeBytes

func listShape(req *http.Request, resp *http.Response) (*http.Response, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxShapeBody))
	if err != nil {
		_ = resp.Body.Close()
		return nil, err
	}
	ct := resp.Header.Get("Content-Type")
	if shape := listBodyShape(req.URL.Path, ct, body, len(body) == maxShapeBody); shape != "" {
		_ = resp.Body.Close()
		return nil, &cs.UnrecognizedAnswer{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode,
			ContentType: ct, Bytes: len(body), Shape: shape}
	}
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
	return resp, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// ocmList is the part of OCM's list shape that makes an answer CS's own.
type ocmList struct {
	Kind  string           `json:"kind"`
	Page  *json.Number     `json:"page"`
	Size  *json.Number     `json:"size"`
	Total *json.Number     `json:"total"`
	Items *json.RawMessage `json:"items"`
}

// listBodyShape is "" when body is a list in OCM's shape, and otherwise
// what it is instead, never quoting it. A body cut at the bound is judged
// by its content type only: its members were read by the SDK's decoder
// against the list's own limits.
func listBodyShape(path, contentType string, body []byte, cut bool) string {
	if len(bytes.TrimSpace(body)) == 0 {
		return "an empty body"
	}
	if mt, _, err := mime.ParseMediaType(contentType); err != nil || mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return "not JSON by its content type"
	}
	if cut {
		return ""
	}
	var l ocmList
	if err := json.Unmarshal(body, &l); err != nil {
		return "not a JSON object"
	}
	switch {
	case !strings.HasSuffix(l.Kind, "List"):
		return "JSON without OCM's list kind"
	case l.Page == nil || l.Size == nil || l.Total == nil:
		return "an OCM list without its page, size or total"
	case l.Items == nil && l.Size.String() != "0":
		return "an OCM list without its items"
	case l.Items == nil:
		return ""
	}
	var items []ocmObject
	if err := json.Unmarshal(*l.Items, &items); err != nil {
		return "an OCM list whose items are not objects"
	}
	return itemsUnder(path, items)
}
