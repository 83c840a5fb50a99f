package loader

import (
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
				segments = append(segments, maskSegment{text: string(data[from:v]), kind: kind})
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
		if len(data)-at < len(seg.text) || string(data[at:at+len(seg.text)]) != seg.text {
			return -1, nil
		}
		at += len(seg.text)
		if seg.kind == 0 {
			return at, start
		}
		text, end := plainTextAt(data, at)
		if end < 0 {
			return -1, nil
		}
		if seg.kind != maskString {
			t, ok := d.timeOf(data[at:end])
			if !ok {
				return -1, nil
			}
			if seg.kind == maskStartTime && text != nil {
				start = &t
			}
		}
		at = end
	}
	return -1, nil
}

// knownStatus reports whether value, a pod's status, is alike to one of
// t's status shapes (the last one found first); it then sets st to the
// shape's status with value's start time.
func (m *podMemo) knownStatus(t *podTemplate, value []byte, st *v1.PodStatus) bool {
	for i := range t.statuses {
		sh := t.statuses[(t.lastStatus+i)%len(t.statuses)]
		if end, start := m.dec.statusAlike(value, 0, sh.segments); end == len(value) {
			*st = sh.st
			st.Conditions, st.StartTime = m.conds[:0], start
			t.lastStatus = (t.lastStatus + i) % len(t.statuses)
			return true
		}
	}
	return false
}

// rememberStatus remembers for t the status value, decoded into st (a
// copy of which the shape keeps), of which lean kept no conditions and no
// container statuses: of the values a shape cuts out, its start time alone
// (a status otherwise is decoded for each pod).
func (m *podMemo) rememberStatus(t *podTemplate, value []byte, st *v1.PodStatus) {
	if len(t.statuses) >= maxStatusShapes || len(value) > maxKnownSize {
		return
	}
	segments, ok := cutStatus(value)
	if !ok {
		return
	}
	sh := &statusShape{segments: segments, st: *st}
	sh.st.Conditions, sh.st.StartTime = nil, nil
	t.statuses = append(t.statuses, sh)
	t.lastStatus = len(t.statuses) - 1
}
