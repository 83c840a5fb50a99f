package manifest

import (
	"bytes"
	"reflect"
	"slices"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod's status is most of what the pod memo decodes per pod, and a lean
// load keeps little of it (leanStatus drops the addresses, the message,
// the containers' states, images and IDs, and every condition but two).
// leanPodStatus reads it in one pass without reflection where it can: the
// fields a lean pod keeps, typed, into the status; the fields it drops
// checked as DecodeStrict would read them (check), so that the status is
// refused exactly when it would be, and not kept (no string made for
// them); the rest, which a kubelet seldom writes, through the fast
// decoder. It returns false for anything it does not read for certain,
// and the caller decodes the status as before. FuzzLeanPodStatus holds it
// to DecodeStrict followed by leanStatus.

var (
	podStatusType       = reflect.TypeFor[v1.PodStatus]()
	containerStatusType = reflect.TypeFor[v1.ContainerStatus]()
	podConditionType    = reflect.TypeFor[v1.PodCondition]()
)

// leanPodStatus decodes the status data holds into st, a zero status but
// for the room of its conditions, as leanStatus would leave it but for
// the conditions, of which it keeps those leanStatus keeps and which it
// leaves empty (not nil) when there are none: the caller then calls
// leanStatus. It returns false for a status it does not decode for
// certain, having written to st.
func (d *fastDecoder) leanPodStatus(data []byte, st *v1.PodStatus) bool {
	ti := d.info(podStatusType)
	end := d.members(data, 0, ti, func(key []byte, slot *typeInfo, ref fieldRef, v int) int {
		var s string
		end := -2
		switch string(key) {
		case "phase":
			s, end = d.stringAt(data, v)
			st.Phase = v1.PodPhase(s)
		case "qosClass":
			s, end = d.stringAt(data, v)
			st.QOSClass = v1.PodQOSClass(s)
		case "nominatedNodeName":
			st.NominatedNodeName, end = d.stringAt(data, v)
		case "reason":
			st.Reason, end = d.stringAt(data, v)
		case "observedGeneration":
			st.ObservedGeneration, end = intAt(data, v, 64)
		case "startTime":
			if end = nullAt(data, v); end < 0 {
				var t metav1.Time
				if t, end = d.timeAt(data, v); end >= 0 {
					st.StartTime = &t
				}
			}
		case "conditions":
			end = d.leanConditions(data, v, st)
		case "containerStatuses":
			end = d.containerStatuses(data, v, &st.ContainerStatuses)
		case "initContainerStatuses":
			end = d.containerStatuses(data, v, &st.InitContainerStatuses)
		case "ephemeralContainerStatuses":
			end = d.containerStatuses(data, v, &st.EphemeralContainerStatuses)
		case "message", "hostIP", "podIP", "hostIPs", "podIPs":
			end = d.check(data, v, slot) // dropped
		}
		if end != -2 {
			return end
		}
		return d.value(data, v, fieldOf(reflect.ValueOf(st).Elem(), ref), slot)
	})
	return onlySpaceAfter(data, end)
}

// leanConditions reads the conditions at data[i], appending to
// st.Conditions those leanStatus keeps (decoded) and checking the others,
// and returns the offset past them.
func (d *fastDecoder) leanConditions(data []byte, i int, st *v1.PodStatus) int {
	if end := nullAt(data, i); end >= 0 {
		return end
	}
	ti := d.info(podConditionType)
	return walkArray(data, i, func(e int) int {
		end := d.check(data, e, ti)
		if end < 0 {
			return -1
		}
		c := data[e:end]
		if !bytes.Contains(c, []byte(v1.DisruptionTarget)) && !bytes.Contains(c, []byte(v1.PodResizePending)) {
			return end // not its type, nor in any of its strings
		}
		var cond v1.PodCondition
		if d.value(c, 0, reflect.ValueOf(&cond).Elem(), ti) != len(c) {
			return -1
		}
		if cond.Type == v1.DisruptionTarget || cond.Type == v1.PodResizePending {
			st.Conditions = append(st.Conditions, cond)
		}
		return end
	})
}

// containerStatuses decodes the container statuses at data[i] into *dst,
// but for the fields leanStatus drops, which it checks, and returns the
// offset past them.
func (d *fastDecoder) containerStatuses(data []byte, i int, dst *[]v1.ContainerStatus) int {
	if end := nullAt(data, i); end >= 0 {
		return end
	}
	ti := d.info(containerStatusType)
	list := []v1.ContainerStatus{}
	end := walkArray(data, i, func(e int) int {
		list = append(list, v1.ContainerStatus{})
		if end := nullAt(data, e); end >= 0 {
			return end
		}
		cs := &list[len(list)-1]
		return d.members(data, e, ti, func(key []byte, slot *typeInfo, ref fieldRef, v int) int {
			end := -2
			switch string(key) {
			case "name":
				cs.Name, end = d.stringAt(data, v)
			case "ready":
				cs.Ready, _, end = boolAt(data, v)
			case "started":
				var b, null bool
				if b, null, end = boolAt(data, v); end >= 0 && !null {
					cs.Started = &b
				}
			case "restartCount":
				var n int64
				n, end = intAt(data, v, 32)
				cs.RestartCount = int32(n)
			case "image", "imageID", "containerID", "state", "lastState", "volumeMounts", "user", "allocatedResourcesStatus":
				end = d.check(data, v, slot) // dropped
			}
			if end != -2 {
				return end
			}
			return d.value(data, v, fieldOf(reflect.ValueOf(cs).Elem(), ref), slot)
		})
	})
	if end >= 0 {
		*dst = list
	}
	return end
}

// members walks the object at data[i] into a struct whose fields the
// decoder knows (ti.fields), as object does: f is given each key with
// its field's type and place, each known key at most once, and returns
// the offset past the value or -1.
func (d *fastDecoder) members(data []byte, i int, ti *typeInfo, f func(key []byte, slot *typeInfo, ref fieldRef, v int) int) int {
	ft := ti.fields
	if ft == nil {
		return -1
	}
	var seen uint64
	var seenMore []int
	n := 0 // the members read
	return walkObject(data, i, func(key []byte, v int) int {
		ref, known := ti.lookup(key, n)
		n++
		switch {
		case !known:
			return -1
		case ref.slot < 64:
			if seen&(1<<ref.slot) != 0 {
				return -1
			}
			seen |= 1 << ref.slot
		default:
			if slices.Contains(seenMore, ref.slot) {
				return -1
			}
			seenMore = append(seenMore, ref.slot)
		}
		return f(key, d.slotInfo(ti, ref), ref, v)
	})
}

// lookup returns the field of ti's struct named key, the nth member of an
// object: objects of one type are most often written with their keys in
// one order, which ti remembers, of the last object that had them (up to
// 64 keys), so that the name is compared with one and not hashed.
func (ti *typeInfo) lookup(key []byte, n int) (fieldRef, bool) {
	if n < len(ti.order) && ti.order[n].name == string(key) {
		return ti.order[n].ref, true
	}
	ref, known := ti.fields[string(key)]
	if known && n <= len(ti.order) && n < 64 {
		ti.order = append(ti.order[:n], orderedKey{string(key), ref})
	}
	return ref, known
}

// slotInfo returns what d knows of the type of ti's field ref.
func (d *fastDecoder) slotInfo(ti *typeInfo, ref fieldRef) *typeInfo {
	if si := ti.slots[ref.slot]; si != nil {
		return si
	}
	t := ti.t.Field(ref.index).Type
	if ref.inner >= 0 {
		t = t.Field(ref.inner).Type
	}
	si := d.info(t)
	ti.slots[ref.slot] = si
	return si
}

// fieldOf returns the field ref of the struct v.
func fieldOf(v reflect.Value, ref fieldRef) reflect.Value {
	v = v.Field(ref.index)
	if ref.inner >= 0 {
		v = v.Field(ref.inner)
	}
	return v
}

// check returns the offset past the value at data[i] (after space) when
// DecodeStrict would decode it into a value of ti's type without error or
// strict error, or -1 when it would not or check does not know: it reads
// plain strings, booleans, integers, times, pointers, slices and structs
// (each key known and given once), and null for any of them, and keeps
// nothing.
func (d *fastDecoder) check(data []byte, i int, ti *typeInfo) int {
	i = skipSpace(data, i)
	if end := nullAt(data, i); end >= 0 {
		return end // null leaves every kind of value as it is
	}
	if ti.self {
		if ti.t != timeType {
			return -1
		}
		_, end := d.timeAt(data, i)
		return end
	}
	switch ti.kind {
	case reflect.String:
		_, end := plainTextAt(data, i)
		return end
	case reflect.Bool:
		_, _, end := boolAt(data, i)
		return end
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, end := intAt(data, i, ti.t.Bits())
		return end
	case reflect.Pointer:
		return d.check(data, i, d.elemInfo(ti))
	case reflect.Slice:
		elem := d.elemInfo(ti)
		if elem.kind == reflect.Uint8 {
			return -1 // []byte is base64
		}
		return walkArray(data, i, func(e int) int { return d.check(data, e, elem) })
	case reflect.Struct:
		return d.members(data, i, ti, func(_ []byte, slot *typeInfo, _ fieldRef, v int) int {
			return d.check(data, v, slot)
		})
	}
	return -1
}

// nullAt returns the offset past the null at data[i] (after space), or -1
// when there is none.
func nullAt(data []byte, i int) int {
	i = skipSpace(data, i)
	if len(data)-i >= 4 && string(data[i:i+4]) == "null" && (len(data) == i+4 || !literalByte[data[i+4]]) {
		return i + 4
	}
	return -1
}

// stringAt reads the plain string or null at data[i], and returns the
// offset past it, or -1; the same string for the same text, up to
// maxNames texts (the phases, QoS classes, reasons and container names
// most pods share, managers and operations of managed fields) rather than
// one made for each.
func (d *fastDecoder) stringAt(data []byte, i int) (string, int) {
	text, end := plainTextAt(data, i)
	if end < 0 {
		return "", -1
	}
	if s, ok := d.names[string(text)]; ok {
		return s, end
	}
	s := string(text)
	if d.names == nil {
		d.names = map[string]string{}
	}
	if len(d.names) < maxNames {
		d.names[s] = s
	}
	return s, end
}

// maxNames bounds the strings a fastDecoder remembers (stringAt).
const maxNames = 1024

// plainTextAt returns the contents of the plain string at data[i] (after
// space), nil for null, and the offset past it, or -1 for anything else.
func plainTextAt(data []byte, i int) ([]byte, int) {
	i = skipSpace(data, i)
	if end := nullAt(data, i); end >= 0 {
		return nil, end
	}
	if i >= len(data) || data[i] != '"' {
		return nil, -1
	}
	end := skipString(data, i)
	if end < 0 || !plainJSONContents(data[i+1:end-1]) {
		return nil, -1
	}
	return data[i+1 : end-1], end
}

// boolAt reads the boolean or null at data[i], and returns the offset past
// it, or -1.
func boolAt(data []byte, i int) (b, null bool, end int) {
	end = skipValue(data, i)
	if end < 0 {
		return false, false, -1
	}
	switch string(data[skipSpace(data, i):end]) {
	case "true":
		return true, false, end
	case "false":
		return false, false, end
	case "null":
		return false, true, end
	}
	return false, false, -1
}

// intAt reads the decimal integer of bits bits, or null, at data[i], and
// returns the offset past it, or -1 for anything else (which the
// reflection decoder would hand to DecodeStrict).
func intAt(data []byte, i int, bits int) (int64, int) {
	i = skipSpace(data, i)
	end := skipValue(data, i)
	if end < 0 {
		return 0, -1
	}
	text := data[i:end]
	if string(text) == "null" {
		return 0, end
	}
	if !isDecimalInt(text) {
		return 0, -1
	}
	n, err := strconv.ParseInt(string(text), 10, bits)
	if err != nil {
		return 0, -1
	}
	return n, end
}

// timeAt reads the time at data[i] (after space) as a metav1.Time decodes
// itself (timeOf), and returns the offset past it, or -1 for a value it
// does not read.
func (d *fastDecoder) timeAt(data []byte, i int) (metav1.Time, int) {
	end := skipValue(data, i)
	if end < 0 {
		return metav1.Time{}, -1
	}
	t, ok := d.timeOf(data[i:end])
	if !ok {
		return metav1.Time{}, -1
	}
	return t, end
}

// timeOf decodes the JSON text of a time, null or a plain string, as a
// metav1.Time decodes itself, remembering each in a form other than the
// API server's by its text (up to maxTimes: the pods of a cluster share a
// few creation and start times); false for any other text, or one the
// time refuses.
func (d *fastDecoder) timeOf(text []byte) (metav1.Time, bool) {
	// A time's UnmarshalJSON makes null the zero time (kubectl writes a
	// pod condition's lastProbeTime as null).
	if string(text) == "null" {
		return metav1.Time{}, true
	}
	// The API server's form is read faster than it is looked up.
	if parsed, ok := utcSecond(text); ok {
		return metav1.Time{Time: parsed.Local()}, true
	}
	if t, ok := d.times[string(text)]; ok {
		return t, true
	}
	// As UnmarshalJSON reads it, without encoding/json: a plain string's
	// contents are what json.Unmarshal would give.
	str, plain := plainJSONString(text)
	if !plain {
		return metav1.Time{}, false
	}
	parsed, err := time.Parse(time.RFC3339, str)
	if err != nil {
		return metav1.Time{}, false
	}
	t := metav1.Time{Time: parsed.Local()}
	if d.times == nil {
		d.times = map[string]metav1.Time{}
	}
	if len(d.times) < maxTimes {
		d.times[string(text)] = t
	}
	return t, true
}

// utcSecond reads the JSON string of a time to the second in UTC, as the
// API server writes times ("2006-01-02T15:04:05Z"), as time.Parse reads
// it with layout time.RFC3339, without making a string of it; false for
// any other text, or a date or time of day out of range.
func utcSecond(text []byte) (time.Time, bool) {
	const n = len(`"2006-01-02T15:04:05Z"`)
	if len(text) != n || text[0] != '"' || text[5] != '-' || text[8] != '-' || text[11] != 'T' || text[14] != ':' || text[17] != ':' || text[20] != 'Z' || text[21] != '"' {
		return time.Time{}, false
	}
	num := func(s []byte) (int, bool) {
		v := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	year, ok1 := num(text[1:5])
	month, ok2 := num(text[6:8])
	day, ok3 := num(text[9:11])
	hour, ok4 := num(text[12:14])
	minute, ok5 := num(text[15:17])
	sec, ok6 := num(text[18:20])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	if day > daysIn(month, year) {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC), true
}

// timeAt is utcSecond of the JSON string at data[at], when it is one of
// its length: the time and the offset past it. Such a string is plain (a
// digit or one of "-T:Z" in each place), so it is the one plainTextAt
// reads there, and the time timeOf reads of it.
func timeAt(data []byte, at int) (time.Time, int, bool) {
	const n = len(`"2006-01-02T15:04:05Z"`)
	if len(data)-at < n {
		return time.Time{}, -1, false
	}
	t, ok := utcSecond(data[at : at+n])
	return t, at + n, ok
}

// timeValueAt reads the time or null at data[at] (after space) as
// timeOf reads it: the time, whether it is null, and the offset past it,
// or -1. A time as the API server writes it is read where it stands
// (timeAt), anything else as a plain string first.
func (d *fastDecoder) timeValueAt(data []byte, at int) (t metav1.Time, null bool, end int) {
	if parsed, end, ok := timeAt(data, at); ok {
		return metav1.Time{Time: parsed.Local()}, false, end
	}
	text, end := plainTextAt(data, at)
	if end < 0 {
		return metav1.Time{}, false, -1
	}
	if t, ok := d.timeOf(data[at:end]); ok {
		return t, text == nil, end
	}
	return metav1.Time{}, false, -1
}

// daysIn returns the days of month (1 to 12) of year in the proleptic
// Gregorian calendar, as package time counts them.
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
