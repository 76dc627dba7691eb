package document

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name (indented for review), or rewrites
// it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatalf("%s: output is not JSON: %v\n%s", name, err, got)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\ngot:\n%s", name, pretty.Bytes())
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := readFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readFile(name string) ([]byte, error) { return os.ReadFile(filepath.Join("testdata", name)) }

// decodeAny decodes JSON with numbers kept literal, for tree comparisons.
func decodeAny(t *testing.T, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode: %v\n%s", err, raw)
	}
	return v
}

// diffTrees lists the paths where two decoded JSON trees differ.
func diffTrees(path string, a, b any) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		var out []string
		for k, av := range am {
			bv, ok := bm[k]
			if !ok {
				out = append(out, path+"."+k+" (removed)")
				continue
			}
			out = append(out, diffTrees(path+"."+k, av, bv)...)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				out = append(out, path+"."+k+" (added)")
			}
		}
		return out
	}
	if !reflect.DeepEqual(a, b) {
		return []string{path}
	}
	return nil
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
