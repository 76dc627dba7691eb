package cosmos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/store"
)

// member is one name/value pair of a JSON object.
type member struct {
	name  string
	value json.RawMessage
}

// object is a JSON object kept in member order with untouched values, so a
// soft delete rewrites three fields and leaves every other byte as it was.
type object []member

func parseObject(data []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want a JSON object, got %v", tok)
	}
	var obj object
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("want a member name, got %v", tok)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, fmt.Errorf("member %q: %w", name, err)
		}
		obj.set(name, value)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON object")
	}
	return obj, nil
}

func (o object) get(name string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.name == name {
			return m.value, true
		}
	}
	return nil, false
}

func (o *object) set(name string, value json.RawMessage) {
	for i := range *o {
		if (*o)[i].name == name {
			(*o)[i].value = value
			return
		}
	}
	*o = append(*o, member{name: name, value: value})
}

func (o object) marshal() []byte {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		name, _ := json.Marshal(m.name) // a string always marshals
		buf.Write(name)
		buf.WriteByte(':')
		buf.Write(m.value)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

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
	obj, err := parseObject(doc)
	if err != nil {
		return "", fmt.Errorf("%w: document body is not a JSON object: %v", store.ErrInvalid, err)
	}
	raw, ok := obj.get("id")
	if !ok {
		return "", fmt.Errorf("%w: document has no field id", store.ErrInvalid)
	}
	var id string
	if err := json.Unmarshal(raw, &id); err != nil {
		return "", fmt.Errorf("%w: document field id is %s, want a string", store.ErrInvalid, raw)
	}
	if err := checkID(id); err != nil {
		return "", err
	}
	raw, ok = obj.get("partitionKey")
	var got string
	if !ok || json.Unmarshal(raw, &got) != nil || got != pk {
		if !ok {
			raw = json.RawMessage("undefined")
		}
		return "", fmt.Errorf("%w: document %s field partitionKey is %s, want %q", store.ErrInvalid, id, raw, store.KeyLabel(pk))
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

// softDeleteTTL is how long ARO-HCP lets a soft-deleted document linger.
const softDeleteTTL = 30

// markDeleted returns body with ARO-HCP's soft-delete fields set:
// deletionTimestamp, ttl 30 and properties.cosmosMetadata.instanceVersion
// bumped (legacy documents without it count as version 1).
func markDeleted(body []byte, now time.Time) ([]byte, error) {
	doc, err := parseObject(body)
	if err != nil {
		return nil, fmt.Errorf("%w: stored document is not a JSON object: %v", store.ErrInvalid, err)
	}
	props, err := childObject(doc, "", "properties")
	if err != nil {
		return nil, err
	}
	metadata, err := childObject(props, "properties.", "cosmosMetadata")
	if err != nil {
		return nil, err
	}
	version := int64(1)
	if raw, ok := metadata.get("instanceVersion"); ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &version); err != nil {
			return nil, fmt.Errorf("%w: field properties.cosmosMetadata.instanceVersion is %s, want an integer", store.ErrInvalid, raw)
		}
	}
	metadata.set("instanceVersion", json.RawMessage(strconv.FormatInt(version+1, 10)))
	props.set("cosmosMetadata", metadata.marshal())
	doc.set("properties", props.marshal())
	stamp, _ := json.Marshal(now.UTC().Format(time.RFC3339Nano))
	doc.set("deletionTimestamp", stamp)
	doc.set("ttl", json.RawMessage(strconv.Itoa(softDeleteTTL)))
	return doc.marshal(), nil
}

// childObject returns the object member name of parent, or an empty object
// when it is absent or null; path prefixes name in errors.
func childObject(parent object, path, name string) (object, error) {
	raw, ok := parent.get(name)
	if !ok || string(raw) == "null" {
		return object{}, nil
	}
	child, err := parseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: field %s%s is %s, want an object", store.ErrInvalid, path, name, raw)
	}
	return child, nil
}
