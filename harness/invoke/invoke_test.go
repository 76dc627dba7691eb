package invoke

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestPostInvocation(t *testing.T) {
	var gotBody, gotID, gotCT string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody, gotID, gotCT = r.URL.Path+" "+string(b), r.Header.Get("X-Id"), r.Header.Get("Content-Type")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{"Outputs":{"res":{"statusCode":"202","headers":{"Location":"l"},"body":"b"}},"Logs":["x"],"Error":"e"}`)
	}))
	defer ts.Close()
	r := Post(t, ts, "fn", []byte(`{"Data":{}}`), http.Header{"X-Id": {"id-1"}})
	if gotBody != `/fn {"Data":{}}` || gotID != "id-1" || gotCT != "application/json; charset=utf-8" {
		t.Errorf("request = %q, id %q, content type %q", gotBody, gotID, gotCT)
	}
	if r.Status != 202 || r.Outputs.Res.StatusCode != "202" || r.Outputs.Res.Headers["Location"] != "l" ||
		r.Outputs.Res.Body != "b" || len(r.Logs) != 1 || r.Error != "e" {
		t.Errorf("reply = %+v", r)
	}
}
