package manifest

import (
	"bytes"
	"slices"
)

// A pod memo reads the pods of a YAML List (the loose items cutYAMLItems
// cuts) as it reads their JSON, but before they are converted: a template
// keeps, besides its JSON key, its YAML text with the values of its
// volatile fields cut out (yamlKey). An item whose text is that key once
// its own values are cut out at the same places is the template's JSON
// with those values converted: the converter converts a value wherever it
// is, from its lines alone (its mappings' keys put in order there), and
// the text around the values, being the template's, converts to the
// template's JSON. So only
// those values are converted (each with its key's line, as a document of
// its own) and decoded, as fromTemplate decodes them from JSON. Anything
// else — an item no template's key fits, a value the fast converter does
// not read, a pod fromTemplate declines — is converted and prepared as
// usual, which makes the same pod or words the error.

// yamlKey is a template's YAML text without the values of its volatile
// fields, each replaced by a NUL byte (which a document the fast converter
// reads cannot hold), and where those values were.
type yamlKey struct {
	key    string
	values []yamlValue
}

// yamlValue is where a volatile field's value is in a YAML item, as its
// template shows it: on its key's line after "key: " (inline), or the
// lines after the key's line (a block): those indented more than the key,
// and the sequence entries at its indentation.
type yamlValue struct {
	field  volatileField
	block  bool
	indent int
	// keyLine is how far before the value its key's line starts; prefix
	// is the JSON the key's line converts to before the value.
	keyLine int
	prefix  string
}

// yamlVolatile are the volatile fields of a pod's YAML, by the keys they
// are under (at the top, in metadata, in spec, in a container) and key.
var yamlVolatile = map[string]volatileField{
	"/status":                          fieldStatus,
	"metadata/name":                    fieldName,
	"metadata/uid":                     fieldUID,
	"metadata/resourceVersion":         fieldResourceVersion,
	"metadata/creationTimestamp":       fieldCreationTimestamp,
	"metadata/annotations":             fieldAnnotations,
	"metadata/managedFields":           fieldManagedFields,
	"spec/nodeName":                    fieldNodeName,
	"spec/volumes":                     fieldVolumes,
	"spec/containers/volumeMounts":     fieldMounts,
	"spec/initContainers/volumeMounts": fieldMounts,
}

// yamlItemLine is a line of a YAML item as makeYAMLKey reads it.
type yamlItemLine struct {
	start, end int // of the line, without its line break
	// indent is where its key (or scalar) starts: past its indentation
	// and any "- " of sequence entries.
	indent  int
	entry   bool
	content []byte
}

// itemLine reads the line of item that starts at at (item ends with a line
// break).
func itemLine(item []byte, at int) yamlItemLine {
	end := at + bytes.IndexByte(item[at:], '\n')
	l := yamlItemLine{start: at, end: end}
	n := at + indentOf(item[at:end])
	if at == 0 {
		n = 0 // the item's "- ", read as an entry below
	}
	for n+1 < end && item[n] == '-' && item[n+1] == ' ' {
		l.entry = true
		n += 2
	}
	l.indent, l.content = n-at, item[n:end]
	return l
}

// blockEnd returns where the block of lines after a key at indent ends,
// the key's line ending at from: at the first line indented less, or as
// much and no sequence entry (any line, after a literal block scalar's
// key), or blank; -1 when it meets a blank line or one without a line
// break (not read here).
func blockEnd(item []byte, from, indent int, scalar bool) int {
	for from < len(item) {
		nl := bytes.IndexByte(item[from:], '\n')
		if nl < 0 {
			return -1
		}
		e := from + nl
		n := from + indentOf(item[from:e])
		if n == e {
			return -1
		}
		if in := n - from; in < indent || in == indent && (scalar || !bytes.HasPrefix(item[n:e], []byte("- "))) {
			break
		}
		from = e + 1
	}
	return from
}

// makeYAMLKey returns the YAML key of item, a loose item whose JSON the
// fast converter made, that makeKey cut at fields; false when the walk
// below does not read item for certain, or finds other volatile fields.
// Every line it reads is "key:" or "key: value" with a plain key, or a
// sequence entry of such a line or a scalar, indented by two spaces or
// more; a literal block scalar's lines are skipped. A key is under the
// keys of blocks it is indented in.
func makeYAMLKey(item []byte, fields []volatileField) (*yamlKey, bool) {
	type parent struct {
		indent int
		key    string
	}
	var (
		stack  []parent
		values []yamlValue
		key    []byte
		prev   int // where the text not yet in key starts
	)
	if len(item) == 0 || item[len(item)-1] != '\n' {
		return nil, false
	}
	for at := 0; at < len(item); {
		l := itemLine(item, at)
		next := l.end + 1
		if len(l.content) == 0 || l.content[0] == '#' || l.indent < 2 {
			return nil, false
		}
		k, rest, ok := splitKey(l.content)
		if !ok {
			if !l.entry || l.content[0] == '|' || l.content[0] == '>' {
				return nil, false
			}
			at = next // a scalar entry
			continue
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= l.indent {
			stack = stack[:len(stack)-1]
		}
		path := []byte{}
		for _, p := range stack {
			path = append(path, p.key...)
			path = append(path, '/')
		}
		if len(stack) == 0 {
			path = append(path, '/')
		}
		path = append(path, k...)
		rest = bytes.TrimRight(rest, " ")
		scalar := len(rest) > 0 && rest[0] == '|'
		blockTo := next
		if len(rest) == 0 || scalar {
			if blockTo = blockEnd(item, next, l.indent, scalar); blockTo < 0 {
				return nil, false
			}
		}
		if len(rest) > 0 && !scalar && next < len(item) && itemLine(item, next).indent > l.indent {
			return nil, false // a value over several lines
		}
		f, volatile := yamlVolatile[string(path)]
		if !volatile {
			if len(rest) == 0 {
				stack = append(stack, parent{l.indent, string(k)})
			} else if scalar {
				next = blockTo
			}
			at = next
			continue
		}
		if l.entry || scalar {
			return nil, false // a volatile key on an entry's line, or a literal block
		}
		v := yamlValue{field: f, indent: l.indent, block: len(rest) == 0, prefix: `{"` + string(k) + `":`}
		start, stop := next, blockTo
		if !v.block {
			// The value starts past "key: " and runs to the line's end.
			start = l.start + l.indent + len(k) + 2
			stop = l.end
			if string(item[start-2:start]) != ": " {
				return nil, false
			}
		}
		v.keyLine = start - l.start
		values = append(values, v)
		key = append(key, item[prev:start]...)
		key = append(key, 0)
		prev, at = stop, blockTo
	}
	key = append(key, item[prev:]...)
	if len(key) > maxKeySize {
		return nil, false
	}
	if !slices.EqualFunc(values, fields, func(v yamlValue, f volatileField) bool { return v.field == f }) {
		return nil, false
	}
	return &yamlKey{key: string(key), values: values}, true
}

// prepareYAMLItem prepares a loose item of a YAML List through the
// template its text fits, of the memo's candidates; false when it
// fits neither or the pod is not made so (the item is then converted and
// prepared as usual).
func (m *podMemo) prepareYAMLItem(item []byte, scratch *yamlScratch) (prepared, bool) {
	if m.trials.pausing() {
		return prepared{}, false
	}
	for _, t := range m.candidates() {
		if t != nil && t.yaml != nil && m.matchesYAML(item, t, scratch) {
			p, ok := m.fromTemplate(t, m.values)
			if !ok {
				return prepared{}, false // prepare counts it
			}
			m.count(true)
			m.follow(t)
			return p, true
		}
	}
	return prepared{}, false
}

// noteYAMLItem gives the template the memo made the last pod from, or
// made of it, the YAML key of item, that pod's text as the fast converter
// read it, if it has none yet.
func (m *podMemo) noteYAMLItem(item []byte) {
	t := m.made
	if t == nil || t.yaml != nil || t.yamlTried {
		return
	}
	t.yamlTried = true
	if yk, ok := makeYAMLKey(item, t.fields); ok {
		t.yaml = yk
	}
}

// matchesYAML reports whether item's text is the YAML key of t's once the
// values of its volatile fields are cut out where the key's were, as
// matches reads JSON; it converts each such value, with its key's line,
// into m.values, and records where each is in m.spans — but for a status
// alike to one of t's YAML status shapes, read as that (m.shape, m.start),
// and managed fields alike to one of its managed shapes (into m.entries).
func (m *podMemo) matchesYAML(item []byte, t *podTemplate, scratch *yamlScratch) bool {
	m.spans, m.values, m.yamlStatus, m.yamlManaged, m.names = m.spans[:0], m.values[:0], nil, nil, m.names[:0]
	yk := t.yaml
	key, at := yk.key, 0
	for _, v := range yk.values {
		var ok bool
		if key, at, ok = keySegment(key, item, at); !ok {
			return false
		}
		var end, docEnd int
		if v.block {
			if end = blockEnd(item, at, v.indent, false); end < 0 {
				return false
			}
			docEnd = end
		} else {
			e := bytes.IndexByte(item[at:], '\n')
			if e < 0 {
				return false
			}
			end = at + e
			docEnd = end + 1
		}
		if v.field == fieldStatus && v.block {
			if sh, start, ok := m.knownYAMLStatus(t, item[at:end]); ok {
				m.shape, m.start = sh, start
				m.spans = append(m.spans, span{start: len(m.values), end: len(m.values), field: v.field, read: true})
				at = end
				continue
			}
			m.yamlStatus = item[at:end]
		}
		if v.field == fieldManagedFields && v.block {
			if entries, ok := m.knownYAMLManaged(t, item[at:end]); ok {
				m.entries = append(m.entries[:0], entries...)
				m.spans = append(m.spans, span{start: len(m.values), end: len(m.values), field: v.field, read: true})
				at = end
				continue
			}
			m.yamlManaged = item[at:end]
		}
		maskFrom, maskTo := 0, 0
		if v.block && (v.field == fieldVolumes || v.field == fieldMounts) {
			from := len(m.names)
			names, ok := maskYAMLNames(m.names, v.field, item[at:end])
			if _, known := t.yamlMasked[string(names[from:])]; ok && known {
				m.names = names[:from]
				m.spans = append(m.spans, span{start: len(m.values), end: len(m.values), field: v.field, read: true})
				at = end
				continue
			}
			if m.names = names; ok {
				maskFrom, maskTo = from, len(names)
			} else {
				m.names = names[:from]
			}
		}
		value := item[at-v.keyLine : docEnd]
		// The loose item converter declines a carriage return anywhere
		// (the key, which it read, has none): so does the memo, which
		// must make only what converting the item would.
		if bytes.IndexByte(value, '\r') >= 0 {
			return false
		}
		lines := scratch.split(value)
		if lines == nil {
			return false
		}
		out, ok := convertYAMLLines(lines, docEnd-(at-v.keyLine), scratch)
		if !ok || !bytes.HasPrefix(out, []byte(v.prefix)) || len(out) < len(v.prefix)+2 || out[len(out)-1] != '}' {
			return false
		}
		start := len(m.values)
		m.values = append(m.values, out[len(v.prefix):len(out)-1]...)
		scratch.recycle(out)
		m.spans = append(m.spans, span{start: start, end: len(m.values), field: v.field, maskFrom: maskFrom, maskTo: maskTo})
		at = end
	}
	return string(item[at:]) == key
}
