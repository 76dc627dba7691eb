package lifecycle

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// The tick's warning about an operation document it cannot parse names
// the document, so a person can find it (doc get, ops) and mend or remove
// it; without the id the line repeats every tick and leads nowhere.
func TestMalformedOperationWarningNamesTheDocument(t *testing.T) {
	for _, tc := range []struct {
		name string
		warm bool // a first tick has made the view, so the second streams from it
	}{{"from the store", false}, {"from the view", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.warm {
				e.tick(t)
			}
			op, _ := e.newOp(t, document.RequestCreate, clusterRID("c1"), "", request{})
			body, err := op.MarshalCreate()
			if err != nil {
				t.Fatal(err)
			}
			var raw obj
			if err := json.Unmarshal(body, &raw); err != nil {
				t.Fatal(err)
			}
			raw["properties"].(obj)["startTime"] = "not-a-time"
			e.batch(t, []store.BatchOp{{Kind: store.OpCreate, Body: mustJSON(t, raw)}})
			if tr := e.tick(t); tr.Errors != 1 {
				t.Fatalf("tick = %+v, want the malformed operation counted as an error", tr)
			}
			var found bool
			for _, l := range strings.Split(e.logs.String(), "\n") {
				if !strings.Contains(l, "skipping a malformed operation document") {
					continue
				}
				found = true
				for _, want := range []string{"document_id=" + op.ID, "partition_key=" + op.PartitionKey, "startTime"} {
					if !strings.Contains(l, want) {
						t.Errorf("the tick's warning lacks %s:\n%s", want, l)
					}
				}
			}
			if !found {
				t.Errorf("no warning about the malformed operation:\n%s", e.logs.String())
			}
		})
	}
}
