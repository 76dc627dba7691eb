package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// tree is a JSON object decoded with UseNumber, so numbers keep their
// literal text and every member survives a rewrite in meaning.
type tree = map[string]any

// decodeTree decodes raw as one JSON object with numbers kept as
// json.Number; trailing data is an error.
func decodeTree(what string, raw []byte) (tree, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: not valid JSON: %w", what, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: trailing data after the JSON object", what)
	}
	t, ok := v.(tree)
	if !ok {
		return nil, fmt.Errorf("%s: is %s, want a JSON object", what, jsonKind(v))
	}
	return t, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case tree:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// fieldType is what a member the lifecycle reads must hold when present.
type fieldType int

const (
	tObject fieldType = iota
	tString
	tState
	tTime
	tInt
	tBool
	tStringList
	tStringMap
)

// lookup walks path; ok is false when a member is missing (or null) on
// the way.
func lookup(t tree, path []string) (any, bool) {
	var cur any = t
	for _, k := range path {
		obj, ok := cur.(tree)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[k]; !ok {
			return nil, false
		}
	}
	if cur == nil {
		return nil, false
	}
	return cur, true
}

// check verifies the member at path, if present, holds what ft says.
func check(t tree, path []string, ft fieldType) error {
	v, ok := lookup(t, path)
	if !ok {
		return nil
	}
	// Joined only for an error: a parse checks some thirty members.
	field := func() string { return strings.Join(path, ".") }
	bad := func(want string) error {
		return fmt.Errorf("%s: %s is %s, want %s", field(), clipValue(v), jsonKind(v), want)
	}
	switch ft {
	case tObject:
		if _, ok := v.(tree); !ok {
			return bad("an object")
		}
	case tString:
		if _, ok := v.(string); !ok {
			return bad("a string")
		}
	case tState:
		s, ok := v.(string)
		if !ok {
			return bad("a string")
		}
		if s == "" { // external auths always write it, even empty
			return nil
		}
		if _, err := parseProvisioningState("", s); err != nil {
			return fmt.Errorf("%s: %q is not a provisioning state", field(), s)
		}
	case tTime:
		s, ok := v.(string)
		if !ok {
			return bad("an RFC 3339 time")
		}
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return fmt.Errorf("%s: %q is not an RFC 3339 time", field(), s)
		}
	case tInt:
		n, ok := v.(json.Number)
		if !ok {
			return bad("an integer")
		}
		if _, err := n.Int64(); err != nil {
			return fmt.Errorf("%s: %s is not an integer", field(), n)
		}
	case tBool:
		if _, ok := v.(bool); !ok {
			return bad("a boolean")
		}
	case tStringList:
		l, ok := v.([]any)
		if !ok {
			return bad("an array of strings")
		}
		for i, e := range l {
			if _, ok := e.(string); !ok {
				return fmt.Errorf("%s[%d]: %s is %s, want a string", field(), i, clipValue(e), jsonKind(e))
			}
		}
	case tStringMap:
		m, ok := v.(tree)
		if !ok {
			return bad("an object of strings")
		}
		for k, e := range m {
			if _, ok := e.(string); !ok {
				return fmt.Errorf("%s.%s: %s is %s, want a string", field(), k, clipValue(e), jsonKind(e))
			}
		}
	}
	return nil
}

func clipValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return clip(b)
}

// The getters below assume check has passed for the path.

func getString(t tree, path []string) string {
	s, _ := lookupAs[string](t, path)
	return s
}

func getTime(t tree, path []string) (time.Time, bool) {
	s, ok := lookupAs[string](t, path)
	if !ok {
		return time.Time{}, false
	}
	ts, err := time.Parse(time.RFC3339, s)
	return ts, err == nil
}

func getInt(t tree, path []string) (int64, bool) {
	n, ok := lookupAs[json.Number](t, path)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

func getBool(t tree, path []string) (bool, bool) {
	return lookupAs[bool](t, path)
}

func getStringList(t tree, path []string) ([]string, bool) {
	l, ok := lookupAs[[]any](t, path)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out, true
}

func getStringMap(t tree, path []string) (map[string]string, bool) {
	m, ok := lookupAs[tree](t, path)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		if s, ok := e.(string); ok {
			out[k] = s
		}
	}
	return out, true
}

func lookupAs[T any](t tree, path []string) (T, bool) {
	v, ok := lookup(t, path)
	if !ok {
		var zero T
		return zero, false
	}
	x, ok := v.(T)
	return x, ok
}

// set stores v at path, creating (or replacing null) objects on the way.
// check has established that existing members on the way are objects.
func set(t tree, path []string, v any) {
	cur := t
	for _, k := range path[:len(path)-1] {
		next, ok := cur[k].(tree)
		if !ok {
			next = tree{}
			cur[k] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = v
}

// unset removes the member at path, if present.
func unset(t tree, path []string) {
	parent, ok := lookupAs[tree](t, path[:len(path)-1])
	if !ok {
		return
	}
	delete(parent, path[len(path)-1])
}

// shallow copies one level, so a write can edit the path it changes
// without touching the tree it was read from.
func shallow(t tree) tree {
	c := make(tree, len(t)+2)
	for k, v := range t {
		c[k] = v
	}
	return c
}

// deepCopy copies every object and array, so a clone shares no maps
// with its original.
func deepCopy(v any) any {
	switch x := v.(type) {
	case tree:
		c := make(tree, len(x))
		for k, e := range x {
			c[k] = deepCopy(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = deepCopy(e)
		}
		return c
	}
	return v
}
