package main

import (
	"strings"
	"testing"
)

// doc put is all or nothing: a batch with one document no store takes
// writes none of them, and the refusal names that document as a write.
func TestDocPutWritesNothingWhenOneDocumentIsBad(t *testing.T) {
	w := newWorkspace(t)
	pk := cliSub
	batch := `[{"id":"ok1","partitionKey":"` + pk + `"},{"id":"a/b","partitionKey":"` + pk + `"}]`
	r := w.hcpops(t, batch, "doc", "put", "-create", "-")
	msg := oneLine(t, r, "doc")
	if !strings.Contains(msg, `"a/b"`) || strings.Contains(msg, "reading") || !strings.Contains(msg, "nothing was written") {
		t.Errorf("doc put of a batch with a bad id: %q; want the id named, no \"reading\", and nothing written", msg)
	}
	if r.stdout != "" {
		t.Errorf("doc put printed writes before refusing: %q", r.stdout)
	}
	if g := w.hcpops(t, "", "doc", "get", "ok1", "-subscription", pk); g.code == 0 {
		t.Errorf("ok1 was written by a refused batch:\n%s", g.stdout)
	}
	// The same id twice is refused before anything is written too.
	dup := `{"id":"d1","partitionKey":"` + pk + `","n":1}` + "\n" + `{"id":"d1","partitionKey":"` + pk + `","n":2}`
	if msg := oneLine(t, w.hcpops(t, dup, "doc", "put", "-create", "-"), "doc"); !strings.Contains(msg, `"d1"`) || !strings.Contains(msg, "twice") {
		t.Errorf("doc put of one id twice: %q", msg)
	}
	// A good batch writes every document, creates and replaces alike.
	good := `[{"id":"ok1","partitionKey":"` + pk + `"},{"id":"ok2","partitionKey":"` + pk + `"}]`
	if r := w.hcpops(t, good, "doc", "put", "-create", "-"); r.code != 0 || r.stdout != "created  ok1\ncreated  ok2\n" {
		t.Fatalf("doc put of a good batch: %d %q %q", r.code, r.stdout, r.stderr)
	}
	again := `[{"id":"ok2","partitionKey":"` + pk + `","v":2},{"id":"ok3","partitionKey":"` + pk + `"}]`
	if r := w.hcpops(t, again, "doc", "put", "-"); r.code != 0 || r.stdout != "replaced ok2\ncreated  ok3\n" {
		t.Fatalf("doc put replacing one and creating one: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if g := w.hcpops(t, "", "doc", "get", "ok2", "-subscription", pk); !strings.Contains(g.stdout, `"v": 2`) {
		t.Errorf("ok2 was not replaced: %s%s", g.stdout, g.stderr)
	}
}
