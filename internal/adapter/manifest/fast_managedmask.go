package manifest

import (
	"bytes"
	"slices"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod's managed fields, as YAML lines, are most of its text when kubectl
// keeps them, and alike in a workload's pods but for each entry's time and
// the keys of its field set that name a list's element by its values (the
// kubelet's k:{"ip":"10.128.0.5"} names the pod's IP). A lean load keeps
// nothing of them: they are decoded only to be validated, each field set
// only checked to be JSON. So a template remembers them (up to
// maxStatusShapes) as their lines with those times and keys cut out (a
// managed shape), with the entries decoded of them: a pod's managed fields
// that are a shape's lines with a time in each time's place and a plain
// key in each key's are known to decode to the shape's entries but for
// their times and field sets, which are valid (a field set with one plain
// string key for another is JSON still).

// maskKey is a key of a field set, cut out of a managed shape.
const maskKey maskKind = maskStartTime + 1

// yamlManagedShape is the YAML lines of managed fields with their times and
// list keys cut out, and the entries decoded of them (without their field
// sets).
type yamlManagedShape struct {
	segments []maskSegment
	entries  []metav1.ManagedFieldsEntry
}

// cutYAMLManaged returns block, the YAML lines of managed fields (each
// ending with a line break), as a managed shape's segments: each entry's
// time cut out (to the end of its line, a simple scalar) and each key of a
// field set that starts with "k:" (to its colon, a plain scalar), or false
// for lines it does not read so.
func cutYAMLManaged(block []byte) ([]maskSegment, bool) {
	var segments []maskSegment
	keys, from := -1, 0 // where the entries' keys start
	ok := eachBlockLine(block, func(at, end, n int, entry bool) bool {
		if keys < 0 {
			if !entry {
				return false
			}
			keys = n
		}
		line := block[at:end]
		if n == len(line) {
			return true
		}
		k, rest, ok := splitKey(line[n:])
		switch {
		case !ok:
		case n == keys && string(k) == "time" && len(rest) > 0:
			if _, _, simple := yamlScalar(rest); simple {
				segments = append(segments, maskSegment{text: string(block[from : end-len(rest)]), kind: maskTime, was: string(rest)})
				from = end
			}
		case n > keys && plainKey(line[n:], k):
			segments = append(segments, maskSegment{text: string(block[from : at+n]), kind: maskKey, was: string(k)})
			from = at + n + len(k)
		}
		return true
	})
	if !ok {
		return nil, false
	}
	return append(segments, maskSegment{text: string(block[from:])}), true
}

// plainKey reports whether k, the key splitKey read from content, is a
// list key ("k:...") written plainly (not quoted), in UTF-8, printable and
// without control characters (the converter refuses a carriage return).
func plainKey(content, k []byte) bool {
	if !bytes.HasPrefix(content, []byte("k:")) || !bytes.HasPrefix(content, k) {
		return false
	}
	for _, c := range k {
		if c < 0x20 {
			return false
		}
	}
	return printable(k) && utf8.Valid(k)
}

// managedAlikeYAML reports whether block, managed fields as YAML lines, is
// shape's lines with a simple scalar that timeOf reads in each time's place
// and a plain list key in each key's.
func (d *fastDecoder) managedAlikeYAML(block []byte, shape []maskSegment) bool {
	at := 0
	var text [64]byte
	for _, seg := range shape {
		if !sameText(block, at, seg.text) {
			return false
		}
		at += len(seg.text)
		if seg.kind == 0 {
			return at == len(block)
		}
		if seg.kind == maskKey && sameText(block, at, seg.was) && len(block) > at+len(seg.was) && block[at+len(seg.was)] == ':' {
			// The next segment holds the rest of the line: a line alike
			// is the shape's own.
			at += len(seg.was)
			continue
		}
		nl := bytes.IndexByte(block[at:], '\n')
		if nl < 0 {
			return false
		}
		content := block[at : at+nl]
		if seg.kind == maskKey {
			if len(content) == 0 {
				return false
			}
			k, _, ok := splitKey(content)
			if !ok || !plainKey(content, k) {
				return false
			}
			at += len(k) // the rest of its line is the shape's
			continue
		}
		if string(content) == seg.was {
			at += nl
			continue
		}
		contents, null, simple := yamlScalar(content)
		if !simple {
			return false
		}
		if !null {
			if _, ok := d.timeOf(append(append(append(text[:0], '"'), contents...), '"')); !ok {
				return false
			}
		}
		at += nl
	}
	return false
}

// knownYAMLManaged returns the entries of the managed shape of t's (the
// last one found first) that block, a pod's managed fields as YAML lines,
// is alike to, or false.
func (m *podMemo) knownYAMLManaged(t *podTemplate, block []byte) ([]metav1.ManagedFieldsEntry, bool) {
	for i := range t.yamlManaged {
		j := (t.lastYAMLManaged + i) % len(t.yamlManaged)
		if m.w.dec.managedAlikeYAML(block, t.yamlManaged[j].segments) {
			t.lastYAMLManaged = j
			return t.yamlManaged[j].entries, true
		}
	}
	return nil, false
}

// rememberYAMLManaged remembers for t block, the YAML lines of managed
// fields that decoded to entries (copied).
func (m *podMemo) rememberYAMLManaged(t *podTemplate, block []byte, entries []metav1.ManagedFieldsEntry) {
	if len(t.yamlManaged) >= maxStatusShapes || len(block) > maxKnownSize {
		return
	}
	segments, ok := cutYAMLManaged(block)
	if !ok {
		return
	}
	t.yamlManaged = append(t.yamlManaged, yamlManagedShape{segments: segments, entries: slices.Clone(entries)})
	t.lastYAMLManaged = len(t.yamlManaged) - 1
}

// The same is done for a JSON List's managed fields (managedShape): their
// text with each entry's time cut out (a plain string or null, a time
// timeOf reads) and each key of a field set that starts with "k:" (any
// JSON string takes its place).

// managedShape is the JSON text of managed fields with their times and
// list keys cut out, and the entries decoded of them (without their field
// sets).
type managedShape = yamlManagedShape

// cutManaged returns data, managed fields' JSON that decoded, as a
// managed shape's segments, or false when it is not an array of objects
// that it walks.
func cutManaged(data []byte) ([]maskSegment, bool) {
	var segments []maskSegment
	from := 0
	end := walkArray(data, 0, func(e int) int {
		return walkObject(data, e, func(key []byte, v int) int {
			switch string(key) {
			case "time":
				_, end := plainTextAt(data, v)
				if end >= 0 {
					segments = append(segments, maskSegment{text: string(data[from:v]), kind: maskTime, was: string(data[v:end])})
					from = end
				}
				return end
			case "fieldsV1":
				end := skipValue(data, v)
				if end < 0 {
					return -1
				}
				// Its keys: the strings followed by a colon.
				for at := v; at < end; {
					q := bytes.IndexByte(data[at:end], '"')
					if q < 0 {
						break
					}
					open := at + q
					close := skipString(data, open)
					if close < 0 {
						return -1
					}
					if c := skipSpace(data, close); c < end && data[c] == ':' && bytes.HasPrefix(data[open:], []byte(`"k:`)) {
						segments = append(segments, maskSegment{text: string(data[from:open]), kind: maskKey, was: string(data[open:close])})
						from = close
					}
					at = close
				}
				return end
			}
			return skipValue(data, v)
		})
	})
	if end < 0 {
		return nil, false
	}
	return append(segments, maskSegment{text: string(data[from:end])}), true
}

// managedAlike returns the offset past the managed fields at data[at]
// when they are shape's text with a time timeOf reads (or null) in each
// time's place and a JSON string in each key's, or -1.
func (d *fastDecoder) managedAlike(data []byte, at int, shape []maskSegment) int {
	for _, seg := range shape {
		if !sameText(data, at, seg.text) {
			return -1
		}
		at += len(seg.text)
		var end int
		switch {
		case seg.kind == 0:
			return at
		case sameText(data, at, seg.was):
			end = at + len(seg.was)
		case seg.kind == maskKey:
			if at >= len(data) || data[at] != '"' {
				return -1
			}
			end = validString(data, at)
		default:
			_, _, end = d.timeValueAt(data, at)
		}
		if end < 0 {
			return -1
		}
		at = end
	}
	return -1
}

// rememberManaged remembers for t value, managed fields' JSON that decoded
// to entries (copied).
func (m *podMemo) rememberManaged(t *podTemplate, value []byte, entries []metav1.ManagedFieldsEntry) {
	if len(t.managed) >= maxStatusShapes || len(value) > maxKnownSize {
		return
	}
	if segments, ok := cutManaged(value); ok {
		t.managed = append(t.managed, managedShape{segments: segments, entries: slices.Clone(entries)})
		t.lastManaged = len(t.managed) - 1
	}
}
