package embedded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/store"
)

// field is one member of a JSON object. The key stays as written (quoted,
// maybe escaped): written back verbatim, compared without decoding.
type field struct {
	key   []byte
	value json.RawMessage
}

// is reports whether the member's key is name.
func (f field) is(name string) bool {
	k := f.key[1 : len(f.key)-1]
	if bytes.IndexByte(k, '\\') < 0 {
		return string(k) == name
	}
	decoded, err := decodeString(f.key)
	return err == nil && decoded == name
}

// object is a JSON object kept in its original member order with every value
// untouched, so that rewriting one member leaves the rest of a document (most
// of which this project does not model) exactly as the caller wrote it.
type object []field

// parseObject splits a JSON object into its members without decoding the
// values. The members alias data.
func parseObject(data []byte) (object, error) {
	if !json.Valid(data) {
		var v json.RawMessage
		return nil, json.Unmarshal(data, &v) // says what and where
	}
	i := skipSpace(data, 0)
	if data[i] != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", kindOf(data[i]))
	}
	obj := make(object, 0, 8)
	for i = skipSpace(data, i+1); data[i] != '}'; {
		end := skipString(data, i)
		key := data[i:end:end]
		i = skipSpace(data, skipSpace(data, end)+1) // past the colon
		end = skipValue(data, i)
		obj.setField(field{key: key, value: data[i:end:end]})
		if i = skipSpace(data, end); data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return obj, nil
}

// The scanners below run only on input json.Valid has accepted.

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at data[i].
func skipString(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// skipValue returns the index just past the value starting at data[i].
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				j = skipString(data, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(data)
	default: // number, true, false, null
		j := i
		for j < len(data) && !isDelimiter(data[j]) {
			j++
		}
		return j
	}
}

func isDelimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

func kindOf(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// decodeString decodes a JSON string literal, skipping the general decoder
// when there is nothing to unescape.
func decodeString(raw []byte) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw[1:len(raw)-1], '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

func (o object) get(key string) (json.RawMessage, bool) {
	for _, f := range o {
		if f.is(key) {
			return f.value, true
		}
	}
	return nil, false
}

// set replaces key in place, or appends it; a duplicate key in the input thus
// ends up last-wins, as encoding/json reads it.
func (o *object) set(key string, value json.RawMessage) {
	for i := range *o {
		if (*o)[i].is(key) {
			(*o)[i].value = value
			return
		}
	}
	quoted, _ := json.Marshal(key) // a string always marshals
	*o = append(*o, field{key: quoted, value: value})
}

// setField is set for a member just read, whose key may be escaped.
func (o *object) setField(f field) {
	name := f.key[1 : len(f.key)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		decoded, _ := decodeString(f.key) // json.Valid accepted it
		o.set(decoded, f.value)
		return
	}
	for i, e := range *o {
		if bytes.Equal(e.key, f.key) || bytes.IndexByte(e.key, '\\') >= 0 && e.is(string(name)) {
			(*o)[i].value = f.value
			return
		}
	}
	*o = append(*o, f)
}

func (o *object) remove(key string) {
	for i := range *o {
		if (*o)[i].is(key) {
			*o = append((*o)[:i], (*o)[i+1:]...)
			return
		}
	}
}

func (o object) size() int {
	n := 2
	for _, f := range o {
		n += len(f.key) + len(f.value) + 4
	}
	return n
}

func (o object) appendJSON(buf []byte) []byte {
	buf = append(buf, '{')
	for i, f := range o {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, f.key...)
		buf = append(buf, ':')
		buf = append(buf, f.value...)
	}
	return append(buf, '}')
}

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
		return nil, meta, fmt.Errorf("%w: document %s field partitionKey is %s, want %q", store.ErrInvalid, meta.id, raw, partitionKey)
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
	case len(id) > 255:
		return fmt.Errorf("%w: document id %q is longer than 255 bytes", store.ErrInvalid, id)
	case strings.ContainsAny(id, "/\\?#\x00"):
		return fmt.Errorf("%w: document id %q contains one of / \\ ? # or NUL", store.ErrInvalid, id)
	}
	return nil
}

func checkPartitionKey(pk string) error {
	if pk == "" {
		return fmt.Errorf("%w: partition key is empty", store.ErrInvalid)
	}
	if strings.IndexByte(pk, 0) >= 0 {
		return fmt.Errorf("%w: partition key %q contains NUL", store.ErrInvalid, pk)
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
		props, _ = parseObject(raw) // not an object: status is undefined
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
