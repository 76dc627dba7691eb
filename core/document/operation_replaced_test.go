package document

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// stored renders what a store returns for a written body: the body with
// its system fields appended.
func stored(body []byte, etag string, ts int64) []byte {
	var b bytes.Buffer
	b.Write(bytes.TrimSuffix(bytes.TrimSpace(body), []byte("}")))
	b.WriteString(`,"_rid":"AA==","_self":"dbs/x/","_etag":`)
	b.Write(mustJSON(etag))
	b.WriteString(`,"_attachments":"attachments/","_ts":`)
	b.Write(mustJSON(ts))
	b.WriteString("}")
	return b.Bytes()
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// checkReplaced holds Replaced to ParseOperation of what the store holds.
func checkReplaced(t *testing.T, d *OperationDocument) {
	t.Helper()
	body, err := d.MarshalReplace()
	if err != nil {
		t.Fatalf("MarshalReplace: %v", err)
	}
	before, _ := d.Marshal()
	raw := stored(body, `"new-etag"`, 1795993782)
	want, err := ParseOperation(raw)
	if err != nil {
		t.Fatalf("the store's document does not parse: %v\n%s", err, raw)
	}
	got, err := d.Replaced(raw)
	if err != nil {
		t.Fatalf("Replaced: %v", err)
	}
	gb, _ := got.Marshal()
	wb, _ := want.Marshal()
	if !bytes.Equal(gb, wb) {
		t.Fatalf("Replaced renders\n%s\nParseOperation renders\n%s", gb, wb)
	}
	if got.ETag != want.ETag || got.Timestamp != want.Timestamp || got.TTL != want.TTL {
		t.Fatalf("Replaced etag %q ts %d ttl %d; ParseOperation %q %d %d", got.ETag, got.Timestamp, got.TTL, want.ETag, want.Timestamp, want.TTL)
	}
	if !reflect.DeepEqual(got.Properties.CosmosMetadata, want.Properties.CosmosMetadata) {
		t.Fatalf("cosmosMetadata %+v, want %+v", got.Properties.CosmosMetadata, want.Properties.CosmosMetadata)
	}
	if after, _ := d.Marshal(); !bytes.Equal(before, after) {
		t.Fatal("Replaced modified its receiver")
	}
}

func TestOperationReplaced(t *testing.T) {
	d, err := ParseOperation(readTestdata(t, "operation.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkReplaced(t, d)

	// A status change, as a poll writes it.
	c := d.Clone()
	c.Properties.SetStatus(time.Date(2026, 3, 14, 5, 0, 0, 1, time.FixedZone("x", 3600)), arm.ProvisioningStateSucceeded,
		&arm.CloudErrorBody{Code: "c", Message: "m", Details: []arm.CloudErrorBody{{Code: "d"}}})
	checkReplaced(t, c)

	// A legacy document: cosmosMetadata filled from the envelope on read.
	legacy, err := ParseOperation([]byte(`{"id":"x","partitionKey":"` + refSub + `","resourceID":"` + refOperation + `",
	  "resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","_etag":"\"old\"",
	  "properties":{"request":"Delete","status":"Deleting","startTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z",
	  "extra": [ 1 , 2 ]}}`))
	if err != nil {
		t.Fatal(err)
	}
	checkReplaced(t, legacy)

	if _, err := d.Replaced([]byte(`{"_ts":"soon"}`)); err == nil {
		t.Error("a stored document with a bad _ts accepted")
	}
	if _, err := d.Replaced([]byte(`[]`)); err == nil {
		t.Error("a stored document that is not an object accepted")
	}
}

// FuzzOperationReplaced: for every document ParseOperation accepts and
// MarshalReplace renders, Replaced agrees with parsing what was stored.
func FuzzOperationReplaced(f *testing.F) {
	f.Add(readSeed(f, "operation.json"))
	for _, seed := range corpus(f, "FuzzParseOperationDocument") {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := ParseOperation(raw)
		if err != nil || d.ETag == "" || d.checkKeys() != nil {
			return
		}
		checkReplaced(t, d)
	})
}
