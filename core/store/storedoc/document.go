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

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/store"
)

// systemFields are owned by the store: a caller's values are dropped and the
// store writes its own, as Cosmos DB does.
var systemFields = [...]string{"_rid", "_self", "_etag", "_attachments", "_ts"}

// Class is what a document is to ActiveOperations. Its values are stored
// (the embedded file's operations index), so they never change.
type Class byte

const (
	ClassNone    Class = 0
	ClassActive  Class = 1 // non-terminal operation
	ClassPending Class = 2 // terminal operation with a notification still to send
)

// Wanted says whether q lists a document of class c.
func (c Class) Wanted(q store.ActiveOperationsQuery) bool {
	return c == ClassActive || (q.WithPendingNotification && c == ClassPending)
}

// maxTTL is Cosmos DB's largest per-item ttl (int32 seconds).
const maxTTL = math.MaxInt32

// Meta is what a store needs to know about a document to index it.
type Meta struct {
	ID         string
	TTL        int64 // seconds; 0 or -1 means the document never expires
	Deleted    bool
	ResourceID string
	Class      Class
}

// Parse checks a caller's document for partitionKey and strips its system
// fields; the members alias body.
func Parse(body []byte, partitionKey string) (Object, Meta, error) {
	var meta Meta
	obj, err := ParseObject(body)
	if err != nil {
		return nil, meta, fmt.Errorf("%w: document body is not a JSON object: %v", store.ErrInvalid, err)
	}
	for _, name := range systemFields {
		obj.Remove(name)
	}
	if meta.ID, err = documentID(obj); err != nil {
		return nil, meta, err
	}
	raw, ok := obj.Get("partitionKey")
	if pk, err := decodeString(raw); !ok || err != nil || pk != partitionKey {
		if !ok {
			raw = json.RawMessage("undefined")
		}
		return nil, meta, fmt.Errorf("%w: document %s field partitionKey is %s, want %q", store.ErrInvalid, meta.ID, raw, store.KeyLabel(partitionKey))
	}
	if raw, ok := obj.Get("ttl"); ok {
		if meta.TTL, err = parseTTL(raw); err != nil {
			return nil, meta, fmt.Errorf("%w: document %s: %v", store.ErrInvalid, meta.ID, err)
		}
	}
	// Soft-deleted means the member is there at all, null included: lists
	// filter on NOT IS_DEFINED(c.deletionTimestamp), and null is defined.
	_, meta.Deleted = obj.Get("deletionTimestamp")
	meta.ResourceID = stringMember(obj, "resourceID")
	meta.Class = classify(obj, meta)
	return obj, meta, nil
}

func documentID(obj Object) (string, error) {
	raw, ok := obj.Get("id")
	if !ok {
		return "", fmt.Errorf("%w: document has no field id", store.ErrInvalid)
	}
	id, err := decodeString(raw)
	if err != nil {
		return "", fmt.Errorf("%w: document field id is %s, want a string", store.ErrInvalid, raw)
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

func stringMember(obj Object, key string) string {
	raw, ok := obj.Get(key)
	if !ok {
		return ""
	}
	s, err := decodeString(raw)
	if err != nil {
		return ""
	}
	return s
}

// classify applies ARO-HCP's ListActiveOperations filter:
//
//	STRINGEQUALS(c.resourceType, "Microsoft.RedHatOpenShift/hcpOperationStatuses", true)
//	AND LENGTH(c.resourceID) > 0 AND NOT IS_DEFINED(c.deletionTimestamp)
//	AND NOT ARRAYCONTAINS(["Succeeded","Failed","Canceled"], c.properties.status)
//
// ARRAYCONTAINS always yields a boolean: a missing, null or non-string status
// is simply not in the array, so the NOT is true and such a document counts as
// active. That is also the safe side for the lifecycle: an operation whose
// status is unreadable keeps being polled (and eventually times out) instead
// of being silently forgotten. The comparison is exact, as in Cosmos DB, so
// "succeeded" in lower case is not terminal either.
func classify(obj Object, meta Meta) Class {
	if meta.Deleted || meta.ResourceID == "" ||
		!strings.EqualFold(stringMember(obj, "resourceType"), arm.OperationResourceType) {
		return ClassNone
	}
	var props Object
	if raw, ok := obj.Get("properties"); ok {
		props, _ = splitObject(raw) // validated with obj; not an object: status is undefined
	}
	switch stringMember(props, "status") {
	case string(arm.ProvisioningStateSucceeded), string(arm.ProvisioningStateFailed), string(arm.ProvisioningStateCanceled):
	default:
		return ClassActive
	}
	if stringMember(props, "notificationUri") != "" {
		return ClassPending
	}
	return ClassNone
}

// softDeleteTTL is the ttl ARO-HCP gives a soft-deleted document.
const softDeleteTTL = "30"

// markDeleted applies ARO-HCP's soft delete to a stored document: a
// deletionTimestamp, ttl 30 and a bumped instanceVersion (missing counts as 1).
func markDeleted(obj *Object, now time.Time) error {
	ts, err := json.Marshal(now.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return err
	}
	props, err := memberObject(*obj, "properties", "properties")
	if err != nil {
		return err
	}
	meta, err := memberObject(props, "cosmosMetadata", "properties.cosmosMetadata")
	if err != nil {
		return err
	}
	version := int64(1)
	if raw, ok := meta.Get("instanceVersion"); ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &version); err != nil {
			return fmt.Errorf("%w: field properties.cosmosMetadata.instanceVersion is %s, want an integer", store.ErrInvalid, raw)
		}
	}
	meta.Set("instanceVersion", json.RawMessage(fmt.Appendf(nil, "%d", version+1)))
	props.Set("cosmosMetadata", meta.AppendJSON(nil))
	obj.Set("properties", props.AppendJSON(nil))
	obj.Set("deletionTimestamp", ts)
	obj.Set("ttl", json.RawMessage(softDeleteTTL))
	return nil
}

// memberObject returns obj[key] as an object; missing or null is empty.
// path names the member in errors.
func memberObject(obj Object, key, path string) (Object, error) {
	raw, ok := obj.Get(key)
	if !ok || string(raw) == "null" {
		return Object{}, nil
	}
	sub, err := ParseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: field %s is %.40s, want an object", store.ErrInvalid, path, raw)
	}
	return sub, nil
}

// softDeleted is the stored document body (of partitionKey), soft-deleted
// at now and parsed again for the store to index.
func softDeleted(body []byte, partitionKey string, now time.Time) (Object, Meta, error) {
	obj, err := ParseObject(body)
	if err != nil {
		return nil, Meta{}, fmt.Errorf("stored document: %w", err)
	}
	if err := markDeleted(&obj, now); err != nil {
		return nil, Meta{}, err
	}
	return Parse(obj.AppendJSON(make([]byte, 0, obj.Size()+64)), partitionKey)
}
