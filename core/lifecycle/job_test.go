package lifecycle

import (
	"context"
	"errors"
	"testing"

	"github.com/hcpops/hcpops/core/document"
)

// TestNewJobRefuses: newJob, the one way a job is made (a tick's page
// calls it, and jobFor for everything else), refuses an operation it
// cannot act on, whether parsed or handed out by the view; so does jobFor,
// with its resource read by a page or not.
func TestNewJobRefuses(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name    string
		bend    func(*document.OperationDocument)
		refused bool
	}{
		{"a cluster create", func(*document.OperationDocument) {}, false},
		{"a resource of another partition", func(op *document.OperationDocument) {
			op.PartitionKey = "00000000-0000-0000-0000-000000000001"
		}, true},
		{"a request no handler takes", func(op *document.OperationDocument) {
			op.Properties.Request = document.RequestRevokeCredentials
			op.Properties.ExternalID = nodePoolRID("c1", "np1")
		}, true},
	} {
		for _, projected := range []bool{false, true} {
			op, _ := e.newOp(t, document.RequestCreate, clusterRID("c1"), "", request{})
			tc.bend(op)
			if projected {
				var err error
				if op, err = document.OperationFromProjection(op.AppendProjection(nil)); err != nil {
					t.Fatal(err)
				}
			}
			_, err := e.engine.newJob(op, &document.Resource{})
			if refused := err != nil; refused != tc.refused || (refused && !errors.Is(err, errMalformed)) {
				t.Fatalf("%s (projected %v): newJob: %v; want refused %v", tc.name, projected, err, tc.refused)
			}
			for _, page := range []pageRead{{read: true}, {}} {
				_, err := e.engine.jobFor(context.Background(), op, page)
				if refused := err != nil; refused != tc.refused || (refused && !errors.Is(err, errMalformed)) {
					t.Fatalf("%s (projected %v, read by a page %v): jobFor: %v; want refused %v", tc.name, projected, page.read, err, tc.refused)
				}
			}
		}
	}
}
