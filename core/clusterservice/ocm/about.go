package ocm

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// An answer is CS's word only about the object asked for. A cache or a
// proxy that keys its answers without the id serves another object's
// genuine answer: its status is real, its object is not the one asked.
// So a single-object GET's answer counts only when it is a JSON object
// whose id is the one in the path and whose href, when it has one, is the
// path; a list's items only when their hrefs lie under the list's path
// (listShape). Anything else becomes an *cs.UnrecognizedAnswer saying
// what came back (ids, never the body), which Classify calls no evidence
// and the recorder counts as cs_unrecognized.

// objectCollections are the collections whose members the client GETs
// one by one (and their /status).
var objectCollections = map[string]bool{"clusters": true, "node_pools": true, "external_auths": true,
	"break_glass_credentials": true}

// askedObject is the id a single-object GET of path asks for, and whether
// path is one.
func askedObject(path string) (string, bool) {
	segs := strings.Split(strings.TrimSuffix(path, "/"), "/")
	if n := len(segs); n >= 2 && segs[n-1] == "status" {
		segs = segs[:n-1]
	}
	n := len(segs)
	if n < 2 || !objectCollections[segs[n-2]] || segs[n-1] == "" {
		return "", false
	}
	return segs[n-1], true
}

// maxObjectBody bounds what is read of a single object's answer: a
// cluster with every field set is a few kB, a credential with its
// kubeconfig tens.
const maxObjectBody = 1 << 20

// aboutAsked passes resp on when it is about the object req asked for.
func aboutAsked(req *http.Request, resp *http.Response, id string) (*http.Response, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxObjectBody+1))
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	ct := resp.Header.Get("Content-Type")
	unrecognized := func(shape string, got ocmObject) (*http.Response, error) {
		return nil, &cs.UnrecognizedAnswer{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode,
			ContentType: ct, Bytes: len(body), Shape: shape, AnsweredID: quotable(got.ID), AnsweredHref: quotable(got.Href)}
	}
	var got ocmObject
	switch {
	case len(body) > maxObjectBody:
		return unrecognized("a body over 1 MiB", got)
	case len(bytes.TrimSpace(body)) == 0:
		return unrecognized("an empty body", got)
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return unrecognized("not JSON by its content type", got)
	}
	if err := json.Unmarshal(body, &got); err != nil {
		return unrecognized("not a JSON object of OCM's shape", ocmObject{})
	}
	switch {
	case got.ID == "":
		return unrecognized("an object without an id", got)
	case !strings.EqualFold(got.ID, id):
		return unrecognized("an answer about another object", got)
	case got.Href != "" && !strings.EqualFold(strings.TrimSuffix(got.Href, "/"), strings.TrimSuffix(req.URL.Path, "/")):
		return unrecognized("an answer about another object", got)
	}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return resp, nil
}

// ocmObject is the part of an OCM object that says which it is.
type ocmObject struct {
	ID   string `json:"id"`
	Href string `json:"href"`
}

// itemsUnder says "" when every item of a list that has an href has it
// under path (and its id, when it has one, is the href's last segment),
// and otherwise what is wrong, quoting only ids.
func itemsUnder(path string, items []ocmObject) string {
	prefix := strings.ToLower(strings.TrimSuffix(path, "/")) + "/"
	for _, it := range items {
		if it.Href == "" {
			continue
		}
		rest, under := strings.CutPrefix(strings.ToLower(it.Href), prefix)
		if !under || it.ID != "" && !strings.EqualFold(rest, it.ID) {
			return "a list with an item about another object (id " + quoteOr(it.ID) + ", href " + quoteOr(it.Href) + ")"
		}
	}
	return ""
}

// quotable is s when it is the shape of an id or an href, which can be
// logged; anything else (a body may put anything there) is not quoted.
func quotable(s string) string {
	if len(s) > 256 {
		return "(not an id)"
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '-' && c != '/' && c != '.' {
			return "(not an id)"
		}
	}
	return s
}

func quoteOr(s string) string {
	if s = quotable(s); s == "" {
		return `""`
	}
	return `"` + s + `"`
}
