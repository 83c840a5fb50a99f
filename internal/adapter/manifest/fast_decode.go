package manifest

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A strict decoder without the reflection decoder's two passes, for the
// values the pod memo decodes per pod (a pod's status, annotations,
// managed fields) and for whole nodes and pods (decodeTyped): in one pass
// over the structural scanner — each value decoded where the walk meets
// it — it sets strings, booleans, integers, pointers, slices, maps with
// string keys and structs (an embedded struct's fields promoted, as
// encoding/json promotes them) itself; a type with its own UnmarshalJSON it
// calls on a plain string (times, remembered by their text) and on managed
// fields' field sets (remembered likewise), and every other value (a
// number into a quantity, a string with escapes, a struct with clashing
// fields or a ",string" option) it hands to DecodeStrict. It accepts only
// what DecodeStrict decodes without error or strict error, into the same
// value, and declines a value with a number checkQuantities could refuse
// before any quantity in it is parsed (so its callers need not scan for
// them first); for anything else — an unknown or duplicate field, a value
// of the wrong type, input it does not read for certain — it returns
// false, and the caller decodes the whole document as usual.
// FuzzFastDecode, TestFastDecodeObjects and TestDecodeTypedWithDecoder
// hold it to DecodeStrict.

// fastDecoder decodes with what it has learned of the types it has met.
type fastDecoder struct {
	types map[reflect.Type]*typeInfo
	// times are the times read, by their text (the pods of a cluster
	// share a few creation and start times), up to maxTimes.
	times map[string]metav1.Time
	// fieldSets are the managed fields' field sets read (FieldsV1, valid
	// JSON kept as it is), by their text, up to maxFieldSets.
	fieldSets map[string][]byte
	// names are the strings read (stringAt), by their text, up to
	// maxNames.
	names map[string]string
	// reuse decodes into the room of the slices the target holds (the
	// memo's scratch status), instead of new ones: only for a target
	// already written, as reading fresh memory before writing it costs
	// the kernel a second page fault.
	reuse bool
}

// maxFieldSets bounds the field sets a fastDecoder remembers, and
// maxFieldSetSize the size of each.
const (
	maxFieldSets    = 4096
	maxFieldSetSize = 64 << 10
)

var fieldsV1Type = reflect.TypeFor[metav1.FieldsV1]()

// maxTimes bounds the times a fastDecoder remembers.
const maxTimes = 4096

var timeType = reflect.TypeFor[metav1.Time]()

// typeInfo is what the decoder knows of a type, so that decoding a value
// looks nothing up but a struct's keys.
type typeInfo struct {
	t    reflect.Type
	kind reflect.Kind
	// self is set for a type that decodes itself (json.Unmarshaler).
	self bool
	// elem is a pointer's, slice's or map's element type, once met.
	elem *typeInfo
	// plainKey is set for a map whose keys are strings of a type that is
	// no encoding.TextUnmarshaler (which encoding/json would call), and
	// plainElem for one whose values are strings that decode as such.
	plainKey, plainElem bool
	// fields is a struct's table, nil for one left to DecodeStrict;
	// slots are its fields' types by slot, once met.
	fields fieldTable
	slots  []*typeInfo
	// order is the keys of the last object of a struct read, in order
	// (lookup).
	order []orderedKey
}

// orderedKey is a struct's field named in an object, in order (lookup).
type orderedKey struct {
	name string
	ref  fieldRef
}

// info returns what d knows of t.
func (d *fastDecoder) info(t reflect.Type) *typeInfo {
	if ti, ok := d.types[t]; ok {
		return ti
	}
	if d.types == nil {
		d.types = map[reflect.Type]*typeInfo{}
	}
	ti := &typeInfo{t: t, kind: t.Kind(), self: reflect.PointerTo(t).Implements(unmarshalerType)}
	d.types[t] = ti
	switch {
	case ti.self:
	case ti.kind == reflect.Struct:
		if ft := (fieldTable{}); addFields(ft, t, -1) {
			ti.fields, ti.slots = ft, make([]*typeInfo, len(ft))
		}
	case ti.kind == reflect.Map:
		k, e := t.Key(), t.Elem()
		ti.plainKey = k.Kind() == reflect.String && !reflect.PointerTo(k).Implements(textUnmarshalerType)
		ti.plainElem = e.Kind() == reflect.String && !reflect.PointerTo(e).Implements(unmarshalerType)
	}
	return ti
}

// elemInfo returns what d knows of ti's element type.
func (d *fastDecoder) elemInfo(ti *typeInfo) *typeInfo {
	if ti.elem == nil {
		ti.elem = d.info(ti.t.Elem())
	}
	return ti.elem
}

// fieldTable is a struct's fields by JSON name (addFields).
type fieldTable map[string]fieldRef

// fieldRef is where a JSON name's field is: the struct's field index, or
// with inner not -1 the field inner of the struct embedded at index; slot
// numbers the names of the table, from 0.
type fieldRef struct{ slot, index, inner int }

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decode decodes data into the value v points to (a zero value), or
// returns false.
func (d *fastDecoder) decode(data []byte, v any) bool {
	rv := reflect.ValueOf(v).Elem()
	end := d.value(data, 0, rv, d.info(rv.Type()))
	return onlySpaceAfter(data, end)
}

// value decodes the value at data[i] (after space) into v (settable,
// zero; ti its type's) in one pass, and returns the offset just past it,
// or -1.
func (d *fastDecoder) value(data []byte, i int, v reflect.Value, ti *typeInfo) int {
	i = skipSpace(data, i)
	if i >= len(data) {
		return -1
	}
	if ti.self {
		end := skipValue(data, i)
		if end < 0 || !d.self(data[i:end], v) {
			return -1
		}
		return end
	}
	if data[i] == 'n' {
		// null leaves every kind of value as it is (zero).
		end := skipValue(data, i)
		if end < 0 || string(data[i:end]) != "null" {
			return -1
		}
		return end
	}
	switch ti.kind {
	case reflect.String:
		s, end, ok := plainStringAt(data, i)
		if !ok {
			return d.strictAt(data, i, end, v)
		}
		v.SetString(s)
		return end
	case reflect.Bool:
		end := skipValue(data, i)
		if end < 0 {
			return -1
		}
		switch string(data[i:end]) {
		case "true":
			v.SetBool(true)
		case "false":
		default:
			return -1
		}
		return end
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		end := skipValue(data, i)
		if end < 0 {
			return -1
		}
		if !isDecimalInt(data[i:end]) {
			return d.strictAt(data, i, end, v)
		}
		n, err := strconv.ParseInt(string(data[i:end]), 10, ti.t.Bits())
		if err != nil {
			return d.strictAt(data, i, end, v)
		}
		v.SetInt(n)
		return end
	case reflect.Pointer:
		elem := d.elemInfo(ti)
		p := reflect.New(elem.t)
		end := d.value(data, i, p.Elem(), elem)
		if end >= 0 {
			v.Set(p)
		}
		return end
	case reflect.Slice:
		elem := d.elemInfo(ti)
		if elem.kind == reflect.Uint8 {
			return d.strictAt(data, i, skipValue(data, i), v) // []byte is base64
		}
		// With reuse, a slice v holds is reused (its elements zeroed as
		// they are decoded into), so that a target decoded into again
		// and again does not allocate each time; a nil one becomes
		// empty, as a fresh decode makes it.
		var s reflect.Value
		if d.reuse {
			s = v.Slice(0, 0)
		}
		if !s.IsValid() || s.IsNil() {
			s = reflect.MakeSlice(ti.t, 0, 0)
		}
		zero := reflect.Zero(elem.t)
		end := walkArray(data, i, func(e int) int {
			s = reflect.Append(s, zero)
			return d.value(data, e, s.Index(s.Len()-1), elem)
		})
		if end >= 0 {
			v.Set(s)
		}
		return end
	case reflect.Map:
		return d.stringMap(data, i, v, ti)
	case reflect.Struct:
		return d.object(data, i, v, ti)
	}
	return d.strictAt(data, i, skipValue(data, i), v)
}

// strictAt decodes data[i:end] into v with strict, and returns end or -1.
func (d *fastDecoder) strictAt(data []byte, i, end int, v reflect.Value) int {
	if end < 0 || !d.strict(data[i:end], v) {
		return -1
	}
	return end
}

// self decodes a type that decodes itself (json.Unmarshaler), remembering
// timestamps and managed-fields field sets by their bytes.
func (d *fastDecoder) self(data []byte, v reflect.Value) bool {
	t := v.Type()
	if t == timeType {
		if tm, ok := d.timeOf(data); ok {
			*v.Addr().Interface().(*metav1.Time) = tm
			return true
		}
		if _, plain := plainJSONString(data); plain {
			return false // a plain string the time refuses
		}
		return d.strict(data, v)
	}
	if t == fieldsV1Type && string(data) != "null" {
		// As JSON nested no deeper than validValue reads (the whole
		// List's decoder allows its items less depth than their own).
		if !validJSON(data) {
			return false
		}
		// Its UnmarshalJSON keeps the bytes; the reflection decoder
		// checks them first. The field sets of a workload's pods are
		// often alike: each is checked once, and its bytes shared
		// (nothing writes to them; a lean load drops them).
		if raw, ok := d.fieldSets[string(data)]; ok {
			v.Set(reflect.ValueOf(metav1.FieldsV1{Raw: raw}))
			return true
		}
		if !d.strict(data, v) {
			return false
		}
		if d.fieldSets == nil {
			d.fieldSets = map[string][]byte{}
		}
		if f, _ := v.Interface().(metav1.FieldsV1); len(d.fieldSets) < maxFieldSets && len(data) <= maxFieldSetSize {
			d.fieldSets[string(data)] = f.Raw
		}
		return true
	}
	if _, plain := plainJSONString(data); plain {
		// As the reflection decoder hands it a valid literal; but a
		// quantity checkQuantities could refuse is left to the caller.
		if suspiciousNumbers(data) {
			return false
		}
		u, _ := v.Addr().Interface().(json.Unmarshaler)
		return u.UnmarshalJSON(data) == nil
	}
	return d.strict(data, v)
}

// stringMap decodes the map at data[i] with string keys (of a type that
// is no encoding.TextUnmarshaler, which encoding/json would call), each
// key plain and at most once, and values of any type but null, and
// returns the offset past it; any other map is left to the strict
// decoder.
func (d *fastDecoder) stringMap(data []byte, i int, v reflect.Value, ti *typeInfo) int {
	if !ti.plainKey {
		return d.strictAt(data, i, skipValue(data, i), v)
	}
	if ti.t == stringsMapType {
		return d.stringsMap(data, i, v)
	}
	t, elem := ti.t, d.elemInfo(ti)
	m := reflect.MakeMap(t)
	// One key and one element, set for each member: SetMapIndex copies
	// them.
	k, e := reflect.New(t.Key()).Elem(), reflect.New(elem.t).Elem()
	end := walkObject(data, i, func(key []byte, vi int) int {
		k.SetString(string(key))
		if !plainJSONContents(key) || m.MapIndex(k).IsValid() {
			return -1
		}
		e.SetZero()
		var end int
		if ti.plainElem {
			var s string
			var plain bool
			if s, end, plain = plainStringAt(data, vi); !plain || quantityLike(key, data[vi:end]) {
				return -1
			}
			e.SetString(s)
		} else if vi >= len(data) || data[vi] == 'n' {
			return -1 // null
		} else if end = d.value(data, vi, e, elem); end < 0 {
			return -1
		}
		m.SetMapIndex(k, e)
		return end
	})
	if end >= 0 {
		v.Set(m)
	}
	return end
}

// quantityLike reports whether value, of a map's key, is one that
// checkQuantities reads as a quantity (by its key, whatever the map) and
// could refuse: the decoder declines it, for the caller to word the error.
func quantityLike(key, value []byte) bool {
	return len(key) == len("sizeLimit") && quantityFields[string(key)] && suspiciousNumbers(value)
}

// stringsMapType is map[string]string (labels, annotations, selectors).
var stringsMapType = reflect.TypeFor[map[string]string]()

// stringsMap is stringMap for a map[string]string, without reflection.
func (d *fastDecoder) stringsMap(data []byte, i int, v reflect.Value) int {
	m := map[string]string{}
	end := walkObject(data, i, func(key []byte, vi int) int {
		if _, dup := m[string(key)]; dup || !plainJSONContents(key) {
			return -1
		}
		s, end, plain := plainStringAt(data, vi)
		if !plain || quantityLike(key, data[vi:end]) {
			return -1
		}
		m[string(key)] = s
		return end
	})
	if end >= 0 {
		v.Set(reflect.ValueOf(m))
	}
	return end
}

// object decodes the object at data[i] into a struct whose fields the
// decoder knows (ti.fields), each key at most once, and returns the offset
// past it.
func (d *fastDecoder) object(data []byte, i int, v reflect.Value, ti *typeInfo) int {
	if ti.fields == nil {
		return d.strictAt(data, i, skipValue(data, i), v)
	}
	return d.members(data, i, ti, func(_ []byte, slot *typeInfo, ref fieldRef, vi int) int {
		return d.value(data, vi, fieldOf(v, ref), slot)
	})
}

// strict decodes data into v with DecodeStrict, accepting no strict error
// and no number checkQuantities could refuse (the caller's decoder words
// that error, and parses no such quantity).
func (d *fastDecoder) strict(data []byte, v reflect.Value) bool {
	if suspiciousNumbers(data) {
		return false
	}
	strict, err := DecodeStrict(data, v.Addr().Interface())
	return err == nil && len(strict) == 0
}

// addFields adds t's fields to ft (those of the struct embedded at outer,
// when outer is not -1), and reports whether the decoder reads t's fields
// itself.
func addFields(ft fieldTable, t reflect.Type, outer int) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || strings.Contains(tag, ",string") {
			if tag == "-" {
				continue
			}
			return false
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			if outer >= 0 || f.Type.Kind() != reflect.Struct || !addFields(ft, f.Type, i) {
				return false
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := ft[name]; dup {
			return false // encoding/json's rules for clashing names
		}
		ref := fieldRef{slot: len(ft), index: i, inner: -1}
		if outer >= 0 {
			ref.index, ref.inner = outer, i
		}
		ft[name] = ref
	}
	return true
}

// plainStringAt reads the string at data[i] (plainJSONString), and returns
// the offset past it; false for a string that is not plain, with that
// offset, or for no string at all, with -1.
func plainStringAt(data []byte, i int) (string, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return "", -1, false
	}
	end := skipString(data, i)
	if end < 0 {
		return "", -1, false
	}
	s, ok := plainJSONString(data[i:end])
	return s, end, ok
}

// plainJSONString is plainString for a string JSON accepts as it is: no
// escapes, no control characters, valid UTF-8.
func plainJSONString(value []byte) (string, bool) {
	if len(value) < 2 || value[0] != '"' || value[len(value)-1] != '"' || !plainJSONContents(value[1:len(value)-1]) {
		return "", false
	}
	return string(value[1 : len(value)-1]), true
}

// plainJSONContents reports whether s, between quotes, is a string JSON
// accepts as it is (plainJSONString).
func plainJSONContents(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c == '\\' || c == '"' {
			return false
		}
	}
	return utf8.Valid(s)
}

// decode is prepare(raw, lean) for a node or a pod the decoder reads
// whole, with a plain first "kind" key (kubectl writes apiVersion and kind
// first), a name, and the apiVersion the loader accepts. The object is
// decoded on the kind that key names without reading its header first;
// the decoded kind, apiVersion and name are then checked to be what
// prepare would have read (the last of repeated keys). Anything else it
// declines.
func (w *fastWorker) decode(raw []byte, lean bool) (prepared, bool) {
	kind := sniffKind(raw)
	if kind != "Pod" && kind != "Node" {
		return prepared{}, false
	}
	obj := newObject(kind)
	if !w.dec.decode(raw, obj) {
		return prepared{}, false
	}
	var p prepared
	p.setKind(kind, "")
	tm, m := typeMeta(obj), obj.(metav1.Object)
	if tm.Kind != kind || tm.APIVersion != p.apiVersion || m.GetName() == "" {
		return prepared{}, false
	}
	p.h = objectHeader{APIVersion: tm.APIVersion, Kind: kind, Name: m.GetName(), Namespace: m.GetNamespace()}
	p.setKind(kind, p.h.Namespace)
	p.setDecoded(obj, nil, nil)
	p.finish(lean)
	return p, true
}

// typeMeta returns the TypeMeta of a node or a pod.
func typeMeta(obj any) *metav1.TypeMeta {
	switch o := obj.(type) {
	case *v1.Pod:
		return &o.TypeMeta
	case *v1.Node:
		return &o.TypeMeta
	}
	return &metav1.TypeMeta{}
}

// sniffKind returns the value of the first "kind" key in raw when it is a
// plain string, else "".
func sniffKind(raw []byte) string {
	i := bytes.Index(raw, []byte(`"kind"`))
	if i < 0 {
		return ""
	}
	i = skipSpace(raw, i+len(`"kind"`))
	if i >= len(raw) || raw[i] != ':' {
		return ""
	}
	i = skipSpace(raw, i+1)
	if i >= len(raw) || raw[i] != '"' {
		return ""
	}
	end := bytes.IndexByte(raw[i+1:], '"')
	if end < 0 {
		return ""
	}
	kind, ok := plainString(raw[i : i+end+2])
	if !ok {
		return ""
	}
	return kind
}
