// Package storedoc is a document as the stores that keep their own
// documents (embedded, memory) hold it: a caller's JSON checked against
// Cosmos DB's rules, read for what the store indexes (id, ttl, soft delete,
// resourceID, whether it is an active operation), soft-deleted as ARO-HCP
// does, and stamped with the system fields; and the rules of writing it
// (conflict, If-Match, batch steps), run on a store's Txn, with the checks
// of each call's arguments. The two stores share it so they cannot drift
// apart on what the contract suite does not spell out.
package storedoc

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// systemFields are owned by the store: a caller's values are dropped and the
// store writes its own, as Cosmos DB does.
var systemFields = [...]string{"_rid", "_self", "_etag", "_attachments", "_ts"}

// maxTTL is Cosmos DB's largest per-item ttl (int32 seconds).
const maxTTL = math.MaxInt32

// Meta is what a store needs to know about a document to index it.
type Meta struct {
	ID         string
	TTL        int64 // seconds; 0 or -1 means the document never expires
	Deleted    bool
	ResourceID string
	Class      document.Class
}

// Parse checks a caller's document for partitionKey and strips its system
// fields; the members alias body.
func Parse(body []byte, partitionKey string) (document.Object, Meta, error) {
	var meta Meta
	obj, err := document.ParseObject(body)
	if err != nil {
		return nil, meta, fmt.Errorf("%w: document body is not a JSON object: %v", store.ErrInvalid, err)
	}
	for _, name := range systemFields {
		obj.Remove(name)
	}
	if meta.ID, err = documentID(obj); err != nil {
		return nil, meta, err
	}
	if pk, ok := obj.GetString("partitionKey"); !ok || pk != partitionKey {
		return nil, meta, fmt.Errorf("%w: document %s field partitionKey is %s, want %q", store.ErrInvalid, meta.ID, obj.Describe("partitionKey"), store.KeyLabel(partitionKey))
	}
	if raw, ok := obj.Get("ttl"); ok {
		if meta.TTL, err = parseTTL(raw); err != nil {
			return nil, meta, fmt.Errorf("%w: document %s: %v", store.ErrInvalid, meta.ID, err)
		}
	}
	// Soft-deleted means the member is there at all, null included: lists
	// filter on NOT IS_DEFINED(c.deletionTimestamp), and null is defined.
	_, meta.Deleted = obj.Get("deletionTimestamp")
	meta.ResourceID, _ = obj.GetString("resourceID")
	meta.Class = document.ClassifyObject(obj)
	return obj, meta, nil
}

func documentID(obj document.Object) (string, error) {
	id, err := obj.StringMember("id")
	if err != nil {
		return "", fmt.Errorf("%w: document %v", store.ErrInvalid, err)
	}
	if err := CheckID(id); err != nil {
		return "", err
	}
	return id, nil
}

// CheckID applies Cosmos DB's id rules, plus NUL, which the key layout reserves.
func CheckID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: document id is empty", store.ErrInvalid)
	case len(id) > store.MaxIDBytes:
		return fmt.Errorf("%w: document id of %d bytes is longer than %d bytes", store.ErrInvalid, len(id), store.MaxIDBytes)
	case strings.ContainsAny(id, "/\\?#\x00"):
		return fmt.Errorf("%w: document id %q contains one of / \\ ? # or NUL", store.ErrInvalid, id)
	}
	return nil
}

// CheckPartitionKey refuses what no store takes as a partition key: empty,
// over Cosmos DB's limit, or holding NUL (the embedded key layout's
// separator).
func CheckPartitionKey(pk string) error {
	if pk == "" {
		return fmt.Errorf("%w: partition key is empty", store.ErrInvalid)
	}
	if err := store.CheckPartitionKeySize(pk); err != nil {
		return err
	}
	if strings.IndexByte(pk, 0) >= 0 {
		return fmt.Errorf("%w: partition key %q contains NUL", store.ErrInvalid, store.KeyLabel(pk))
	}
	return nil
}

// parseTTL accepts what Cosmos DB accepts: null (no ttl), -1 (never) or a
// positive whole number of seconds.
func parseTTL(raw json.RawMessage) (int64, error) {
	if string(raw) == "null" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || f == 0 || f < -1 || f > maxTTL {
		return 0, fmt.Errorf("field ttl is %s, want -1 or a whole number of seconds from 1 to %d", raw, maxTTL)
	}
	return int64(f), nil
}

// softDeleted is the stored document body (of partitionKey), soft-deleted
// at now and parsed again for the store to index.
func softDeleted(body []byte, partitionKey string, now time.Time) (document.Object, Meta, error) {
	obj, err := document.ParseObject(body)
	if err != nil {
		return nil, Meta{}, fmt.Errorf("stored document: %w", err)
	}
	if err := obj.MarkDeleted(now); err != nil {
		return nil, Meta{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	return Parse(obj.AppendJSON(make([]byte, 0, obj.Size()+64)), partitionKey)
}
