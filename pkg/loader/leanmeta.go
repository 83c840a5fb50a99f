package loader

import (
	"bytes"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod's managed fields are most of its bytes when kubectl does not strip
// them, and a lean load drops them: they are read only to be validated,
// and validation reads each entry's manager, operation, fields type and
// subresource, never its field set. Every pod's differ (the kubelet's
// entry names the pod's IP, and each entry has its time), so remembering
// them whole by their text seldom helps. leanManagedFields reads them
// without reflection and keeps nothing of the field sets: each is only
// checked to be JSON (validValue), which is all a field set's
// UnmarshalJSON asks, unless it is byte for byte the one the same entry
// of the template's last pod had (fieldSets).

var managedFieldsEntryType = reflect.TypeFor[metav1.ManagedFieldsEntry]()

// leanManagedFields decodes the managed fields data holds into *dst,
// reusing its room, with every entry's field set left nil, or returns
// false for anything it does not read for certain (the caller decodes it
// as before), having written to *dst. last is the field sets of the
// managed fields read before of the same kind of object (the pods of a
// memo's template), which it updates.
func (d *fastDecoder) leanManagedFields(data []byte, dst *[]metav1.ManagedFieldsEntry, last *fieldSets) bool {
	end := d.leanManagedFieldsAt(data, 0, dst, last)
	return end >= 0 && onlySpaceAfter(data, end)
}

// leanManagedFieldsAt is leanManagedFields for the value at data[i] (after
// space), returning the offset past it, or -1.
func (d *fastDecoder) leanManagedFieldsAt(data []byte, i int, dst *[]metav1.ManagedFieldsEntry, last *fieldSets) int {
	if end := nullAt(data, i); end >= 0 {
		*dst = nil
		return end
	}
	ti := d.info(managedFieldsEntryType)
	entries := (*dst)[:0]
	end := walkArray(data, i, func(e int) int {
		entries = append(entries, metav1.ManagedFieldsEntry{})
		me := &entries[len(entries)-1]
		n := len(entries) - 1
		return d.members(data, e, ti, func(key []byte, slot *typeInfo, _ fieldRef, v int) int {
			var s string
			end := -1
			switch string(key) {
			case "manager":
				me.Manager, end = d.stringAt(data, v)
			case "operation":
				s, end = d.stringAt(data, v)
				me.Operation = metav1.ManagedFieldsOperationType(s)
			case "apiVersion":
				me.APIVersion, end = d.stringAt(data, v)
			case "fieldsType":
				me.FieldsType, end = d.stringAt(data, v)
			case "subresource":
				me.Subresource, end = d.stringAt(data, v)
			case "time":
				end = d.check(data, v, slot)
			case "fieldsV1":
				if end = nullAt(data, v); end < 0 {
					end = last.at(data, v, n)
				}
			}
			return end
		})
	})
	*dst = entries
	return end
}

// fieldSets are the last field set of each entry of managed fields read,
// by the entry's index (up to maxLastSets, each of up to maxLastSetSize).
type fieldSets [][]byte

// at returns the offset past the field set at data[i], the nth entry's of
// its managed fields, if it is JSON (validValue), or -1. The field set of
// a pod's nth entry is often the last pod's of its workload (a
// controller's entry names the fields of the workload's template): one
// that is, byte for byte, is known to be JSON without reading it again (a
// JSON object or array ends where it closes, so the same bytes are the
// same value).
func (sets *fieldSets) at(data []byte, i, n int) int {
	i = skipSpace(data, i)
	if n < len(*sets) {
		if last := (*sets)[n]; len(last) > 0 && bytes.HasPrefix(data[i:], last) {
			return i + len(last)
		}
	}
	end := validValue(data, i)
	if end < 0 || n >= maxLastSets || end-i > maxLastSetSize || data[i] != '{' && data[i] != '[' {
		return end
	}
	for len(*sets) <= n {
		*sets = append(*sets, nil)
	}
	(*sets)[n] = append((*sets)[n][:0], data[i:end]...)
	return end
}

// maxLastSets bounds the entries whose last field sets are remembered, and
// maxLastSetSize the size of each (a memo's 1,024 templates remember at
// most 64 MiB).
const (
	maxLastSets    = 4
	maxLastSetSize = 16 << 10
)
