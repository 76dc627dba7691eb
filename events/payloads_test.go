package events

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readFile(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// request reads an invocation request from testdata.
func request(t *testing.T, name string) InvokeRequest {
	t.Helper()
	var r InvokeRequest
	if err := json.Unmarshal(readFile(t, name), &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// sameJSON compares two JSON texts as values.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// TestTimerPayloads: each timer payload the host sends decodes, and
// encoding the result gives the host's own text back (but for the legacy
// first run, whose offset-less Last is written with one today).
func TestTimerPayloads(t *testing.T) {
	for _, tc := range []struct {
		file, binding string
		pastDue       bool
		monitor       bool
		sameText      bool
	}{
		{"reference-timer-tick.json", "myTimer", false, true, true},
		{"tick.json", "timer", false, true, true},
		{"tick-past-due.json", "timer", true, true, true},
		{"tick-no-monitor.json", "timer", false, false, true},
		{"tick-first-run-legacy.json", "timer", false, true, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			raw := request(t, tc.file).Data[tc.binding]
			info, err := DecodeTimerInfo("Data."+tc.binding, raw)
			if err != nil {
				t.Fatal(err)
			}
			if info.IsPastDue != tc.pastDue || (info.ScheduleStatus != nil) != tc.monitor {
				t.Errorf("decoded %+v", info)
			}
			again, err := json.Marshal(info)
			if err != nil {
				t.Fatal(err)
			}
			if tc.sameText && !sameJSON(t, raw, again) {
				t.Errorf("encoded %s, the host sent %s", again, raw)
			}
			back, err := DecodeTimerInfo("Data."+tc.binding, again)
			if err != nil || !equalInfo(info, back) {
				t.Errorf("round trip: %+v, %v", back, err)
			}
		})
	}
}

// TestBatchPayloads: each change-feed payload decodes to the documents of
// documents.json, and EncodeDocuments writes the host's double encoding
// byte for byte.
func TestBatchPayloads(t *testing.T) {
	var want []json.RawMessage
	if err := json.Unmarshal(readFile(t, "documents.json"), &want); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"batch-double-encoded.json", "batch-single-encoded.json", "batch-plain-array.json", "batch-retry.json"} {
		t.Run(file, func(t *testing.T) {
			docs, err := DecodeDocuments("Data.documents", request(t, file).Data["documents"])
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) != len(want) {
				t.Fatalf("%d documents, want %d", len(docs), len(want))
			}
			for i := range docs {
				if !sameJSON(t, docs[i], want[i]) {
					t.Errorf("document %d differs from documents.json", i)
				}
			}
		})
	}
	docs, err := DecodeDocuments("Data.documents", request(t, "reference-cosmos-batch.json").Data["documents"])
	if err != nil || len(docs) == 0 {
		t.Fatalf("reference batch: %d documents, %v", len(docs), err)
	}
	bodies := make([][]byte, len(want))
	for i, d := range want {
		bodies[i] = d
	}
	enc, err := EncodeDocuments(bodies)
	if err != nil {
		t.Fatal(err)
	}
	if host := request(t, "batch-double-encoded.json").Data["documents"]; !bytes.Equal(enc, host) {
		t.Errorf("EncodeDocuments wrote\n%.300s\nthe host sends\n%.300s", enc, host)
	}
	if rc, err := request(t, "batch-retry.json").RetryContext(); err != nil || rc == nil || rc.RetryCount == 0 {
		t.Errorf("batch-retry.json's RetryContext = %+v, %v", rc, err)
	}
}

// TestHTTPRequestPayloads: a non-forwarded HTTP request decodes, in the
// current host's form and in an older one's (headers as strings, Query as
// the string "{}", no Params), and its Metadata is what the host puts
// beside it.
func TestHTTPRequestPayloads(t *testing.T) {
	env := request(t, "http-request.json")
	var req HTTPRequest
	if err := json.Unmarshal(env.Data["req"], &req); err != nil {
		t.Fatal(err)
	}
	if req.Method != http.MethodGet || !strings.Contains(req.URL, "/hcpOperationStatuses/") ||
		req.Query["api-version"] != "2024-06-10-preview" || len(req.Headers["X-Ms-Home-Tenant-Id"]) != 1 || len(req.Params) != 3 {
		t.Errorf("decoded %+v", req)
	}
	meta := req.Metadata()
	for _, k := range []string{"Query", "subscriptionId", "location", "operationId"} {
		if !sameJSON(t, meta[k], env.Metadata[k]) {
			t.Errorf("Metadata.%s = %s, the host sends %s", k, meta[k], env.Metadata[k])
		}
	}

	var old HTTPRequest
	if err := json.Unmarshal(request(t, "http-request-no-params.json").Data["req"], &old); err != nil {
		t.Fatal(err)
	}
	if len(old.Query) != 0 || len(old.Params) != 0 || old.Headers["X-Ms-Home-Tenant-Id"][0] != "72f988bf-86f1-41af-91ab-2d7cd011db47" {
		t.Errorf("decoded the older form as %+v", old)
	}
	var bad HTTPRequest
	if err := json.Unmarshal([]byte(`{"Headers":{"Accept":1}}`), &bad); err == nil || !strings.Contains(err.Error(), `header "Accept" is a number`) {
		t.Errorf("a numeric header value: %v", err)
	}
}

func TestDecodeHTTPResponse(t *testing.T) {
	for _, tc := range []struct {
		raw, body, header string
		status            int
	}{
		{`{"statusCode":"404","headers":{"Content-Type":"application/json"},"body":"{\"error\":{}}"}`, `{"error":{}}`, "application/json", 404},
		{`{"StatusCode":201,"Body":{"a":1}}`, `{"a":1}`, "", 201},
		{`{"status":"202"}`, "", "", 202},
		{`{"statusCode":"teapot","body":"x"}`, "x", "", 200},
		{`null`, "", "", 200},
		{``, "", "", 200},
	} {
		res, err := DecodeHTTPResponse(json.RawMessage(tc.raw))
		if err != nil || res.StatusCode != tc.status || string(res.Body) != tc.body || res.Headers.Get("Content-Type") != tc.header {
			t.Errorf("DecodeHTTPResponse(%s) = %d %q %v, %v; want %d %q", tc.raw, res.StatusCode, res.Body, res.Headers, err, tc.status, tc.body)
		}
	}
	if _, err := DecodeHTTPResponse(json.RawMessage(`"not an object"`)); err == nil || !strings.Contains(err.Error(), "httpOutputBindingResponse") {
		t.Errorf("a string output = %v, want the host's error", err)
	}
}

// TestReadBatchReadsWhatDecodeDocumentsReads: the stream reader, for
// batches too large to hold, reads every payload of the host as the
// whole-body decoder does, the Metadata too.
func TestReadBatchReadsWhatDecodeDocumentsReads(t *testing.T) {
	for _, file := range []string{"batch-double-encoded.json", "batch-single-encoded.json", "batch-plain-array.json", "batch-retry.json", "reference-cosmos-batch.json"} {
		t.Run(file, func(t *testing.T) {
			env := request(t, file)
			want, err := DecodeDocuments("Data.documents", env.Data["documents"])
			if err != nil {
				t.Fatal(err)
			}
			got, meta, err := ReadBatch(bytes.NewReader(readFile(t, file)), "documents")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d documents, DecodeDocuments read %d", len(got), len(want))
			}
			for i := range got {
				if !sameJSON(t, got[i], want[i]) {
					t.Errorf("document %d differs", i)
				}
			}
			if len(meta) != len(env.Metadata) {
				t.Errorf("Metadata has %d members, want %d", len(meta), len(env.Metadata))
			}
		})
	}
	if _, _, err := ReadBatch(strings.NewReader(`{"Data":{"timer":{}}}`), "documents"); !IsMalformed(err) || !strings.Contains(err.Error(), "Data.documents is missing") {
		t.Errorf("a batch without documents: %v", err)
	}
}
