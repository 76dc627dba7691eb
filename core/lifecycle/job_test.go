package lifecycle

import (
	"context"
	"errors"
	"testing"

	"github.com/hcpops/hcpops/core/document"
)

// TestPageJobRefusesWhatNewJobRefuses: a tick's page makes the jobs its
// polls run (pageJob), so it must make none for an operation newJob
// refuses, whether the operation was parsed or handed out by the view.
func TestPageJobRefusesWhatNewJobRefuses(t *testing.T) {
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
			_, err := e.engine.newJob(context.Background(), op, pageRead{read: true})
			if refused := err != nil; refused != tc.refused || (refused && !errors.Is(err, errMalformed)) {
				t.Fatalf("%s (projected %v): newJob: %v; want refused %v", tc.name, projected, err, tc.refused)
			}
			if got := e.engine.pageJob(op, &document.Resource{}) == nil; got != tc.refused {
				t.Fatalf("%s (projected %v): pageJob refused it: %v; want %v", tc.name, projected, got, tc.refused)
			}
		}
	}
}
