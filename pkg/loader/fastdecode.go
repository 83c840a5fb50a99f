package loader

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A strict decoder without the reflection decoder's two passes, for the
// small values the pod memo decodes per pod (a pod's status, annotations,
// managed fields): over the structural scanner, it sets strings, booleans,
// integers, pointers, slices, string maps and structs of plain fields
// itself; a type with its own UnmarshalJSON it calls on a plain string
// (times, remembered by their text) and on managed fields' field sets
// (remembered likewise), and every other value (a quantity, a string with
// escapes, a struct with embedded, inline or clashing fields) it hands to
// DecodeStrict. It
// accepts only what DecodeStrict decodes without error or strict error,
// into the same value, and declines a value with a number checkQuantities
// could refuse before any quantity in it is parsed (so the memo need not
// scan its values for them first); for anything else — an unknown or duplicate field,
// a value of the wrong type, input it does not read for certain — it
// returns false, and the caller decodes the whole document as usual.
// FuzzFastDecode holds it to DecodeStrict.

// fastDecoder decodes with the field tables of the types it has met.
type fastDecoder struct {
	fields map[reflect.Type]fieldTable
	// unmarshalers says which types decode themselves.
	unmarshalers map[reflect.Type]bool
	// times are the times read, by their text (the pods of a cluster
	// share a few creation and start times), up to maxTimes.
	times map[string]metav1.Time
	// fieldSets are the managed fields' field sets read (FieldsV1, valid
	// JSON kept as it is), by their text, up to maxFieldSets.
	fieldSets map[string][]byte
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

// fieldTable is a struct's field indexes by JSON name; nil for a struct
// the decoder leaves to DecodeStrict (embedded or inline fields, ",string"
// options, clashing names).
type fieldTable map[string]int

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// decode decodes data into the value v points to (a zero value), or
// returns false.
func (d *fastDecoder) decode(data []byte, v any) bool {
	return d.value(data, reflect.ValueOf(v).Elem())
}

// value decodes data into v (settable, zero).
func (d *fastDecoder) value(data []byte, v reflect.Value) bool {
	t := v.Type()
	if d.unmarshaler(t) {
		return d.self(data, v)
	}
	null := string(data) == "null"
	switch t.Kind() {
	case reflect.String:
		if null {
			return true
		}
		s, ok := plainJSONString(data)
		if !ok {
			return d.strict(data, v)
		}
		v.SetString(s)
		return true
	case reflect.Bool:
		switch string(data) {
		case "null":
		case "true":
			v.SetBool(true)
		case "false":
		default:
			return false
		}
		return true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if null {
			return true
		}
		if !isDecimalInt(data) {
			return d.strict(data, v)
		}
		n, err := strconv.ParseInt(string(data), 10, t.Bits())
		if err != nil {
			return d.strict(data, v)
		}
		v.SetInt(n)
		return true
	case reflect.Pointer:
		if null {
			return true
		}
		p := reflect.New(t.Elem())
		if !d.value(data, p.Elem()) {
			return false
		}
		v.Set(p)
		return true
	case reflect.Slice:
		if null {
			return true
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return d.strict(data, v) // []byte is base64
		}
		elems, ok := arrayElements(data)
		if !ok {
			return false
		}
		s := reflect.MakeSlice(t, len(elems), len(elems))
		for i, e := range elems {
			if !d.value(e, s.Index(i)) {
				return false
			}
		}
		v.Set(s)
		return true
	case reflect.Map:
		if null {
			return true
		}
		return d.stringMap(data, v)
	case reflect.Struct:
		if null {
			return true
		}
		return d.object(data, v)
	}
	return d.strict(data, v)
}

// self decodes a type that decodes itself (json.Unmarshaler), remembering
// timestamps and managed-fields field sets by their bytes.
func (d *fastDecoder) self(data []byte, v reflect.Value) bool {
	t := v.Type()
	if t == timeType {
		if tm, ok := d.times[string(data)]; ok {
			v.Set(reflect.ValueOf(tm))
			return true
		}
	}
	if t == fieldsV1Type && string(data) != "null" {
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
		if t == timeType {
			var tm metav1.Time
			if tm.UnmarshalJSON(data) != nil {
				return false
			}
			if d.times == nil {
				d.times = map[string]metav1.Time{}
			}
			if len(d.times) < maxTimes {
				d.times[string(data)] = tm
			}
			v.Set(reflect.ValueOf(tm))
			return true
		}
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

// stringMap decodes a map of plain strings to plain strings; any other map
// is left to the strict decoder.
func (d *fastDecoder) stringMap(data []byte, v reflect.Value) bool {
	t := v.Type()
	if t.Key().Kind() != reflect.String || t.Elem().Kind() != reflect.String || t.Key().PkgPath() != "" || t.Elem().PkgPath() != "" {
		return d.strict(data, v)
	}
	m := reflect.MakeMap(t)
	ok := true
	walked := objectMembers(data, func(key, value []byte, _ int) {
		if !ok {
			return
		}
		k := string(key)
		s, plainValue := plainJSONString(value)
		if !plainJSONContents(key) || !plainValue || m.MapIndex(reflect.ValueOf(k)).IsValid() {
			ok = false
			return
		}
		m.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(s))
	})
	if !walked || !ok {
		return false
	}
	v.Set(m)
	return true
}

// object decodes a struct whose fields the decoder knows (d.table), each
// key at most once.
func (d *fastDecoder) object(data []byte, v reflect.Value) bool {
	t := v.Type()
	ft := d.table(t)
	if ft == nil {
		return d.strict(data, v)
	}
	var seen []int
	ok := true
	walked := objectMembers(data, func(key, value []byte, _ int) {
		if !ok {
			return
		}
		i, known := ft[string(key)]
		if !known || slices.Contains(seen, i) {
			ok = false
			return
		}
		seen = append(seen, i)
		ok = d.value(value, v.Field(i))
	})
	return walked && ok
}

// unmarshaler reports whether t decodes itself (json.Unmarshaler).
func (d *fastDecoder) unmarshaler(t reflect.Type) bool {
	u, ok := d.unmarshalers[t]
	if !ok {
		if d.unmarshalers == nil {
			d.unmarshalers = map[reflect.Type]bool{}
		}
		u = reflect.PointerTo(t).Implements(unmarshalerType)
		d.unmarshalers[t] = u
	}
	return u
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

// table returns t's field table, nil for a struct left to DecodeStrict.
func (d *fastDecoder) table(t reflect.Type) fieldTable {
	if ft, ok := d.fields[t]; ok {
		return ft
	}
	if d.fields == nil {
		d.fields = map[reflect.Type]fieldTable{}
	}
	ft := fieldTable{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous || strings.Contains(tag, ",string") || strings.Contains(tag, ",inline") {
			ft = nil
			break
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		if _, dup := ft[name]; dup {
			ft = nil // encoding/json's rules for clashing names
			break
		}
		ft[name] = i
	}
	d.fields[t] = ft
	return ft
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
