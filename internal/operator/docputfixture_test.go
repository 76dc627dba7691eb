package operator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The documents docs/functions.md loads with doc put pass its check.
func TestDocPutTakesTheEventFixtures(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "events", "testdata", "documents.json"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := readDocuments([]string{"-"}, strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkPut(docs, false); err != nil {
		t.Errorf("events/testdata/documents.json: %v", err)
	}
}
