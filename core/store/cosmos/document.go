package cosmos

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// checkID applies Cosmos DB's id rules up front so a bad id is a clear
// ErrInvalid rather than an opaque 400 from the service.
func checkID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: id is empty", store.ErrInvalid)
	case len(id) > store.MaxIDBytes:
		return fmt.Errorf("%w: id of %d bytes is longer than %d bytes", store.ErrInvalid, len(id), store.MaxIDBytes)
	case strings.ContainsAny(id, `/\?#`):
		return fmt.Errorf("%w: id %q contains one of / \\ ? #", store.ErrInvalid, id)
	}
	return nil
}

func checkPartitionKey(pk string) error {
	if pk == "" {
		return fmt.Errorf("%w: partition key is empty", store.ErrInvalid)
	}
	return store.CheckPartitionKeySize(pk)
}

// checkDocument validates a caller's document for partition pk and returns
// its id. Cosmos would reject a document whose partitionKey field disagrees
// with the request's partition key; catching it here names the field.
func checkDocument(doc []byte, pk string) (string, error) {
	if err := checkPartitionKey(pk); err != nil {
		return "", err
	}
	// The service would answer 413; refusing here names the document.
	if err := store.CheckDocumentSize(doc); err != nil {
		return "", err
	}
	obj, err := document.ParseObject(doc)
	if err != nil {
		return "", fmt.Errorf("%w: document body is not a JSON object: %v", store.ErrInvalid, err)
	}
	id, err := obj.StringMember("id")
	if err != nil {
		return "", fmt.Errorf("%w: document %v", store.ErrInvalid, err)
	}
	if err := checkID(id); err != nil {
		return "", err
	}
	if got, ok := obj.GetString("partitionKey"); !ok || got != pk {
		return "", fmt.Errorf("%w: document %s field partitionKey is %s, want %q", store.ErrInvalid, id, obj.Describe("partitionKey"), store.KeyLabel(pk))
	}
	return id, nil
}

// meta is what the store reads back from a stored document.
type meta struct {
	ID           string          `json:"id"`
	PartitionKey string          `json:"partitionKey"`
	ETag         string          `json:"_etag"`
	TS           int64           `json:"_ts"`
	TTL          json.RawMessage `json:"ttl"`
	Deleted      json.RawMessage `json:"deletionTimestamp"`
}

func readMeta(body []byte) (meta, error) {
	var m meta
	if err := json.Unmarshal(body, &m); err != nil {
		return m, fmt.Errorf("decoding stored document: %w", err)
	}
	return m, nil
}

// visible reports whether a stored document is live: neither soft-deleted
// nor expired.
func (m meta) visible(now time.Time) bool {
	return m.Deleted == nil && !m.expired(now)
}

// expired reports whether the document's ttl has run out at now. Cosmos DB
// hides such items before it gets round to removing them, and so does the
// store, which also lets a fake clock drive expiry in tests.
func (m meta) expired(now time.Time) bool {
	if m.TTL == nil || m.TS == 0 {
		return false
	}
	ttl, err := strconv.ParseInt(string(m.TTL), 10, 64)
	if err != nil || ttl <= 0 {
		return false
	}
	return m.TS+ttl <= now.Unix()
}

// markDeleted returns body with ARO-HCP's soft delete applied
// (document.Object.MarkDeleted), every other member as it was.
func markDeleted(body []byte, now time.Time) ([]byte, error) {
	doc, err := document.ParseObject(body)
	if err != nil {
		return nil, fmt.Errorf("%w: stored document is not a JSON object: %v", store.ErrInvalid, err)
	}
	if err := doc.MarkDeleted(now); err != nil {
		return nil, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	return doc.AppendJSON(make([]byte, 0, doc.Size()+64)), nil
}
