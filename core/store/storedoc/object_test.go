package storedoc

import (
	"encoding/json"
	"reflect"
	"testing"
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
