package document

import (
	"bytes"
	"encoding/json/jsontext"
	jsonv2 "encoding/json/v2"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
)

// The one-model alternative, measured: a cluster document as a typed view
// in encoding/json/v2 that keeps every member it does not model as raw
// bytes (`json:",embed"` over jsontext.Value), the shape the operation
// document would share. BenchmarkTypedView* run the poll's two resource
// steps on it beside BenchmarkParseResource and
// BenchmarkResourceStatusWrite on the tree; docs/decisions/document-model.md
// has the numbers and why the tree stays.

// Presence matters for every modelled member: a member absent must stay
// absent, one present and empty ("provisioningState": "" on external
// auths) must stay present, so each is a pointer with omitzero.
type typedCluster struct {
	ID           string           `json:"id"`
	PartitionKey string           `json:"partitionKey"`
	ResourceID   string           `json:"resourceID"`
	ResourceType string           `json:"resourceType"`
	ETag         string           `json:"_etag,omitzero"`
	TS           int64            `json:"_ts,omitzero"`
	Properties   typedClusterProp `json:"properties"`
	Unknown      jsontext.Value   `json:",embed"`
}

type typedClusterProp struct {
	CosmosMetadata *typedCosmosMetadata `json:"cosmosMetadata,omitzero"`
	Name           *string              `json:"name,omitzero"`
	Location       *string              `json:"location,omitzero"`
	Tags           map[string]string    `json:"tags,omitzero"`
	Customer       *typedCustomer       `json:"customerProperties,omitzero"`
	SPP            *typedSPP            `json:"serviceProviderProperties,omitzero"`
	Unknown        jsontext.Value       `json:",embed"`
}

type typedCosmosMetadata struct {
	ResourceID      *string        `json:"resourceID,omitzero"`
	ETag            *string        `json:"etag,omitzero"`
	InstanceVersion *int64         `json:"instanceVersion,omitzero"`
	PartitionKey    *string        `json:"partitionKey,omitzero"`
	Unknown         jsontext.Value `json:",embed"`
}

type typedCustomer struct {
	Version *struct {
		ID           *string        `json:"id,omitzero"`
		ChannelGroup *string        `json:"channelGroup,omitzero"`
		Unknown      jsontext.Value `json:",embed"`
	} `json:"version,omitzero"`
	NodeDrainTimeoutMinutes *int64 `json:"nodeDrainTimeoutMinutes,omitzero"`
	API                     *struct {
		AuthorizedCIDRs []string       `json:"authorizedCidrs,omitzero"`
		Unknown         jsontext.Value `json:",embed"`
	} `json:"api,omitzero"`
	Platform *struct {
		ManagedResourceGroup *string        `json:"managedResourceGroup,omitzero"`
		Unknown              jsontext.Value `json:",embed"`
	} `json:"platform,omitzero"`
	Unknown jsontext.Value `json:",embed"`
}

type typedSPP struct {
	ProvisioningState                 *string        `json:"provisioningState,omitzero"`
	ActiveOperationID                 *string        `json:"activeOperationId,omitzero"`
	ClusterServiceID                  *string        `json:"clusterServiceID,omitzero"`
	PendingClusterServiceID           *string        `json:"pendingClusterServiceID,omitzero"`
	PendingClusterServiceIDTime       *string        `json:"pendingClusterServiceIDTime,omitzero"`
	RevokeCredentialsOperationID      *string        `json:"revokeCredentialsOperationId,omitzero"`
	DeletionTimestamp                 *string        `json:"deletionTimestamp,omitzero"`
	ClusterServiceDeletionTimestamp   *string        `json:"clusterServiceDeletionTimestamp,omitzero"`
	CreateOperationCompletionDeadline *string        `json:"createOperationCompletionDeadline,omitzero"`
	DeleteOperationCompletionDeadline *string        `json:"deleteOperationCompletionDeadline,omitzero"`
	Unknown                           jsontext.Value `json:",embed"`
}

// typedOptions accept what the tree accepts (encoding/json's rules).
var typedOptions = jsonv2.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

func parseTyped(raw []byte) (*typedCluster, error) {
	var c typedCluster
	if err := jsonv2.Unmarshal(raw, &c, typedOptions); err != nil {
		return nil, err
	}
	return &c, nil
}

func strOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TestTypedViewKeepsUnknownMembers: the prototype is honest: it reads what
// the tree reads and writes every member it does not model back with the
// meaning it read (numbers as their literal; strings re-escaped as v2
// escapes them).
func TestTypedViewKeepsUnknownMembers(t *testing.T) {
	raw := readSeed(t, "cluster.json")
	c, err := parseTyped(raw)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseResource(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := strOf(c.Properties.SPP.ClusterServiceID); got != r.ClusterServiceID() {
		t.Errorf("clusterServiceID %q, the tree reads %q", got, r.ClusterServiceID())
	}
	out, err := jsonv2.Marshal(c, typedOptions)
	if err != nil {
		t.Fatal(err)
	}
	for _, member := range []string{`"someFutureCustomerField":{"depth":{"deeper":[null,true,0.1e-7,123456789012345678901234567890]}}`,
		`"aFieldCosmosWillNeverSee":"<escaped> & <raw> é 😀"`} {
		if !bytes.Contains(out, []byte(member)) {
			t.Errorf("typed view lost %s:\n%s", member, out)
		}
	}
}

func BenchmarkTypedViewParse(b *testing.B) {
	raw := readSeed(b, "cluster.json")
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		c, err := parseTyped(raw)
		if err != nil {
			b.Fatal(err)
		}
		_ = strOf(c.Properties.SPP.ProvisioningState)
		_ = strOf(c.Properties.SPP.ActiveOperationID)
		_ = strOf(c.Properties.SPP.ClusterServiceID)
	}
}

func BenchmarkTypedViewStatusWrite(b *testing.B) {
	raw := readSeed(b, "cluster.json")
	c, err := parseTyped(raw)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		// A clone shares the raw unknown members (never written in place)
		// and copies the few modelled ones a write changes.
		w := *c
		spp := *c.Properties.SPP
		w.Properties.SPP = &spp
		cm := *c.Properties.CosmosMetadata
		w.Properties.CosmosMetadata = &cm
		state := string(arm.ProvisioningStateSucceeded)
		spp.ProvisioningState = &state
		v := *cm.InstanceVersion + 1
		cm.InstanceVersion = &v
		cm.ETag = &w.ETag
		w.ETag, w.TS = "", 0
		if _, err := jsonv2.Marshal(&w, typedOptions); err != nil {
			b.Fatal(err)
		}
	}
}
