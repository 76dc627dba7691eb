package document

import (
	"bytes"
	"encoding/json"
	"encoding/json/jsontext"
	"io"
	"reflect"
	"strings"
	"testing"
)

// maxDepth is encoding/json's nesting limit, and jsontext's.
const maxDepth = 10000

// readSeeds are the corners of JSON the reader must agree with
// encoding/json on.
var readSeeds = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{"a":}`, `{,}`, `{"a":1 "b":2}`, `{"a":1}x`, `{"a":1} {}`,
	`{"a":[]}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":[1 2]}`, `{"a":[[[]]]}`, `[]`, `null`, `"x"`, `1`, ``, ` `,
	`{"a":-}`, `{"a":-0}`, `{"a":01}`, `{"a":1.}`, `{"a":1.5e}`, `{"a":1.5e+}`, `{"a":1E-07}`, `{"a":-12.50e+3}`,
	`{"a":1e400}`, `{"a":.5}`, `{"a":+1}`, `{"a":0x1}`, `{"a":tru}`, `{"a":truex}`, `{"a":nul}`, `{"a":false}`,
	`{"a":"\u00e9\n\t\"\\\/"}`, `{"a":"\u12"}`, `{"a":"\uZZZZ"}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}", "{\"a\":\"\xff\xfe\"}",
	`{"a":"\ud83d\ude00"}`, `{"a":"\ud83d"}`, `{"a\u0062":1,"ab":2}`, `{"a":1,"a":2}`, `{"a":{"b":1},"a":[2]}`,
	"{\"a\":\"caf\xc3\xa9\"}", "\t\r\n{\"a\":1}\n", `{"a":"unterminated}`, `{"a":1`, `{"a":{"b":{"c":"d"}}}`,
	"{\"k\xff\":1}", `{"a":[1]]}`, `{"a":1}}`, `{"a":{"b":[}}`,
}

// deepSeeds sit at encoding/json's nesting limit. They are too slow to
// seed the fuzzers with: a run would mutate little else.
var deepSeeds = []string{
	strings.Repeat(`{"a":`, maxDepth) + `1` + strings.Repeat(`}`, maxDepth),
	strings.Repeat(`{"a":`, maxDepth+1) + `1` + strings.Repeat(`}`, maxDepth+1),
	`{"a":` + strings.Repeat(`[`, maxDepth-1) + strings.Repeat(`]`, maxDepth-1) + `}`,
	`{"a":` + strings.Repeat(`[`, maxDepth) + strings.Repeat(`]`, maxDepth) + `}`,
}

func TestReaderAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range append(readSeeds, deepSeeds...) {
		checkReader(t, []byte(s))
	}
	for _, name := range fuzzSeedFiles {
		checkReader(t, readTestdata(t, name))
	}
}

// FuzzReader is the differential test of the jsontext reader against
// encoding/json.
func FuzzReader(f *testing.F) {
	for _, s := range readSeeds {
		f.Add([]byte(s))
	}
	for _, name := range fuzzSeedFiles {
		f.Add(readSeed(f, name))
	}
	f.Fuzz(checkReader)
}

// checkReader holds readMembers and readAny to encoding/json: the same
// verdict on validity, the same members (the last of a repeated name
// winning, known or not) and the same decoded values.
func checkReader(t *testing.T, raw []byte) {
	t.Helper()
	valid := json.Valid(raw)
	isObject := valid && bytes.TrimLeft(raw, " \t\r\n")[0] == '{'

	var got members
	err := (&reader{}).readMembers("x", raw, nil, nil, &got)
	if (err == nil) != isObject {
		t.Fatalf("readMembers = %v, encoding/json says object %v: %.200q", err, isObject, raw)
	}
	if err == nil {
		var want members
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("encoding/json refuses what it called valid: %v", err)
		}
		if len(want) == 0 {
			want = nil // readMembers makes the map on first use
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("members differ\n got %q\nwant %q", got, want)
		}
		// Filed as known names, the same values.
		keys := knownKeys{}
		for k := range want {
			keys[k] = len(keys)
		}
		vals := make([]jsontext.Value, len(keys))
		var rest members
		if err := (&reader{}).readMembers("x", raw, keys, vals, &rest); err != nil || rest != nil {
			t.Fatalf("with every name known: %v, rest %q", err, rest)
		}
		for k, i := range keys {
			if !bytes.Equal(vals[i], want[k]) {
				t.Fatalf("known %q = %q, want %q", k, vals[i], want[k])
			}
		}
	}

	v, err := readValue(string(raw))
	if (err == nil) != valid {
		t.Fatalf("readAny = %v, json.Valid = %v: %.200q", err, valid, raw)
	}
	if !valid {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var want any
	if err := dec.Decode(&want); err != nil {
		t.Fatalf("encoding/json refuses what it called valid: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("encoding/json sees trailing data in what it called valid: %v", err)
	}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("decoded values differ\n got %#v\nwant %#v", v, want)
	}
}
