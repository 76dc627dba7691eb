package document

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestMarshalTreeAgreesWithEncodingJSON(t *testing.T) {
	for _, tr := range []tree{
		{},
		{"b": "x", "a": json.Number("1.50e3"), "c": []any{true, false, nil, tree{}}, "d": []any{}, "e": tree(nil), "f": []any(nil)},
		{"<k>": "a&b<c>\u2028\"\\\t\x01é", "bad": "x\xffy", "n": json.Number("-0"), "\u2029": "\x7f\b\f"},
		{"é": 1, "z": 2, "Z": 3, "😀": 4, "\ufffd": 5, "": 6},
		{"empty number": json.Number("")},
		{"bad number": json.Number("01")},
		{"other": 1.5},
	} {
		checkMarshalTree(t, tr)
	}
	for _, s := range append(readSeeds, deepSeeds...) {
		checkMarshalTreeOf(t, []byte(s))
	}
}

// FuzzMarshalTree: every document the reader decodes renders exactly as
// encoding/json renders it.
func FuzzMarshalTree(f *testing.F) {
	for _, s := range readSeeds {
		f.Add([]byte(s))
	}
	for _, name := range fuzzSeedFiles {
		f.Add(readSeed(f, name))
	}
	f.Fuzz(checkMarshalTreeOf)
}

func checkMarshalTreeOf(t *testing.T, raw []byte) {
	t.Helper()
	if v, err := readValue(string(raw)); err == nil {
		if tr, isTree := v.(tree); isTree {
			checkMarshalTree(t, tr)
		}
	}
}

func checkMarshalTree(t *testing.T, tr tree) {
	t.Helper()
	got, err := marshalTree(tr, 0)
	want, werr := json.Marshal(tr)
	if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("marshalTree = %s, %v\nencoding/json %s, %v", got, err, want, werr)
	}
}
