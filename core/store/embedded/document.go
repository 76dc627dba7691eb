package embedded

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

// Operation classes kept in the operations index.
const (
	classNone    byte = 0
	classActive  byte = 1 // non-terminal operation
	classPending byte = 2 // terminal operation with a notification still to send
)

// maxTTL is Cosmos DB's largest per-item ttl (int32 seconds).
const maxTTL = math.MaxInt32

// docMeta is what the store needs to know about a document to index it.
type docMeta struct {
	id         string
	ttl        int64 // seconds; 0 or -1 means the document never expires
	deleted    bool
	resourceID string
	class      byte
}

// parseDocument checks a caller's document and strips its system fields.
func parseDocument(body []byte, partitionKey string) (object, docMeta, error) {
	var meta docMeta
	obj, err := parseObject(body)
	if err != nil {
		return nil, meta, fmt.Errorf("%w: document body is not a JSON object: %v", store.ErrInvalid, err)
	}
	for _, name := range systemFields {
		obj.remove(name)
	}
	if meta.id, err = documentID(obj); err != nil {
		return nil, meta, err
	}
	raw, ok := obj.get("partitionKey")
	if pk, err := decodeString(raw); !ok || err != nil || pk != partitionKey {
		if !ok {
			raw = json.RawMessage("undefined")
		}
		return nil, meta, fmt.Errorf("%w: document %s field partitionKey is %s, want %q", store.ErrInvalid, meta.id, raw, store.KeyLabel(partitionKey))
	}
	if raw, ok := obj.get("ttl"); ok {
		if meta.ttl, err = parseTTL(raw); err != nil {
			return nil, meta, fmt.Errorf("%w: document %s: %v", store.ErrInvalid, meta.id, err)
		}
	}
	// Soft-deleted means the member is there at all, null included: lists
	// filter on NOT IS_DEFINED(c.deletionTimestamp), and null is defined.
	_, meta.deleted = obj.get("deletionTimestamp")
	meta.resourceID = stringMember(obj, "resourceID")
	meta.class = classify(obj, meta)
	return obj, meta, nil
}

func documentID(obj object) (string, error) {
	raw, ok := obj.get("id")
	if !ok {
		return "", fmt.Errorf("%w: document has no field id", store.ErrInvalid)
	}
	id, err := decodeString(raw)
	if err != nil {
		return "", fmt.Errorf("%w: document field id is %s, want a string", store.ErrInvalid, raw)
	}
	if err := checkID(id); err != nil {
		return "", err
	}
	return id, nil
}

// checkID applies Cosmos DB's id rules, plus NUL, which the key layout reserves.
func checkID(id string) error {
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

func checkPartitionKey(pk string) error {
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

func stringMember(obj object, key string) string {
	raw, ok := obj.get(key)
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
func classify(obj object, meta docMeta) byte {
	if meta.deleted || meta.resourceID == "" ||
		!strings.EqualFold(stringMember(obj, "resourceType"), arm.OperationResourceType) {
		return classNone
	}
	var props object
	if raw, ok := obj.get("properties"); ok {
		props, _ = splitObject(raw) // validated with obj; not an object: status is undefined
	}
	switch stringMember(props, "status") {
	case string(arm.ProvisioningStateSucceeded), string(arm.ProvisioningStateFailed), string(arm.ProvisioningStateCanceled):
	default:
		return classActive
	}
	if stringMember(props, "notificationUri") != "" {
		return classPending
	}
	return classNone
}

// softDeleteTTL is the ttl ARO-HCP gives a soft-deleted document.
const softDeleteTTL = "30"

// markDeleted applies ARO-HCP's soft delete to a stored document: a
// deletionTimestamp, ttl 30 and a bumped instanceVersion (missing counts as 1).
func markDeleted(obj *object, now time.Time) error {
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
	if raw, ok := meta.get("instanceVersion"); ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &version); err != nil {
			return fmt.Errorf("%w: field properties.cosmosMetadata.instanceVersion is %s, want an integer", store.ErrInvalid, raw)
		}
	}
	meta.set("instanceVersion", json.RawMessage(fmt.Appendf(nil, "%d", version+1)))
	props.set("cosmosMetadata", meta.appendJSON(nil))
	obj.set("properties", props.appendJSON(nil))
	obj.set("deletionTimestamp", ts)
	obj.set("ttl", json.RawMessage(softDeleteTTL))
	return nil
}

// memberObject returns obj[key] as an object; missing or null is empty.
// path names the member in errors.
func memberObject(obj object, key, path string) (object, error) {
	raw, ok := obj.get(key)
	if !ok || string(raw) == "null" {
		return object{}, nil
	}
	sub, err := parseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: field %s is %.40s, want an object", store.ErrInvalid, path, raw)
	}
	return sub, nil
}
