package manifest

import (
	"bytes"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A running pod's status, as its kubelet writes it, is alike in a
// workload's pods but for a few values: its addresses, its container's ID,
// and the times of its start, its conditions and its container's state.
// Decoding and checking it whole is most of what the pod memo does per pod,
// so a template remembers statuses (up to maxStatusShapes) as their text
// without those values (a statusShape) with what leanPodStatus decoded of
// them: a pod's status that is a shape's text with, in each place cut out,
// a value the field accepts (a plain string or null, a time or null) is
// known to decode as the shape's did but for its start time, the one of
// those values a lean pod keeps.

// maxStatusShapes bounds the status shapes a template remembers.
const maxStatusShapes = 8

// maskKind says what a value cut from a status's text is.
type maskKind uint8

const (
	maskString    maskKind = iota + 1 // a string, dropped by lean
	maskTime                          // a metav1.Time, dropped by lean
	maskStartTime                     // status.startTime, which lean keeps
)

// statusMaskKeys are the keys whose values a status shape cuts out, with
// what they are wherever they occur in a v1.PodStatus
// (TestStatusMaskKeys holds them to its type), and the names of a
// container status's volume mounts (the pod's service account token
// volume has a name of its own). startTime is the status's own; the
// condition and container times, the addresses and the mounts are dropped
// by lean.
var statusMaskKeys = map[string]maskKind{
	"podIP": maskString, "hostIP": maskString, "ip": maskString, "containerID": maskString,
	"lastProbeTime": maskTime, "lastTransitionTime": maskTime, "startedAt": maskTime, "finishedAt": maskTime,
	"startTime": maskStartTime,
}

// statusShape is a status's text without the values of statusMaskKeys,
// and what leanPodStatus decoded of it, but for its start time.
type statusShape struct {
	// segments are the text before each value cut out and the kind of
	// that value; the last has kind 0 and the text after the last value.
	segments []maskSegment
	st       v1.PodStatus
}

// maskSegment is a status shape's text up to a value cut out.
type maskSegment struct {
	text string
	kind maskKind
	// was is the text of the value cut out, as the shape's own pod had it
	// (a JSON token with the space before it, or a YAML line's rest). A
	// pod whose value there is the same text has a valid one, so alike
	// checks only what is not: most keys and many times are the same in
	// every pod of a workload.
	was string
}

// cutStatus returns data, a status's JSON, as a shape's segments, or false
// when data is not such an object that it walks, or holds a value of
// statusMaskKeys other than a string or null (which the shape cannot take
// for another status's). Keys are cut wherever they are: a status that
// decodes has them only where statusMaskKeys says.
func cutStatus(data []byte) ([]maskSegment, bool) {
	var segments []maskSegment
	from := 0
	// mounts says the value is a container status's volume mounts, whose
	// names are the pod's volumes'.
	var value func(i int, mounts bool) int
	value = func(i int, mounts bool) int {
		switch {
		case i < len(data) && data[i] == '{':
			return walkObject(data, i, func(key []byte, v int) int {
				kind := statusMaskKeys[string(key)]
				if mounts && string(key) == "name" {
					kind = maskString
				}
				if kind == 0 {
					return value(v, string(key) == "volumeMounts")
				}
				_, end := plainTextAt(data, v)
				if end < 0 {
					return -1
				}
				segments = append(segments, maskSegment{text: string(data[from:v]), kind: kind, was: string(data[v:end])})
				from = end
				return end
			})
		case i < len(data) && data[i] == '[':
			return walkArray(data, i, func(e int) int { return value(e, mounts) })
		}
		return skipValue(data, i)
	}
	end := value(skipSpace(data, 0), false)
	if !onlySpaceAfter(data, end) {
		return nil, false
	}
	return append(segments, maskSegment{text: string(data[from:])}), true
}

// statusAlike reads the status at data[at] along shape: it returns the
// offset past it, and its start time, when the status is the shape's text
// with a value of the kind the shape cut out in each place (a time that
// timeOf reads), or -1.
func (d *fastDecoder) statusAlike(data []byte, at int, shape []maskSegment) (end int, start *metav1.Time) {
	for _, seg := range shape {
		if !sameText(data, at, seg.text) {
			return -1, nil
		}
		at += len(seg.text)
		var end int
		switch {
		case seg.kind == 0:
			return at, start
		case seg.kind != maskStartTime && sameText(data, at, seg.was):
			end = at + len(seg.was)
		case seg.kind == maskString:
			_, end = plainTextAt(data, at)
		default:
			// Only the start time is kept (and allocated): the others
			// are read to be checked.
			t, null, e := d.timeValueAt(data, at)
			if end = e; end >= 0 && seg.kind == maskStartTime && !null {
				start = new(metav1.Time)
				*start = t
			}
		}
		if end < 0 {
			return -1, nil
		}
		at = end
	}
	return -1, nil
}

// knownStatus returns the status shape of t's (the last one found first)
// that value, a pod's status, is alike to, or nil; it then sets st to the
// shape's status with value's start time.
func (m *podMemo) knownStatus(t *podTemplate, value []byte, st *v1.PodStatus) *statusShape {
	for i := range t.statuses {
		j := (t.lastStatus + i) % len(t.statuses)
		if end, start := m.w.dec.statusAlike(value, 0, t.statuses[j].segments); end == len(value) {
			m.setStatus(st, t.statuses[j], start)
			t.lastStatus = j
			return t.statuses[j]
		}
	}
	return nil
}

// setStatus sets st to sh's status with the start time start.
func (m *podMemo) setStatus(st *v1.PodStatus, sh *statusShape, start *metav1.Time) {
	*st = sh.st
	st.Conditions, st.StartTime = m.conds[:0], start
}

// rememberStatus remembers for t the status value, decoded into st (a
// copy of which the shape keeps), of which lean kept no conditions and no
// container statuses: of the values a shape cuts out, its start time alone
// (a status otherwise is decoded for each pod). It returns the shape, or
// nil.
func (m *podMemo) rememberStatus(t *podTemplate, value []byte, st *v1.PodStatus) *statusShape {
	if len(t.statuses) >= maxStatusShapes || len(value) > maxKnownSize {
		return nil
	}
	segments, ok := cutStatus(value)
	if !ok {
		return nil
	}
	sh := &statusShape{segments: segments, st: *st}
	sh.st.Conditions, sh.st.StartTime = nil, nil
	t.statuses = append(t.statuses, sh)
	t.lastStatus = len(t.statuses) - 1
	return sh
}

// A status shape of a YAML List's pods is the status's YAML lines with the
// same values cut out, each to the end of its line, as a simple scalar (a
// plain string, a double-quoted one without escapes, or null): a pod's
// status whose lines are the YAML shape's with such a scalar in each place
// converts to the JSON status shape's text with those values, and so
// decodes as its status did.

// yamlStatusShape is a status's YAML lines with the values of
// statusMaskKeys cut out, and the JSON status shape their JSON fits.
type yamlStatusShape struct {
	segments []maskSegment
	json     *statusShape
}

// yamlScalar reads a value cut from a status's YAML line: its contents
// when it is a plain scalar the converter reads as a string, or a
// double-quoted one without escapes, and null for "null"; false for any
// other scalar, or one that holds what YAML does not allow unescaped (the
// status is then converted).
func yamlScalar(s []byte) (contents []byte, null, ok bool) {
	switch {
	case len(s) == 0 || isYAMLWhite(s[len(s)-1]):
		return nil, false, false
	case string(s) == "null":
		return nil, true, true
	case s[0] == '"':
		in, ok := quoted(s)
		return in, false, ok && plainText(in)
	}
	return s, false, isPlainString(s) && plainText(s)
}

// plainText reports whether s is printable to YAML (else the converter
// refuses the item) and plain JSON string contents.
func plainText(s []byte) bool {
	return plainASCII(s) || printable(s) && plainJSONContents(s)
}

// plainASCII reports whether s is printable ASCII without quotes or
// backslashes: printable to YAML, and plain JSON string contents.
func plainASCII(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// cutYAMLStatus returns the block of a status's YAML lines (each ending
// with a line break) as a YAML shape's segments, cut where cutStatus cuts
// its JSON: the values of statusMaskKeys, and names in the entries of a
// volumeMounts sequence, that are simple scalars (yamlScalar). It reads
// the lines as makeYAMLKey does, a key being in the blocks of the keys
// indented less before it; false for a line it does not read.
func cutYAMLStatus(block []byte) ([]maskSegment, bool) {
	type parent struct {
		indent int
		key    string
	}
	var stack []parent
	var segments []maskSegment
	from := 0
	ok := eachBlockLine(block, func(at, end, n int, _ bool) bool {
		line := block[at:end]
		if n == len(line) {
			return false
		}
		k, rest, ok := splitKey(line[n:])
		if !ok {
			return true // a scalar entry
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= n {
			stack = stack[:len(stack)-1]
		}
		if len(rest) == 0 {
			stack = append(stack, parent{n, string(k)})
			return true
		}
		kind := statusMaskKeys[string(k)]
		if string(k) == "name" && len(stack) > 0 && stack[len(stack)-1].key == "volumeMounts" {
			kind = maskString
		}
		if _, _, simple := yamlScalar(rest); kind != 0 && simple {
			segments = append(segments, maskSegment{text: string(block[from : end-len(rest)]), kind: kind, was: string(rest)})
			from = end
		}
		return true
	})
	if !ok {
		return nil, false
	}
	return append(segments, maskSegment{text: string(block[from:])}), true
}

// eachBlockLine calls f with each line of block, which ends with a line
// break: where the line starts and ends (without its break), how far into
// it its content starts, past its indentation and any "- " of sequence
// entries, and whether there was one. It returns false when a line has no
// break or f returns false.
func eachBlockLine(block []byte, f func(at, end, n int, entry bool) bool) bool {
	for at := 0; at < len(block); {
		nl := bytes.IndexByte(block[at:], '\n')
		if nl < 0 {
			return false
		}
		end := at + nl
		line := block[at:end]
		n, entry := indentOf(line), false
		for n+1 < len(line) && line[n] == '-' && line[n+1] == ' ' {
			n, entry = n+2, true
		}
		if !f(at, end, n, entry) {
			return false
		}
		at = end + 1
	}
	return true
}

// statusAlikeYAML reports whether block, a status's YAML lines, is
// shape's with a simple scalar of the kind each place wants (a time that
// timeOf reads), and returns its start time.
func (d *fastDecoder) statusAlikeYAML(block []byte, shape []maskSegment) (start *metav1.Time, ok bool) {
	at := 0
	var text [64]byte
	for _, seg := range shape {
		if !sameText(block, at, seg.text) {
			return nil, false
		}
		at += len(seg.text)
		if seg.kind == 0 {
			return start, at == len(block)
		}
		nl := bytes.IndexByte(block[at:], '\n')
		if nl < 0 {
			return nil, false
		}
		if seg.kind != maskStartTime && string(block[at:at+nl]) == seg.was {
			at += nl
			continue
		}
		contents, null, simple := yamlScalar(block[at : at+nl])
		if !simple {
			return nil, false
		}
		if seg.kind != maskString && !null {
			// As a JSON string, which its contents are plainly.
			t, ok := d.timeOf(append(append(append(text[:0], '"'), contents...), '"'))
			if !ok {
				return nil, false
			}
			if seg.kind == maskStartTime {
				start = new(metav1.Time)
				*start = t
			}
		}
		at += nl
	}
	return nil, false
}

// knownYAMLStatus reports whether block, a pod's status as YAML lines, is
// alike to one of t's YAML status shapes (the last one found first), and
// returns its JSON shape and start time.
func (m *podMemo) knownYAMLStatus(t *podTemplate, block []byte) (*statusShape, *metav1.Time, bool) {
	for i := range t.yamlStatuses {
		j := (t.lastYAMLStatus + i) % len(t.yamlStatuses)
		if start, ok := m.w.dec.statusAlikeYAML(block, t.yamlStatuses[j].segments); ok {
			t.lastYAMLStatus = j
			return t.yamlStatuses[j].json, start, true
		}
	}
	return nil, nil, false
}

// rememberYAMLStatus remembers for t block, the YAML lines of a status
// whose JSON fits sh, when they are cut in the places, and for the kinds,
// sh's text is.
func (m *podMemo) rememberYAMLStatus(t *podTemplate, block []byte, sh *statusShape) {
	if len(t.yamlStatuses) >= maxStatusShapes || len(block) > maxKnownSize {
		return
	}
	segments, ok := cutYAMLStatus(block)
	if !ok || !slices.EqualFunc(segments, sh.segments, func(a, b maskSegment) bool { return a.kind == b.kind }) {
		return
	}
	t.yamlStatuses = append(t.yamlStatuses, yamlStatusShape{segments: segments, json: sh})
	t.lastYAMLStatus = len(t.yamlStatuses) - 1
}
