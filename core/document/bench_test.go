package document

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// The parses and writes a poll makes, on the reference documents.

func BenchmarkParseOperation(b *testing.B) {
	raw := readSeed(b, "operation.json")
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseOperation(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseResource(b *testing.B) {
	raw := readSeed(b, "cluster.json")
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := ParseResource(raw)
		if err != nil {
			b.Fatal(err)
		}
		_ = r.ProvisioningState()
		_ = r.ActiveOperationID()
		_ = r.ClusterServiceID()
	}
}

// BenchmarkResourceStatusWrite is a poll's resource write: clone, set the
// state, render for a replace.
func BenchmarkResourceStatusWrite(b *testing.B) {
	r, err := ParseResource(readSeed(b, "cluster.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		c := r.Clone()
		c.SetProvisioningState(arm.ProvisioningStateSucceeded)
		if _, err := c.MarshalReplace(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOperationStatusWrite is a poll's operation write: clone, set
// the status, render for a replace.
func BenchmarkOperationStatusWrite(b *testing.B) {
	d, err := ParseOperation(readSeed(b, "operation.json"))
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 3, 14, 5, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		c := d.Clone()
		c.Properties.SetStatus(now, arm.ProvisioningStateSucceeded, nil)
		if _, err := c.MarshalReplace(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFromProjection measures what a tick spends per operation to
// get its operation and resource back from the view's projections.
func BenchmarkFromProjection(b *testing.B) {
	rawOp, err := os.ReadFile("testdata/operation.json")
	if err != nil {
		b.Fatal(err)
	}
	rawRes, err := os.ReadFile("testdata/cluster.json")
	if err != nil {
		b.Fatal(err)
	}
	op, err := ParseOperation(rawOp)
	if err != nil {
		b.Fatal(err)
	}
	res, err := ParseResource(rawRes)
	if err != nil {
		b.Fatal(err)
	}
	opProj, resProj := op.AppendProjection(nil), res.AppendProjection(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := OperationFromProjection(opProj); err != nil {
			b.Fatal(err)
		}
		if _, err := ResourceFromProjection(resProj); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFromOwnedProjection is BenchmarkFromProjection as an unchanged
// tick meets it: an operation in flight (no error yet) and its cluster,
// each decoded into a buffer of its own (the view's codec.decode).
func BenchmarkFromOwnedProjection(b *testing.B) {
	rawOp, err := os.ReadFile("testdata/operation.json")
	if err != nil {
		b.Fatal(err)
	}
	rawRes, err := os.ReadFile("testdata/cluster.json")
	if err != nil {
		b.Fatal(err)
	}
	op, err := ParseOperation(rawOp)
	if err != nil {
		b.Fatal(err)
	}
	op.Properties.Status, op.Properties.Error = arm.ProvisioningStateProvisioning, nil
	res, err := ParseResource(rawRes)
	if err != nil {
		b.Fatal(err)
	}
	opProj, resProj := op.AppendProjection(nil), res.AppendProjection(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := OperationFromOwnedProjection(bytes.Clone(opProj)); err != nil {
			b.Fatal(err)
		}
		if _, err := ResourceFromOwnedProjection(bytes.Clone(resProj)); err != nil {
			b.Fatal(err)
		}
	}
}
