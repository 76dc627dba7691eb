package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"time"
	"unsafe"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
)

// The snapshot codec turns the simulator's state structs into JSON by
// reflection, unexported fields included, so a field added to an object
// struct is kept across a restart without a hand-written copy. SDK objects
// (which hide their fields) go through the SDK's own JSON, time.Time as
// RFC 3339; locks are skipped. A kind it cannot keep (func, chan,
// interface) is an error naming the field, so a test meets it, not a run.

// sdkCodec is the JSON of one SDK object type.
type sdkCodec struct {
	marshal   func(v reflect.Value, w io.Writer) error
	unmarshal func(data []byte) (reflect.Value, error)
}

func codecOf[T any](marshal func(T, io.Writer) error, unmarshal func(any) (T, error)) sdkCodec {
	return sdkCodec{
		marshal: func(v reflect.Value, w io.Writer) error { return marshal(v.Interface().(T), w) },
		unmarshal: func(data []byte) (reflect.Value, error) {
			obj, err := unmarshal(data)
			return reflect.ValueOf(obj), err
		},
	}
}

// sdkCodecs are the SDK types the simulator keeps, or may keep, in its
// objects.
var sdkCodecs = map[reflect.Type]sdkCodec{
	reflect.TypeFor[*arohcp.Cluster]():                   codecOf(arohcp.MarshalCluster, arohcp.UnmarshalCluster),
	reflect.TypeFor[*arohcp.NodePool]():                  codecOf(arohcp.MarshalNodePool, arohcp.UnmarshalNodePool),
	reflect.TypeFor[*arohcp.ExternalAuth]():              codecOf(arohcp.MarshalExternalAuth, arohcp.UnmarshalExternalAuth),
	reflect.TypeFor[*arohcp.Version]():                   codecOf(arohcp.MarshalVersion, arohcp.UnmarshalVersion),
	reflect.TypeFor[*arohcp.ControlPlaneUpgradePolicy](): codecOf(arohcp.MarshalControlPlaneUpgradePolicy, arohcp.UnmarshalControlPlaneUpgradePolicy),
	reflect.TypeFor[*arohcp.NodePoolUpgradePolicy]():     codecOf(arohcp.MarshalNodePoolUpgradePolicy, arohcp.UnmarshalNodePoolUpgradePolicy),
}

var timeType = reflect.TypeFor[time.Time]()

// skipped types hold no state worth keeping: a restored lock is unlocked.
func skipped(t reflect.Type) bool { return t.PkgPath() == "sync" }

// usable makes a struct field (exported or not) of an addressable struct
// readable and settable.
func usable(v reflect.Value) reflect.Value {
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// encodeValue renders v (addressable) as JSON; path names it in errors.
func encodeValue(v reflect.Value, path string) (json.RawMessage, error) {
	t := v.Type()
	if c, ok := sdkCodecs[t]; ok {
		if v.IsNil() {
			return json.RawMessage("null"), nil
		}
		var buf bytes.Buffer
		if err := c.marshal(v, &buf); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return buf.Bytes(), nil
	}
	if t == timeType {
		return json.Marshal(v.Interface())
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return json.Marshal(v.Interface())
	case reflect.Pointer:
		if v.IsNil() {
			return json.RawMessage("null"), nil
		}
		return encodeValue(v.Elem(), path)
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && v.IsNil() {
			return json.RawMessage("null"), nil
		}
		items := make([]json.RawMessage, v.Len())
		for i := range items {
			var err error
			if items[i], err = encodeValue(addressable(v.Index(i)), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return nil, err
			}
		}
		return json.Marshal(items)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s: map key %s: only string keys are kept", path, t.Key())
		}
		out := make(map[string]json.RawMessage, v.Len())
		for it := v.MapRange(); it.Next(); {
			k := it.Key().String()
			raw, err := encodeValue(addressable(it.Value()), path+"["+k+"]")
			if err != nil {
				return nil, err
			}
			out[k] = raw
		}
		return json.Marshal(out)
	case reflect.Struct:
		out := map[string]json.RawMessage{}
		for i := range t.NumField() {
			f := t.Field(i)
			if skipped(f.Type) {
				continue
			}
			raw, err := encodeValue(usable(v.Field(i)), path+"."+f.Name)
			if err != nil {
				return nil, err
			}
			out[f.Name] = raw
		}
		return json.Marshal(out)
	}
	return nil, fmt.Errorf("%s: a %s cannot be kept in a snapshot", path, t)
}

// addressable copies a map value or an element of a non-addressable
// sequence so its fields can be read.
func addressable(v reflect.Value) reflect.Value {
	if v.CanAddr() {
		return v
	}
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	return c
}

// decodeValue sets v (addressable, settable) from raw. Maps are never left
// nil (the simulator writes into them); fields the snapshot lacks keep
// their zero value, and fields it has that v lacks are ignored, so a
// snapshot outlives a change to the structs.
func decodeValue(raw json.RawMessage, v reflect.Value, path string) error {
	t := v.Type()
	null := len(raw) == 0 || string(raw) == "null"
	if c, ok := sdkCodecs[t]; ok {
		if null {
			v.SetZero()
			return nil
		}
		obj, err := c.unmarshal(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		v.Set(obj)
		return nil
	}
	if null {
		v.SetZero()
		if t.Kind() == reflect.Map {
			v.Set(reflect.MakeMap(t))
		}
		return nil
	}
	if t == timeType {
		return wrapPath(path, json.Unmarshal(raw, v.Addr().Interface()))
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return wrapPath(path, json.Unmarshal(raw, v.Addr().Interface()))
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := decodeValue(raw, p.Elem(), path); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return wrapPath(path, err)
		}
		if t.Kind() == reflect.Slice {
			v.Set(reflect.MakeSlice(t, len(items), len(items)))
		} else if len(items) != v.Len() {
			return fmt.Errorf("%s: %d items, want %d", path, len(items), v.Len())
		}
		for i, item := range items {
			if err := decodeValue(item, v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		var items map[string]json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return wrapPath(path, err)
		}
		m := reflect.MakeMapWithSize(t, len(items))
		for k, item := range items {
			e := reflect.New(t.Elem()).Elem()
			if err := decodeValue(item, e, path+"["+k+"]"); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), e)
		}
		v.Set(m)
		return nil
	case reflect.Struct:
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return wrapPath(path, err)
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if skipped(f.Type) {
				continue
			}
			fv := usable(v.Field(i))
			if err := decodeValue(fields[f.Name], fv, path+"."+f.Name); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s: a %s cannot be restored from a snapshot", path, t)
}

func wrapPath(path string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
