package document

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

func TestOperationProjectionIsLossless(t *testing.T) {
	deleted := time.Date(2026, 3, 1, 2, 3, 4, 5, time.FixedZone("x", 3600))
	for _, tc := range []struct {
		name string
		edit func(*OperationDocument)
	}{
		{"as stored", func(*OperationDocument) {}},
		{"cosmosMetadata not the envelope's", func(d *OperationDocument) {
			d.Properties.CosmosMetadata.ResourceID = ""
			d.Properties.CosmosMetadata.PartitionKey = strings.ToUpper(d.PartitionKey)
		}},
		{"credential request, deleted", func(d *OperationDocument) {
			d.DeletionTimestamp = &deleted
			d.Properties.SystemAdminCredentialRequest = &SystemAdminCredentialRequest{CertificateSigningRequest: "csr", SystemAdminCredentialRequestResourceID: "r"}
			d.Properties.SystemAdminCredentialRevocation = &SystemAdminCredentialRevocation{SystemAdminCredentialRevocationResourceID: "v"}
			d.Properties.UsesNewClusterDeletionApproach = true
			d.Properties.Error = &arm.CloudErrorBody{Code: "C", Message: "m", Details: []arm.CloudErrorBody{{Code: "D"}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := os.ReadFile("testdata/operation.json")
			if err != nil {
				t.Fatal(err)
			}
			d, err := ParseOperation(raw)
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(d)
			got, err := OperationFromProjection(d.AppendProjection(nil))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := d.Marshal()
			have, _ := got.Marshal()
			if !bytes.Equal(have, want) {
				t.Fatalf("renders\n%s\nwant\n%s", have, want)
			}
			if got.ETag != d.ETag || got.Timestamp != d.Timestamp || !reflect.DeepEqual(got.Properties.Error, d.Properties.Error) {
				t.Fatalf("etag %q ts %d error %+v; want %q %d %+v", got.ETag, got.Timestamp, got.Properties.Error, d.ETag, d.Timestamp, d.Properties.Error)
			}
		})
	}
}

func TestResourceProjectionAnswersReadsAndRefusesWrites(t *testing.T) {
	for _, file := range []string{"cluster.json", "nodepool.json", "externalauth.json"} {
		t.Run(file, func(t *testing.T) {
			raw, err := os.ReadFile("testdata/" + file)
			if err != nil {
				t.Fatal(err)
			}
			whole, err := ParseResource(raw)
			if err != nil {
				t.Fatal(err)
			}
			p, err := ResourceFromProjection(whole.AppendProjection(nil))
			if err != nil {
				t.Fatal(err)
			}
			if !p.Partial() || whole.Partial() {
				t.Fatalf("Partial: projection %v, parsed %v", p.Partial(), whole.Partial())
			}
			if p.Kind != whole.Kind || p.ETag != whole.ETag || p.Timestamp != whole.Timestamp || !reflect.DeepEqual(p.view(), whole.head) {
				t.Fatalf("projection %+v differs from the parsed head %+v", p.view(), whole.head)
			}
			fresh, err := ResourceFromProjection(whole.AppendProjection(nil)) // read without its tree
			if err != nil {
				t.Fatal(err)
			}
			for name, read := range map[string]func(*Resource) any{
				"PartitionKey":                      func(r *Resource) any { return r.PartitionKey() },
				"ResourceType":                      func(r *Resource) any { return r.ResourceType() },
				"PendingClusterServiceID":           func(r *Resource) any { return r.PendingClusterServiceID() },
				"RevokeCredentialsOperationID":      func(r *Resource) any { return r.RevokeCredentialsOperationID() },
				"DeletionTimestamp":                 func(r *Resource) any { t, ok := r.DeletionTimestamp(); return fmt.Sprint(t, ok) },
				"ClusterServiceDeletionTimestamp":   func(r *Resource) any { t, ok := r.ClusterServiceDeletionTimestamp(); return fmt.Sprint(t, ok) },
				"CreateOperationCompletionDeadline": func(r *Resource) any { t, ok := r.CreateOperationCompletionDeadline(); return fmt.Sprint(t, ok) },
				"DeleteOperationCompletionDeadline": func(r *Resource) any { t, ok := r.DeleteOperationCompletionDeadline(); return fmt.Sprint(t, ok) },
				"PendingClusterServiceIDTime":       func(r *Resource) any { t, ok := r.PendingClusterServiceIDTime(); return fmt.Sprint(t, ok) },
				"Tags":                              func(r *Resource) any { return r.Tags() },
				"ID":                                func(r *Resource) any { return r.ID() }, "ResourceID": func(r *Resource) any { return r.ResourceID() },
				"ProvisioningState": func(r *Resource) any { return r.ProvisioningState() },
				"ActiveOperationID": func(r *Resource) any { return r.ActiveOperationID() },
				"ClusterServiceID":  func(r *Resource) any { return r.ClusterServiceID() },
				"Version":           func(r *Resource) any { return r.Version() },
				"InstanceVersion":   func(r *Resource) any { return r.InstanceVersion() },
			} {
				if a, b := read(p), read(whole); !reflect.DeepEqual(a, b) {
					t.Errorf("%s: projection %v, parsed %v", name, a, b)
				}
				if a, b := read(fresh), read(whole); !reflect.DeepEqual(a, b) {
					t.Errorf("%s: projection before its tree is read %v, parsed %v", name, a, b)
				}
			}
			c := p.Clone()
			c.SetProvisioningState(arm.ProvisioningStateFailed)
			if c.ProvisioningState() != arm.ProvisioningStateFailed || c.ID() != whole.ID() {
				t.Fatalf("a set on a projection's clone reads %q, id %q", c.ProvisioningState(), c.ID())
			}
			if p.ProvisioningState() != whole.ProvisioningState() || !reflect.DeepEqual(p.view(), whole.head) {
				t.Fatalf("a set on a clone changed the projection it was cloned from: %v", p.view())
			}
			if _, err := c.MarshalReplace(); err == nil {
				t.Fatal("MarshalReplace of a projection: no error")
			}
			if _, err := p.ARMBody(p.ResourceID()); err == nil {
				t.Fatal("ARMBody of a projection: no error")
			}
		})
	}
}

func TestDamagedProjectionsAreRefused(t *testing.T) {
	raw, _ := os.ReadFile("testdata/operation.json")
	d, err := ParseOperation(raw)
	if err != nil {
		t.Fatal(err)
	}
	b := d.AppendProjection(nil)
	for _, cut := range []int{0, 1, len(b) / 2, len(b) - 1} {
		if _, err := OperationFromProjection(b[:cut]); err == nil {
			t.Errorf("operation projection cut at %d of %d: no error", cut, len(b))
		}
		if _, err := ResourceFromProjection(b[:cut]); err == nil && cut > 0 {
			t.Errorf("resource read from an operation's projection cut at %d: no error", cut)
		}
	}
}

func TestProjectedTargetKindFollowsExternalID(t *testing.T) {
	raw, _ := os.ReadFile("testdata/operation.json")
	d, err := ParseOperation(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, err := OperationFromProjection(d.AppendProjection(nil))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := d.TargetKind()
	if got, err := p.TargetKind(); got != want || err != nil || p.targetOf == "" {
		t.Fatalf("projected TargetKind = %v, %v (recorded %t), parsed %v", got, err, p.targetOf != "", want)
	}
	p.Properties.ExternalID = "/subscriptions/" + d.PartitionKey + "/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c/nodePools/np"
	if got, err := p.TargetKind(); got != KindNodePool || err != nil {
		t.Fatalf("TargetKind after externalId changed = %v, %v; want the node pool's", got, err)
	}
	p.Properties.ExternalID = "not an id"
	if _, err := p.TargetKind(); err == nil {
		t.Fatal("TargetKind of a bad externalId set after the projection: no error")
	}
}

// TestProjectedTargetDocumentFollowsTheIDs: the target document a
// projection records is what the operation's ids say, and stops being
// believed once either id changes.
func TestProjectedTargetDocumentFollowsTheIDs(t *testing.T) {
	raw, _ := os.ReadFile("testdata/operation.json")
	d, err := ParseOperation(raw)
	if err != nil {
		t.Fatal(err)
	}
	ext := d.Properties.ExternalID
	for _, tc := range []struct {
		name     string
		edit     func(*OperationDocument)
		in       bool
		document string
	}{
		{"as stored", func(*OperationDocument) {}, true, CosmosID(ext)},
		{"upper-case subscription", func(d *OperationDocument) {
			d.Properties.ExternalID = strings.Replace(ext, d.PartitionKey, strings.ToUpper(d.PartitionKey), 1)
		}, true, CosmosID(ext)},
		{"another subscription", func(d *OperationDocument) {
			d.Properties.ExternalID = strings.Replace(ext, d.PartitionKey, "00000000-0000-0000-0000-000000000000", 1)
		}, false, ""},
		{"no partition", func(d *OperationDocument) { d.PartitionKey = "" }, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := d.Clone()
			tc.edit(d)
			if d.TargetInPartition() != tc.in || d.TargetDocument() != tc.document {
				t.Fatalf("parsed: %t %q; want %t %q", d.TargetInPartition(), d.TargetDocument(), tc.in, tc.document)
			}
			p, err := OperationFromProjection(d.AppendProjection(nil))
			if err != nil {
				t.Fatal(err)
			}
			if !p.target.set || p.TargetInPartition() != tc.in || p.TargetDocument() != tc.document {
				t.Fatalf("projected: %t %q (recorded %t); want %t %q", p.TargetInPartition(), p.TargetDocument(), p.target.set, tc.in, tc.document)
			}
			p.Properties.ExternalID = "/subscriptions/" + p.PartitionKey + "/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/other"
			if want := CosmosID(p.Properties.ExternalID); p.PartitionKey != "" && (!p.TargetInPartition() || p.TargetDocument() != want) {
				t.Fatalf("after externalId changed: %t %q; want the other cluster's %q", p.TargetInPartition(), p.TargetDocument(), want)
			}
			p.PartitionKey = "11111111-1111-1111-1111-111111111111"
			if p.TargetInPartition() || p.TargetDocument() != "" {
				t.Fatalf("after partitionKey changed: %t %q; want none", p.TargetInPartition(), p.TargetDocument())
			}
		})
	}
}

// TestOwnedProjectionWritesIntoItsSpareRoom: an owned projection with
// ProjectionRoom to spare past its end reads the same operation with one
// allocation fewer (its packed strings are written there).
func TestOwnedProjectionWritesIntoItsSpareRoom(t *testing.T) {
	raw, _ := os.ReadFile("testdata/operation.json")
	d, err := ParseOperation(raw)
	if err != nil {
		t.Fatal(err)
	}
	proj := d.AppendProjection(nil)
	room := ProjectionRoom(proj)
	exact := func() []byte { return append(make([]byte, 0, len(proj)), proj...) }
	spare := func() []byte { return append(make([]byte, 0, len(proj)+room), proj...) }
	want, _ := d.Marshal()
	for name, buf := range map[string]func() []byte{"exact": exact, "spare": spare} {
		got, err := OperationFromOwnedProjection(buf())
		if err != nil {
			t.Fatal(err)
		}
		if have, _ := got.Marshal(); !bytes.Equal(have, want) {
			t.Errorf("%s: renders\n%s\nwant\n%s", name, have, want)
		}
	}
	var b []byte
	withExact := testing.AllocsPerRun(50, func() { b = exact(); _, _ = OperationFromOwnedProjection(b) })
	withSpare := testing.AllocsPerRun(50, func() { b = spare(); _, _ = OperationFromOwnedProjection(b) })
	if withSpare != withExact-1 {
		t.Errorf("allocations: %v with room to spare, %v without; want one fewer", withSpare, withExact)
	}
}
