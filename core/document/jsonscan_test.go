package document

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
)

// scanSeeds are the corners of JSON the scanner must agree with
// encoding/json on.
var scanSeeds = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{"a":}`, `{,}`, `{"a":1 "b":2}`, `{"a":1}x`, `{"a":1} {}`,
	`{"a":[]}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":[1 2]}`, `{"a":[[[]]]}`, `[]`, `null`, `"x"`, `1`, ``, ` `,
	`{"a":-}`, `{"a":-0}`, `{"a":01}`, `{"a":1.}`, `{"a":1.5e}`, `{"a":1.5e+}`, `{"a":1E-07}`, `{"a":-12.50e+3}`,
	`{"a":1e400}`, `{"a":.5}`, `{"a":+1}`, `{"a":0x1}`, `{"a":tru}`, `{"a":truex}`, `{"a":nul}`, `{"a":false}`,
	`{"a":"\u00e9\n\t\"\\\/"}`, `{"a":"\u12"}`, `{"a":"\uZZZZ"}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}", "{\"a\":\"\xff\xfe\"}",
	`{"a":"\ud83d\ude00"}`, `{"a":"\ud83d"}`, `{"a\u0062":1,"ab":2}`, `{"a":1,"a":2}`, `{"a":{"b":1},"a":[2]}`,
	"{\"a\":\"caf\xc3\xa9\"}", "\t\r\n{\"a\":1}\n", `{"a":"unterminated}`, `{"a":1`, `{"a":{"b":{"c":"d"}}}`,
	strings.Repeat(`{"a":`, maxDepth) + `1` + strings.Repeat(`}`, maxDepth),
	strings.Repeat(`{"a":`, maxDepth+1) + `1` + strings.Repeat(`}`, maxDepth+1),
	`{"a":` + strings.Repeat(`[`, maxDepth-1) + strings.Repeat(`]`, maxDepth-1) + `}`,
	`{"a":` + strings.Repeat(`[`, maxDepth) + strings.Repeat(`]`, maxDepth) + `}`,
}

func TestScannerAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range scanSeeds {
		checkScanner(t, []byte(s))
	}
	for _, name := range fuzzSeedFiles {
		checkScanner(t, readTestdata(t, name))
	}
}

func FuzzScanner(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	for _, name := range fuzzSeedFiles {
		f.Add(readSeed(f, name))
	}
	f.Fuzz(checkScanner)
}

// checkScanner holds scanObject and buildValue to encoding/json: the same
// verdict on validity, the same members (the last of a repeated key
// winning) and the same decoded values.
func checkScanner(t *testing.T, raw []byte) {
	t.Helper()
	valid := json.Valid(raw)
	isObject := valid && bytes.TrimLeft(raw, " \t\r\n")[0] == '{'

	var ms []rawMember[[]byte]
	ok := scanObject(raw, func(m rawMember[[]byte]) { ms = append(ms, m) })
	if ok != isObject {
		t.Fatalf("scanObject ok = %v, encoding/json says object %v: %.200q", ok, isObject, raw)
	}
	if ok {
		var want map[string]json.RawMessage
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("encoding/json refuses what it called valid: %v", err)
		}
		got := map[string]json.RawMessage{}
		for _, m := range ms {
			got[m.name()] = m.val
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("members differ\n got %q\nwant %q", got, want)
		}
	}

	// Scanned as a string, the same members and verdict.
	var sms []rawMember[string]
	if sok := scanObject(string(raw), func(m rawMember[string]) { sms = append(sms, m) }); sok != ok || len(sms) != len(ms) {
		t.Fatalf("as a string: ok %v with %d members; as bytes: %v with %d", sok, len(sms), ok, len(ms))
	}
	for i := range sms {
		if sms[i].name() != ms[i].name() || sms[i].val != string(ms[i].val) {
			t.Fatalf("member %d as a string differs: %q=%q, %q=%q", i, sms[i].name(), sms[i].val, ms[i].name(), ms[i].val)
		}
	}

	v, ok := buildValue(raw)
	if ok != valid {
		t.Fatalf("buildValue ok = %v, json.Valid = %v: %.200q", ok, valid, raw)
	}
	if sv, sok := buildValue(string(raw)); sok != ok || !reflect.DeepEqual(sv, v) {
		t.Fatalf("buildValue as a string = %v, %#v; as bytes %v, %#v", sok, sv, ok, v)
	}
	if !ok {
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
