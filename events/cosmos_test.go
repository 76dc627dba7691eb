package events

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeDocuments(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    []string
		wantErr string
	}{
		{"plain array", `[{"id":"a"},{"id":"b"}]`, []string{`{"id":"a"}`, `{"id":"b"}`}, ""},
		{"single-encoded", `"[{\"id\":\"a\"}]"`, []string{`{"id":"a"}`}, ""},
		{"double-encoded", `"\"[{\\\"id\\\":\\\"a\\\"}]\""`, []string{`{"id":"a"}`}, ""},
		{"whitespace kept inside documents", `[ { "id" : "a" } ]`, []string{`{ "id" : "a" }`}, ""},
		{"escaped etag survives", `"\"[{\\\"_etag\\\":\\\"\\\\\\\"0001\\\\\\\"\\\"}]\""`, []string{`{"_etag":"\"0001\""}`}, ""},
		{"unicode", `"[{\"name\":\"\u00e9t\u00e9\"}]"`, []string{`{"name":"été"}`}, ""},
		{"empty", `[]`, []string{}, ""},
		{"null", `null`, nil, "Data.documents is null"},
		{"number", `1`, nil, "is a number"},
		{"element not object", `[{},"x"]`, nil, "Data.documents[1] is a string"},
		{"bad inner", `"[1,"`, nil, "content is not JSON"},
		{"too deep", `"\"\\\"[]\\\"\""`, nil, "more than 2 layers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeDocuments("Data.documents", json.RawMessage(tt.raw))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !IsMalformed(err) {
					t.Fatalf("err = %v, want bad input containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d documents, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if string(got[i]) != tt.want[i] {
					t.Errorf("doc %d = %s, want %s", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// goldenDocuments returns Data.documents from each golden payload.
func goldenDocuments(tb testing.TB) [][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no golden files: %v", err)
	}
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var env struct{ Data map[string]json.RawMessage }
		if json.Unmarshal(b, &env) != nil || env.Data["documents"] == nil {
			continue // documents.json is the plain source array, not a payload
		}
		out = append(out, env.Data["documents"])
	}
	return out
}

// FuzzDecodeDocuments: any input either fails with a bad-input error or
// yields JSON objects that decode the same way again once re-encoded.
func FuzzDecodeDocuments(f *testing.F) {
	for _, raw := range goldenDocuments(f) {
		f.Add(raw)
	}
	for _, seed := range []string{`[]`, `"[]"`, `"\"[]\""`, `[{}]`, `[1]`, `null`, `"`, `"\"[{}]"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // the envelope decoder only ever hands over valid JSON
		}
		docs, err := DecodeDocuments("Data.documents", raw)
		if err != nil {
			if !IsMalformed(err) {
				t.Fatalf("error is not bad input: %v", err)
			}
			return
		}
		for i, d := range docs {
			var m map[string]any
			if err := json.Unmarshal(d, &m); err != nil {
				t.Fatalf("doc %d is not a JSON object: %s", i, d)
			}
		}
		// re-encode as the host would (Newtonsoft does not escape <, >, &)
		var again bytes.Buffer
		enc := json.NewEncoder(&again)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(docs); err != nil {
			t.Fatal(err)
		}
		docs2, err := DecodeDocuments("Data.documents", bytes.TrimSpace(again.Bytes()))
		if err != nil || len(docs2) != len(docs) {
			t.Fatalf("re-encoded batch does not decode: %v", err)
		}
		for i := range docs {
			var a, b bytes.Buffer
			_ = json.Compact(&a, docs[i])
			_ = json.Compact(&b, docs2[i])
			if a.String() != b.String() {
				t.Fatalf("doc %d changed on round trip: %s vs %s", i, a.String(), b.String())
			}
		}
	})
}

// BenchmarkDecodeDocuments decodes a full host batch (100 operation-sized
// documents, double-encoded).
func BenchmarkDecodeDocuments(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("testdata", "documents.json"))
	if err != nil {
		b.Fatal(err)
	}
	var three []json.RawMessage
	if err := json.Unmarshal(src, &three); err != nil {
		b.Fatal(err)
	}
	batch := make([][]byte, 0, 100)
	for len(batch) < 100 {
		batch = append(batch, three[len(batch)%len(three)])
	}
	raw, err := EncodeDocuments(batch)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		docs, err := DecodeDocuments("Data.documents", raw)
		if err != nil || len(docs) != 100 {
			b.Fatalf("%d docs, %v", len(docs), err)
		}
	}
}
