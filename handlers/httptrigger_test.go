package handlers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestDecodeHTTPRequest(t *testing.T) {
	req, err := DecodeHTTPRequest("Data.req", json.RawMessage(`{
		"Url": "https://h/subscriptions/s?api-version=1",
		"method": "GET",
		"Query": {"api-version": "2"},
		"Headers": {"X-A": ["1"], "x-a": "1", "X-B": ["1", "2"], "X-C": "old host"},
		"Params": {"subscriptionId": "s"}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if req.URL != "https://h/subscriptions/s?api-version=1" || req.Method != "GET" || req.Params["subscriptionId"] != "s" {
		t.Errorf("decoded %+v", req)
	}
	if v := req.QueryValue("api-version"); v != "2" {
		t.Errorf("Query wins over the URL: got %q", v)
	}
	if v := (HTTPRequest{URL: "https://h/x?api-version=1"}).QueryValue("api-version"); v != "1" {
		t.Errorf("from the URL: got %q", v)
	}
	for _, tc := range []struct {
		name     string
		value    string
		conflict bool
	}{
		{"x-a", "1", false}, // two spellings, one value
		{"X-B", "", true},   // one spelling, two values
		{"x-c", "old host", false},
		{"x-missing", "", false},
	} {
		if v, c := req.Header(tc.name); v != tc.value || c != tc.conflict {
			t.Errorf("Header(%s) = %q, %v; want %q, %v", tc.name, v, c, tc.value, tc.conflict)
		}
	}
	// Deterministic whatever the map order: run it many times.
	two := HTTPRequest{Headers: map[string][]string{"x-ms-home-tenant-id": {"a"}, "X-Ms-Home-Tenant-Id": {"b"}}}
	for i := 0; i < 50; i++ {
		if v, c := two.Header("X-MS-HOME-TENANT-ID"); v != "" || !c {
			t.Fatalf("disagreeing spellings gave %q, %v", v, c)
		}
	}
}

func TestDecodeHTTPRequestRejects(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{``, "Data.req is missing"},
		{`[]`, "Data.req is an array"},
		{`{"Url": 3}`, "Data.req.Url"},
		{`{"Headers": {"X": 3}}`, `header "X"`},
		{`{"Params": []}`, "Data.req.Params"},
		{`{"Params": "x"}`, "Data.req.Params is a string"},
		{`{"Headers": ["a"]}`, "Data.req.Headers is an array"},
		{`{"Headers": {"X-Id": [1]}}`, `header "X-Id"`}, // not named as identity
		{`{"Params": {"a": 1}}`, "Data.req.Params"},
	} {
		var raw json.RawMessage
		if tc.raw != "" {
			raw = json.RawMessage(tc.raw)
		}
		_, err := DecodeHTTPRequest("Data.req", raw)
		if err == nil || !IsBadInput(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want an input error naming %s", tc.raw, err, tc.want)
		}
	}
}

// TestDecodeHTTPRequestDistrustsIdentity: an unreadable identity header is
// no identity (a conflict), not a failed request.
func TestDecodeHTTPRequestDistrustsIdentity(t *testing.T) {
	req, err := DecodeHTTPRequest("Data.req", json.RawMessage(`{"Headers": {"x-id": [1], "Y": "y"}}`), "X-Id")
	if err != nil {
		t.Fatal(err)
	}
	if v, c := req.Header("X-ID"); v != "" || !c {
		t.Errorf("Header(X-ID) = %q, %v; want a conflict", v, c)
	}
	if v, c := req.Header("y"); v != "y" || c {
		t.Errorf("Header(y) = %q, %v", v, c)
	}
}

func TestHTTPResponse(t *testing.T) {
	res := HTTPResponse(202, http.Header{"Location": {"https://x/y"}}, nil)
	if res["statusCode"] != "202" || res["body"] != "" || res["headers"].(map[string]string)["Location"] != "https://x/y" {
		t.Errorf("HTTPResponse = %v", res)
	}
	if _, ok := HTTPResponse(204, nil, nil)["headers"]; ok {
		t.Errorf("headers rendered for none")
	}
}
