package dispatchoperations

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/events"
	"github.com/hcpops/hcpops/handlers"
	"github.com/hcpops/hcpops/harness/invoke"
	"github.com/hcpops/hcpops/harness/testsupport"
)

// feedDoc is a change-feed document with padding bytes of filler.
func feedDoc(id string, padding int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"id":%q,"partitionKey":"1d3378d3-5a3f-4712-85a1-2485495dfc4b","resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","pad":%q,"note":"a \"quoted\" word\nand a line"}`,
		id, strings.Repeat("x", padding)))
}

// envelope renders docs the way the host sends them: double-encoded
// (layers 2), single-encoded (1) or as a plain array (0), with the
// Metadata before or after Data.
func envelope(t *testing.T, docs []json.RawMessage, layers int, metadataFirst bool) []byte {
	t.Helper()
	v, err := json.Marshal(docs)
	if err != nil {
		t.Fatal(err)
	}
	for range layers {
		if v, err = json.Marshal(string(v)); err != nil {
			t.Fatal(err)
		}
	}
	data := `"Data":{"other":[1,{"x":"y"}],"` + BindingName + `":` + string(v) + `}`
	meta := `"Metadata":{"sys":{"MethodName":"dispatchOperations"},"RetryContext":{"RetryCount":1,"MaxRetryCount":5}}`
	if metadataFirst {
		return []byte("{" + meta + "," + data + "}")
	}
	return []byte("{" + data + "," + meta + "}")
}

// TestOversizeBatchIsDecoded: a change-feed batch over the handler's body
// limit, because one document in it is over Cosmos DB's 2 MB (22 MB
// here), is still read: the document that can never be
// dispatched is logged with its id and skipped, the others are
// dispatched, and the host gets 200 instead of a 413 on every delivery.
// A batch over the limit only by the number of its documents loses none.
func TestOversizeBatchIsDecoded(t *testing.T) {
	small := []json.RawMessage{feedDoc("op-1", 100), feedDoc("op-2", 100)}
	huge := feedDoc("huge-doc", 22<<20)
	medium := make([]json.RawMessage, 20) // 20 x 1 MB: over 16 MiB in all
	for i := range medium {
		medium[i] = feedDoc(fmt.Sprintf("medium-%02d", i), 1<<20)
	}
	for _, tc := range []struct {
		name          string
		docs          []json.RawMessage
		layers        int
		metadataFirst bool
		want          []string // ids dispatched
		skipped       []string
	}{
		{"double-encoded with a 22 MB document", []json.RawMessage{small[0], huge, small[1]}, 2, false, []string{"op-1", "op-2"}, []string{"huge-doc"}},
		{"single-encoded, metadata first", []json.RawMessage{small[0], huge, small[1]}, 1, true, []string{"op-1", "op-2"}, []string{"huge-doc"}},
		{"plain array", []json.RawMessage{huge, small[0], small[1]}, 0, false, []string{"op-1", "op-2"}, []string{"huge-doc"}},
		{"many documents within the limit each", medium, 2, false, ids(medium), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := envelope(t, tc.docs, tc.layers, tc.metadataFirst)
			if len(body) <= handlers.DefaultMaxBodyBytes {
				t.Fatalf("the batch is %d bytes, within the limit", len(body))
			}
			rec := &recordingDispatcher{}
			ts, recs := newLoggedServer(t, rec)
			got := invoke.Post(t, ts, Name, body, http.Header{events.HeaderInvocationID: {"3e1f4c2a-9d0b-4c55-8a55-3b8f5a7d1e20"}})
			if got.Status != http.StatusOK {
				t.Fatalf("status = %d, error %q", got.Status, got.Error)
			}
			if rec.calls() != 1 {
				t.Fatalf("dispatcher called %d times", rec.calls())
			}
			if g := ids(rec.batches[0]); strings.Join(g, ",") != strings.Join(tc.want, ",") {
				t.Errorf("dispatched %v, want %v", g, tc.want)
			}
			for i, d := range rec.batches[0] {
				if string(d) != string(docByID(tc.docs, tc.want[i])) {
					t.Errorf("document %s changed on the way", tc.want[i])
				}
			}
			r := recs.Wait(t, MsgBatch)
			testsupport.WantAttrs(t, r, map[string]any{"documents": len(tc.want) + len(tc.skipped), "oversize_skipped": len(tc.skipped),
				"retry_count": 1, "max_retry_count": 5})
			if len(tc.skipped) > 0 {
				s := recs.Wait(t, MsgDocumentsSkipped)
				testsupport.WantAttrs(t, s, map[string]any{"level": "ERROR"})
				if fmt.Sprint(s["document_ids"]) != fmt.Sprint(tc.skipped) || !strings.Contains(fmt.Sprint(s["error"]), fmt.Sprint(store.MaxDocumentBytes)) {
					t.Errorf("skipped line = %v, want ids %v and the limit", s, tc.skipped)
				}
			}
		})
	}
}

// TestOversizeBatchMalformed: an oversize body that is not a batch is a
// 400 naming what is wrong, like a small one.
func TestOversizeBatchMalformed(t *testing.T) {
	pad := strings.Repeat(" ", handlers.DefaultMaxBodyBytes)
	for _, tc := range []struct{ name, body, want string }{
		{"no documents", `{"Data":{"other":"` + strings.Repeat("x", handlers.DefaultMaxBodyBytes) + `"}}`, "Data." + BindingName},
		{"not an array", `{"Data":{"documents":{"a":1}}}` + pad, "array"},
		{"cut short", `{"Data":{"documents":"[{\"id\":\"` + strings.Repeat("x", handlers.DefaultMaxBodyBytes), "cut short"},
		{"a document that is no object", `{"Data":{"documents":[1]}}` + pad, "not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingDispatcher{}
			ts := newServer(t, rec)
			got := postBody(t, ts, []byte(tc.body))
			if got.Status != http.StatusBadRequest || !strings.Contains(got.Error, tc.want) {
				t.Errorf("status %d, error %q; want 400 naming %q", got.Status, got.Error, tc.want)
			}
			if rec.calls() != 0 {
				t.Errorf("the dispatcher was called")
			}
		})
	}
}

func ids(docs []json.RawMessage) []string {
	var out []string
	for _, d := range docs {
		out = append(out, store.TopLevelID(d))
	}
	return out
}

func docByID(docs []json.RawMessage, id string) json.RawMessage {
	for _, d := range docs {
		if store.TopLevelID(d) == id {
			return d
		}
	}
	return nil
}
