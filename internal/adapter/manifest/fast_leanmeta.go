package manifest

import (
	"bytes"
	"reflect"
	"slices"

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
type fieldSets []fieldSet

// fieldSet is a field set's text, valid JSON, and where its strings are
// (each string's opening quote and the offset past its closing one).
type fieldSet struct {
	text    []byte
	strings []int32
}

// at returns the offset past the field set at data[i], the nth entry's of
// its managed fields, if it is JSON (validValue) without a number
// checkQuantities could refuse, or -1. The field set of
// a pod's nth entry is often the last pod's of its workload (a
// controller's entry names the fields of the workload's template), or is
// but for one string (the kubelet's names the pod's IP): one that is, byte
// for byte or but for a string that is one, is known to be JSON without
// reading it all again (a JSON object or array ends where it closes, so
// the same bytes are the same value, and one string for another leaves
// the value one).
func (sets *fieldSets) at(data []byte, i, n int) int {
	i = skipSpace(data, i)
	if n < len(*sets) {
		if end := (*sets)[n].alike(data, i); end >= 0 {
			return end
		}
	}
	end := validValue(data, i)
	if end >= 0 && suspiciousNumbers(data[i:end]) {
		return -1 // a number checkQuantities could refuse: the caller's to word
	}
	if end < 0 || n >= maxLastSets || end-i > maxLastSetSize || data[i] != '{' && data[i] != '[' {
		return end
	}
	for len(*sets) <= n {
		*sets = append(*sets, fieldSet{})
	}
	set := &(*sets)[n]
	set.text = append(set.text[:0], data[i:end]...)
	set.strings = set.strings[:0]
	for at := 0; ; {
		q := bytes.IndexByte(set.text[at:], '"')
		if q < 0 {
			break
		}
		at += q
		e := skipString(set.text, at)
		set.strings = append(set.strings, int32(at), int32(e))
		at = e
	}
	return end
}

// alike returns the offset past the value at data[i] when it is set's
// text, or its text but for one string that validString accepts, or -1.
func (set *fieldSet) alike(data []byte, i int) int {
	text, rest := set.text, data[i:]
	if len(text) == 0 {
		return -1
	}
	same := 0
	for same < len(text) && same < len(rest) && text[same] == rest[same] {
		same++
	}
	if same == len(text) {
		return i + same
	}
	// The first byte that differs must be in a string (past its opening
	// quote): then the value is text but for that string when the string
	// validString reads from its opening quote is followed by the rest of
	// text, since what comes before it is text's.
	k, found := slices.BinarySearch(set.strings, int32(same))
	if found || k%2 == 0 {
		return -1 // on an opening quote, or past a string's end
	}
	open, close := int(set.strings[k-1]), int(set.strings[k])
	if same >= close {
		return -1
	}
	end := validString(rest, open)
	if end < 0 || !bytes.HasPrefix(rest[end:], text[close:]) || suspiciousNumbers(rest[open:end]) {
		return -1
	}
	return i + end + len(text) - close
}

// maxLastSets bounds the entries whose last field sets are remembered, and
// maxLastSetSize the size of each (a memo's 1,024 templates remember at
// most 64 MiB).
const (
	maxLastSets    = 4
	maxLastSetSize = 16 << 10
)
