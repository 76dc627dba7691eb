package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
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

// Object is a JSON object kept in its original member order with every value
// untouched, so that rewriting one member leaves the rest of a document (most
// of which this project does not model) exactly as the caller wrote it. It is
// what the stores edit (a soft delete) and index (Classify) a document with;
// Resource and OperationDocument are the lifecycle's typed views.
type Object []field

// ParseObject splits a JSON object into its members without decoding the
// values. The members alias data.
func ParseObject(data []byte) (Object, error) {
	if !json.Valid(data) {
		var v json.RawMessage
		return nil, json.Unmarshal(data, &v) // says what and where
	}
	return splitObject(data)
}

// splitObject is ParseObject for data already known to be valid JSON (a
// member of a validated document): validating it again cost a write as much
// as the rest of its parsing.
func splitObject(data []byte) (Object, error) {
	i := skipSpace(data, 0)
	if data[i] != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", kindOf(data[i]))
	}
	obj := make(Object, 0, 8)
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

// Get returns the member key as written (the last of a repeated name).
func (o Object) Get(key string) (json.RawMessage, bool) {
	for _, f := range o {
		if f.is(key) {
			return f.value, true
		}
	}
	return nil, false
}

// GetString returns the member key decoded; ok is false when it is
// missing or not a JSON string.
func (o Object) GetString(key string) (string, bool) {
	raw, ok := o.Get(key)
	if !ok {
		return "", false
	}
	s, err := decodeString(raw)
	return s, err == nil
}

// StringMember is GetString with an error that names the member: it is
// missing ("has no field id"), or what it holds instead.
func (o Object) StringMember(key string) (string, error) {
	raw, ok := o.Get(key)
	if !ok {
		return "", fmt.Errorf("has no field %s", key)
	}
	s, err := decodeString(raw)
	if err != nil {
		return "", fmt.Errorf("field %s is %s, want a string", key, raw)
	}
	return s, nil
}

// Describe is the member key as written, or undefined (as Cosmos DB says)
// when it is missing: for an error.
func (o Object) Describe(key string) string {
	if raw, ok := o.Get(key); ok {
		return string(raw)
	}
	return "undefined"
}

// Set replaces key in place, or appends it; a duplicate key in the input thus
// ends up last-wins, as encoding/json reads it.
func (o *Object) Set(key string, value json.RawMessage) {
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
func (o *Object) setField(f field) {
	name := f.key[1 : len(f.key)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		decoded, _ := decodeString(f.key) // json.Valid accepted it
		o.Set(decoded, f.value)
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

// Remove drops the member key, if present.
func (o *Object) Remove(key string) {
	for i := range *o {
		if (*o)[i].is(key) {
			*o = append((*o)[:i], (*o)[i+1:]...)
			return
		}
	}
}

// Size is about how long AppendJSON's rendering is.
func (o Object) Size() int {
	n := 2
	for _, f := range o {
		n += len(f.key) + len(f.value) + 4
	}
	return n
}

// AppendJSON appends the object, compact between members, to buf.
func (o Object) AppendJSON(buf []byte) []byte {
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

// SoftDeleteTTL is the ttl, in seconds, ARO-HCP gives a soft-deleted
// document.
const SoftDeleteTTL = 30

// MarkDeleted applies ARO-HCP's soft delete to a stored document, every
// other member untouched: a deletionTimestamp (now), ttl SoftDeleteTTL and
// properties.cosmosMetadata.instanceVersion bumped (missing or null counts
// as 1). An error names the member that holds what the edit cannot take.
func (o *Object) MarkDeleted(now time.Time) error {
	props, err := o.memberObject("properties", "properties")
	if err != nil {
		return err
	}
	meta, err := props.memberObject("cosmosMetadata", "properties.cosmosMetadata")
	if err != nil {
		return err
	}
	version := int64(1)
	if raw, ok := meta.Get("instanceVersion"); ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &version); err != nil {
			return fmt.Errorf("field properties.cosmosMetadata.instanceVersion is %s, want an integer", raw)
		}
	}
	ts, _ := json.Marshal(now.UTC().Format(time.RFC3339Nano)) // a string always marshals
	meta.Set("instanceVersion", strconv.AppendInt(nil, version+1, 10))
	props.Set("cosmosMetadata", meta.AppendJSON(nil))
	o.Set("properties", props.AppendJSON(nil))
	o.Set("deletionTimestamp", ts)
	o.Set("ttl", strconv.AppendInt(nil, SoftDeleteTTL, 10))
	return nil
}

// memberObject returns the member key as an object; missing or null is
// empty. path names the member in errors.
func (o Object) memberObject(key, path string) (Object, error) {
	raw, ok := o.Get(key)
	if !ok || string(raw) == "null" {
		return Object{}, nil
	}
	sub, err := ParseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("field %s is %.40s, want an object", path, raw)
	}
	return sub, nil
}
