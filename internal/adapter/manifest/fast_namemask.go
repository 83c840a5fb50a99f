package manifest

import (
	"strings"
)

// maxMasked bounds the texts of volumes and mounts a template remembers.
const maxMasked = 8

// maskNames appends to dst the JSON array data, of objects, with the value
// of each one's "name" cut out (a NUL byte in its place), and reports
// whether data is such an array, whose names are all plain strings (NUL
// is never part of JSON that decodes, so two texts masked alike are alike
// but for their names).
func maskNames(dst, data []byte) ([]byte, bool) {
	from := 0
	end := walkArray(data, 0, func(e int) int {
		return walkObject(data, e, func(k []byte, v int) int {
			if string(k) != "name" {
				return skipValue(data, v)
			}
			if v >= len(data) || data[v] != '"' {
				return -1
			}
			_, end := plainTextAt(data, v)
			if end < 0 {
				return -1
			}
			dst = append(append(dst, data[from:v]...), 0)
			from = end
			return end
		})
	})
	if end < 0 || !onlySpaceAfter(data, end) {
		return dst, false
	}
	return append(dst, data[from:]...), true
}

// knownButNames reports whether value, a pod's volumes (f fieldVolumes)
// or a container's mounts (fieldMounts), is alike but for its names to one
// t's pods had (remembered by rememberButNames); m.masked is left holding
// value masked (maskNames), or empty if it cannot be.
func (m *podMemo) knownButNames(t *podTemplate, value []byte, f volatileField) bool {
	masked, ok := maskNames(append(m.masked[:0], byte(f)), value)
	if !ok {
		masked = masked[:0]
	}
	m.masked = masked
	_, known := t.masked[string(masked)]
	if ok && known {
		t.lastMasked[f-fieldVolumes] = string(masked[1:])
	}
	return ok && known
}

// alikeButNames returns the offset past the value at data[at] when it is
// masked (a value maskNames masked) with a plain string in each name's
// place, or -1: maskNames would then mask it to masked.
func alikeButNames(data []byte, at int, masked string) int {
	for {
		n := strings.IndexByte(masked, 0)
		if n < 0 {
			if !sameText(data, at, masked) {
				return -1
			}
			return at + len(masked)
		}
		if len(data)-at < n || string(data[at:at+n]) != masked[:n] {
			return -1
		}
		at += n
		if at >= len(data) || data[at] != '"' {
			return -1
		}
		if _, at = plainTextAt(data, at); at < 0 {
			return -1
		}
		masked = masked[n+1:]
	}
}

// rememberButNames remembers m.masked, of the value just decoded, for t.
func (m *podMemo) rememberButNames(t *podTemplate) {
	if len(m.masked) == 0 || len(t.masked) >= maxMasked || len(m.masked) > maxKnownSize {
		return
	}
	if t.masked == nil {
		t.masked = map[string]struct{}{}
	}
	t.masked[string(m.masked)] = struct{}{}
	t.lastMasked[volatileField(m.masked[0])-fieldVolumes] = string(m.masked[1:])
}

// maskYAMLNames appends to dst the byte of f (fieldVolumes or fieldMounts)
// and block, the YAML lines of such a sequence (each ending with a line
// break), with the value of each entry's name cut out (a NUL byte in its
// place), and reports whether block is such a sequence whose entries' names
// are all on lines of their own as simple string scalars (yamlScalar): its
// JSON is then masked alike by maskNames, the converter converting each
// name, a string, on its line.
func maskYAMLNames(dst []byte, f volatileField, block []byte) ([]byte, bool) {
	dst = append(dst, byte(f))
	keys, from := -1, 0 // where the entries' keys start
	ok := eachBlockLine(block, func(at, end, n int, entry bool) bool {
		if keys < 0 {
			if !entry {
				return false
			}
			keys = n
		}
		line := block[at:end]
		if n != keys || n == len(line) {
			return true
		}
		if k, rest, ok := splitKey(line[n:]); ok && string(k) == "name" {
			if _, null, simple := yamlScalar(rest); !simple || null {
				return false
			}
			dst = append(append(dst, block[from:end-len(rest)]...), 0)
			from = end
		}
		return true
	})
	if !ok {
		return dst, false
	}
	return append(dst, block[from:]...), true
}

// rememberYAMLNames remembers for t the YAML lines of the volumes or mounts
// of span s, masked (maskYAMLNames, into m.names), whose JSON t's pods had
// but for their names.
func (m *podMemo) rememberYAMLNames(t *podTemplate, s span) {
	if s.maskTo <= s.maskFrom || len(t.yamlMasked) >= maxMasked || s.maskTo-s.maskFrom > maxKnownSize {
		return
	}
	if t.yamlMasked == nil {
		t.yamlMasked = map[string]struct{}{}
	}
	t.yamlMasked[string(m.names[s.maskFrom:s.maskTo])] = struct{}{}
}
