package document

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// Seeds beyond testdata/fuzz/: the reference documents themselves.
var fuzzSeedFiles = []string{"operation.json", "cluster.json", "nodepool.json", "externalauth.json"}

// FuzzParseOperationDocument: ParseOperation never panics; whatever it
// accepts renders, reads back, and renders again to the same bytes, and
// create/replace rendering works on it.
func FuzzParseOperationDocument(f *testing.F) {
	for _, name := range fuzzSeedFiles {
		f.Add(readSeed(f, name))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := ParseOperation(raw)
		if err != nil {
			return
		}
		out, err := d.Marshal()
		if err != nil {
			t.Fatalf("accepted document does not render: %v", err)
		}
		back, err := ParseOperation(out)
		if err != nil {
			t.Fatalf("rendered document does not read back: %v\n%s", err, out)
		}
		again, err := back.Marshal()
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("render is not stable: %v\n%s\n%s", err, out, again)
		}
		_ = d.ToStatus()
		_ = d.Name()
		_, _ = d.TargetKind()
		_, _ = d.SubscriptionID()
		if d.checkKeys() != nil {
			return
		}
		if _, err := d.MarshalCreate(); err != nil {
			t.Fatalf("MarshalCreate: %v", err)
		}
		if d.ETag != "" {
			if _, err := d.MarshalReplace(); err != nil {
				t.Fatalf("MarshalReplace: %v", err)
			}
		}
		_, _ = Sniff(raw)
	})
}

// FuzzParseResourceDocument: ParseResource never panics; whatever it
// accepts can be read through every accessor, edited through every setter
// and rendered, and the rendering reads back to the same tree.
func FuzzParseResourceDocument(f *testing.F) {
	for _, name := range fuzzSeedFiles {
		f.Add(readSeed(f, name))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, err := ParseResource(raw)
		if err != nil {
			return
		}
		out, err := r.Marshal()
		if err != nil {
			t.Fatalf("accepted document does not render: %v", err)
		}
		back, err := ParseResource(out)
		if err != nil {
			t.Fatalf("rendered document does not read back: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(back.whole(), r.whole()) {
			t.Fatalf("round trip changed the tree:\n%s", out)
		}
		readAll(r)
		r.SetProvisioningState(arm.ProvisioningStateSucceeded)
		r.SetActiveOperationID("op")
		r.SetClusterServiceID("/api/aro_hcp/v1alpha1/clusters/x")
		r.SetDeletionTimestamp(time.Unix(1, 0))
		r.SetClusterServiceDeletionTimestamp(time.Unix(2, 0))
		r.SetCreateOperationCompletionDeadline(time.Unix(3, 0))
		r.SetDeleteOperationCompletionDeadline(time.Unix(4, 0))
		_ = r.SetPendingClusterServiceID("p")
		_ = r.SetRevokeCredentialsOperationID("o")
		r.ETag = `"e"`
		edited, err := r.MarshalReplace()
		if err != nil {
			t.Fatalf("MarshalReplace: %v", err)
		}
		e, err := ParseResource(edited)
		if err != nil {
			t.Fatalf("edited document does not read back: %v\n%s", err, edited)
		}
		if e.ProvisioningState() != arm.ProvisioningStateSucceeded || e.ActiveOperationID() != "op" {
			t.Fatalf("edit lost: %s", edited)
		}
		readAll(e)
	})
}

func readAll(r *Resource) {
	_, _, _, _ = r.ID(), r.PartitionKey(), r.ResourceID(), r.ResourceType()
	_, _, _, _ = r.InstanceVersion(), r.Name(), r.Location(), r.Tags()
	_, _, _, _ = r.ProvisioningState(), r.ActiveOperationID(), r.ClusterServiceID(), r.PendingClusterServiceID()
	_ = r.RevokeCredentialsOperationID()
	_, _ = r.DeletionTimestamp()
	_, _ = r.ClusterServiceDeletionTimestamp()
	_, _ = r.CreateOperationCompletionDeadline()
	_, _ = r.DeleteOperationCompletionDeadline()
	_ = r.Version()
	_, _ = r.NodeDrainTimeoutMinutes()
	_, _ = r.AuthorizedCIDRs()
	_ = r.ManagedResourceGroup()
	_, _ = r.NodePool()
	_, _ = r.Issuer()
	_ = r.Clone()
}

func readSeed(f testing.TB, name string) []byte {
	f.Helper()
	b, err := readFile(name)
	if err != nil {
		f.Fatal(err)
	}
	return b
}
