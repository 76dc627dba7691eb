package document

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestObjectKeepsOrderAndValues(t *testing.T) {
	in := `{"z":1, "a":{"b" : [1,2]},"_etag":"\"x\"","m":"\u00e9<"}`
	obj, err := ParseObject([]byte(in))
	if err != nil {
		t.Fatalf("ParseObject: %v", err)
	}
	obj.Remove("_etag")
	obj.Set("a", json.RawMessage(`{"b":3}`))
	obj.Set("new", json.RawMessage(`true`))
	got := string(obj.AppendJSON(nil))
	want := `{"z":1,"a":{"b":3},"m":"\u00e9<","new":true}`
	if got != want {
		t.Errorf("appendJSON = %s, want %s", got, want)
	}
}

func TestParseObjectRejects(t *testing.T) {
	for _, in := range []string{``, `null`, `[]`, `"s"`, `{"a":1`, `{"a":1} {}`, `{"a":}`} {
		if _, err := ParseObject([]byte(in)); err == nil {
			t.Errorf("ParseObject(%q) succeeded", in)
		}
	}
}

// FuzzParseObject checks the hand-rolled scanner against encoding/json: the
// members it finds, written back out, mean what the input meant.
func FuzzParseObject(f *testing.F) {
	for _, seed := range []string{
		`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}], "d\"e":"x\\"} `, `{"a":{"b":{"c":[[],{}]}}, "n":-1.5e3,"t":true,"f":false,"z":null}`,
		`{"a":1,"a":2}`, `[1]`, `{"a"}`, `{"\u00e9":"\u00e9"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want map[string]any
		wantErr := json.Unmarshal(data, &want)
		obj, err := ParseObject(data)
		if wantErr != nil || want == nil {
			if err == nil {
				t.Fatalf("ParseObject(%q) succeeded, encoding/json says %v", data, wantErr)
			}
			return
		}
		if err != nil {
			t.Fatalf("ParseObject(%q): %v", data, err)
		}
		var got map[string]any
		if err := json.Unmarshal(obj.AppendJSON(nil), &got); err != nil {
			t.Fatalf("rewritten %q is not JSON: %v", obj.AppendJSON(nil), err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ParseObject(%q) rewrote to %v, want %v", data, got, want)
		}
	})
}

func TestMarkDeleted(t *testing.T) {
	now := time.Date(2026, 3, 14, 4, 0, 1, 5, time.UTC)
	tests := []struct {
		name    string
		body    string
		want    string
		wantErr string
	}{
		{
			name: "bumps the version and keeps the rest",
			body: `{"id":"a","properties":{"x":1,"cosmosMetadata":{"resourceID":"/r","instanceVersion":4}},"ttl":604800}`,
			want: `{"id":"a","properties":{"x":1,"cosmosMetadata":{"resourceID":"/r","instanceVersion":5}},"ttl":30,"deletionTimestamp":"2026-03-14T04:00:01.000000005Z"}`,
		},
		{
			name: "missing version counts as 1",
			body: `{"id":"a","properties":{"cosmosMetadata":{}}}`,
			want: `{"id":"a","properties":{"cosmosMetadata":{"instanceVersion":2}},"deletionTimestamp":"2026-03-14T04:00:01.000000005Z","ttl":30}`,
		},
		{
			name: "missing properties",
			body: `{"id":"a"}`,
			want: `{"id":"a","properties":{"cosmosMetadata":{"instanceVersion":2}},"deletionTimestamp":"2026-03-14T04:00:01.000000005Z","ttl":30}`,
		},
		{name: "version not a number", body: `{"id":"a","properties":{"cosmosMetadata":{"instanceVersion":"4"}}}`, wantErr: `properties.cosmosMetadata.instanceVersion is "4"`},
		{name: "properties not an object", body: `{"id":"a","properties":[]}`, wantErr: "field properties is []"},
		{name: "cosmosMetadata not an object", body: `{"id":"a","properties":{"cosmosMetadata":1}}`, wantErr: "field properties.cosmosMetadata is 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := ParseObject([]byte(tc.body))
			if err != nil {
				t.Fatalf("parseObject: %v", err)
			}
			err = obj.MarkDeleted(now)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("markDeleted: %v", err)
			}
			if got := string(obj.AppendJSON(nil)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
