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
func evidence(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
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
