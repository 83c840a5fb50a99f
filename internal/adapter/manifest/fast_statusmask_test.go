package manifest

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// TestStatusMaskKeys holds statusMaskKeys to v1.PodStatus: wherever one of
// its keys is a field's name in the status, the field is of the kind the
// key says (a string, or a time; the start time only at the top), and a
// volumeMounts field's elements have a string name.
func TestStatusMaskKeys(t *testing.T) {
	timeType := reflect.TypeFor[metav1.Time]()
	seen := map[string]int{}
	var walk func(typ reflect.Type, path string, top bool)
	walk = func(typ reflect.Type, path string, top bool) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ == timeType || typ == reflect.TypeFor[resource.Quantity]() {
			return
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch kind := statusMaskKeys[name]; {
			case kind == maskString && ft.Kind() != reflect.String,
				kind == maskTime && ft != timeType,
				kind == maskStartTime && (ft != timeType || !top):
				t.Errorf("%s.%s is a %v, but statusMaskKeys cuts it as kind %d", path, name, f.Type, kind)
			case kind != 0:
				seen[name]++
			}
			if name == "volumeMounts" {
				elem := ft.Elem()
				if nf, ok := elem.FieldByName("Name"); !ok || nf.Type.Kind() != reflect.String || nf.Tag.Get("json") != "name" {
					t.Errorf("%s.volumeMounts holds %v, without a string name", path, elem)
				}
			}
			walk(f.Type, path+"."+name, false)
		}
	}
	walk(reflect.TypeFor[v1.PodStatus](), "status", true)
	for key := range statusMaskKeys {
		if seen[key] == 0 {
			t.Errorf("statusMaskKeys has %s, which the status does not", key)
		}
	}
}

// FuzzStatusAlike: when a status that leanPodStatus reads is cut into a
// shape (cutStatus), any status statusAlike finds alike to the shape
// decodes strictly, as the first does but for the values the shape cut
// out, with the start time statusAlike gives.
func FuzzStatusAlike(f *testing.F) {
	for i, s := range leanStatusSeeds {
		f.Add([]byte(s), []byte(leanStatusSeeds[(i+1)%len(leanStatusSeeds)]))
		f.Add([]byte(s), []byte(s))
	}
	kubelet := leanStatusSeeds[1]
	for _, other := range []string{
		strings.ReplaceAll(kubelet, "2026-01-01T00:00:0", "2026-03-04T05:06:0"),
		strings.ReplaceAll(kubelet, "10.244.0.7", "10.9.8.7"),
		strings.ReplaceAll(kubelet, `"startTime": "2026-01-01T00:00:00Z"`, `"startTime": null`),
		strings.ReplaceAll(kubelet, `"startTime": "2026-01-01T00:00:00Z"`, `"startTime": "2026-01-01T00:00:00+02:00"`),
		strings.ReplaceAll(kubelet, `"startTime": "2026-01-01T00:00:00Z"`, `"startTime": "2026-02-30T00:00:00Z"`),
		strings.ReplaceAll(kubelet, "containerd://0123abcd", `containerd://\u0030`),
		strings.ReplaceAll(kubelet, `"containerd://0123abcd"`, `7`),
		strings.ReplaceAll(kubelet, "kube-api-access-x7k2p", "kube-api-access-q9z8w"),
		strings.ReplaceAll(kubelet, `"lastProbeTime": null`, `"lastProbeTime": "2026-01-01T00:00:00Z"`),
		strings.ReplaceAll(kubelet, `"lastProbeTime": null`, `"lastProbeTime": {}`),
	} {
		f.Add([]byte(kubelet), []byte(other))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var d fastDecoder
		var st v1.PodStatus
		if !d.leanPodStatus(a, &st) {
			return
		}
		shape, ok := cutStatus(a)
		if !ok {
			return
		}
		end, start := d.statusAlike(b, 0, shape)
		if end < 0 {
			return
		}
		if !onlySpaceAfter(b, end) {
			return
		}
		var sa v1.PodStatus
		if strict, err := DecodeStrict(a, &sa); err != nil || len(strict) > 0 {
			t.Fatalf("%q read by leanPodStatus, but DecodeStrict: %v, %v", a, err, strict)
		}
		checkAlikeStatus(t, a, b, &sa, b, start)
	})
}

// checkAlikeStatus fails unless jb (b as JSON) decodes strictly, with the
// start time start, to sa (a's status) but for the values a status shape
// cuts out.
func checkAlikeStatus(t *testing.T, a, b []byte, sa *v1.PodStatus, jb []byte, start *metav1.Time) {
	t.Helper()
	var sb v1.PodStatus
	if strict, err := DecodeStrict(jb, &sb); err != nil || len(strict) > 0 {
		t.Fatalf("%q alike to %q, but DecodeStrict: %v, %v", b, a, err, strict)
	}
	if !reflect.DeepEqual(start, sb.StartTime) && (start == nil || sb.StartTime == nil || !start.Equal(sb.StartTime)) {
		t.Fatalf("%q: start time %v, DecodeStrict %v", b, start, sb.StartTime)
	}
	unmask(sa)
	unmask(&sb)
	if diff := cmp.Diff(*sa, sb, cmp.Comparer(func(x, y resource.Quantity) bool { return x.Cmp(y) == 0 })); diff != "" {
		t.Fatalf("%q alike to %q, but decoded otherwise (-first +second):\n%s", b, a, diff)
	}
}

// unmask clears in st the values a status shape cuts out.
func unmask(st *v1.PodStatus) {
	st.StartTime, st.HostIP, st.PodIP = nil, "", ""
	for i := range st.HostIPs {
		st.HostIPs[i].IP = ""
	}
	for i := range st.PodIPs {
		st.PodIPs[i].IP = ""
	}
	for i := range st.Conditions {
		st.Conditions[i].LastProbeTime, st.Conditions[i].LastTransitionTime = metav1.Time{}, metav1.Time{}
	}
	state := func(s *v1.ContainerState) {
		if s.Running != nil {
			s.Running.StartedAt = metav1.Time{}
		}
		if s.Terminated != nil {
			s.Terminated.StartedAt, s.Terminated.FinishedAt, s.Terminated.ContainerID = metav1.Time{}, metav1.Time{}, ""
		}
	}
	for _, css := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range css {
			cs := &css[i]
			cs.ContainerID = ""
			state(&cs.State)
			state(&cs.LastTerminationState)
			for j := range cs.VolumeMounts {
				cs.VolumeMounts[j].Name = ""
			}
		}
	}
}

// TestStatusAlike checks that the statuses a kubelet writes for a
// workload's pods are found alike, and statuses that differ otherwise not.
func TestStatusAlike(t *testing.T) {
	kubelet := []byte(leanStatusSeeds[1])
	shape, ok := cutStatus(kubelet)
	if !ok {
		t.Fatal("the kubelet's status is not cut")
	}
	var d fastDecoder
	for _, tc := range []struct {
		other string
		alike bool
		start string
	}{
		{string(kubelet), true, "2026-01-01T00:00:00Z"},
		{strings.ReplaceAll(string(kubelet), "2026-01-01T00:00:0", "2026-03-04T05:06:0"), true, "2026-03-04T05:06:00Z"},
		{strings.ReplaceAll(strings.ReplaceAll(string(kubelet), "10.244.0.7", "10.9.8.7"), "x7k2p", "q9z8w"), true, "2026-01-01T00:00:00Z"},
		{strings.ReplaceAll(string(kubelet), `"startTime": "2026-01-01T00:00:00Z"`, `"startTime": null`), true, ""},
		{strings.ReplaceAll(string(kubelet), `"restartCount": 0`, `"restartCount": 1`), false, ""},
		{strings.ReplaceAll(string(kubelet), `"2026-01-01T00:00:02Z"`, `"2026-01-01T00:00:60Z"`), false, ""},
		{strings.ReplaceAll(string(kubelet), `"10.244.0.7"`, `"10.244.0.\u0037"`), false, ""},
		{strings.ReplaceAll(string(kubelet), `"10.244.0.7"`, `10`), false, ""},
		{strings.ReplaceAll(string(kubelet), `"Running"`, `"Pending"`), false, ""},
	} {
		end, start := d.statusAlike([]byte(tc.other), 0, shape)
		if alike := end == len(tc.other); alike != tc.alike {
			t.Errorf("%s: alike %v, want %v", tc.other, alike, tc.alike)
			continue
		}
		if got := ""; tc.alike {
			if start != nil {
				got = start.UTC().Format("2006-01-02T15:04:05Z")
			}
			if got != tc.start {
				t.Errorf("%s: start time %q, want %q", tc.other, got, tc.start)
			}
		}
	}
	// Only the start time is kept: the status's other times (each
	// condition's, the container's start) are read without being
	// allocated, which for 150,000 pods was 20 MB of garbage.
	other := []byte(strings.ReplaceAll(string(kubelet), "2026-01-01T00:00:0", "2026-03-04T05:06:0"))
	if n := strings.Count(string(other), "2026-03-04T05:06:0"); n < 3 {
		t.Fatalf("the status has %d times that differ from the shape's, want several", n)
	}
	if allocs := testing.AllocsPerRun(100, func() { d.statusAlike(other, 0, shape) }); allocs != 1 {
		t.Errorf("statusAlike made %v allocations, want 1 (the start time)", allocs)
	}
}

// FuzzStatusAlikeYAML: when a status's YAML lines that convert and decode
// are cut into a YAML shape whose places are the JSON shape's
// (rememberYAMLStatus), any status statusAlikeYAML finds alike converts
// and decodes strictly, as the first does but for the values cut out,
// with the start time statusAlikeYAML gives.
func FuzzStatusAlikeYAML(f *testing.F) {
	toYAML := func(s string) []byte {
		y, err := yaml.JSONToYAML([]byte(s))
		if err != nil {
			return []byte(s + "\n")
		}
		return y
	}
	for i, s := range leanStatusSeeds {
		f.Add(toYAML(s), toYAML(leanStatusSeeds[(i+1)%len(leanStatusSeeds)]))
	}
	kubelet := string(toYAML(leanStatusSeeds[1]))
	for _, other := range []string{
		kubelet,
		strings.ReplaceAll(kubelet, "2026-01-01T00:00:0", "2026-03-04T05:06:0"),
		strings.ReplaceAll(kubelet, "10.244.0.7", "10.9.8.7"),
		strings.ReplaceAll(kubelet, "10.244.0.7", "10"),
		strings.ReplaceAll(kubelet, "10.244.0.7", "yes"),
		strings.ReplaceAll(kubelet, "10.244.0.7", `"10.244.0.7"`),
		strings.ReplaceAll(kubelet, "10.244.0.7", `'10.244.0.7'`),
		strings.ReplaceAll(kubelet, "10.244.0.7", "10.244.0.7 # a comment"),
		strings.ReplaceAll(kubelet, `startTime: "2026-01-01T00:00:00Z"`, "startTime: null"),
		strings.ReplaceAll(kubelet, `startTime: "2026-01-01T00:00:00Z"`, "startTime: 2026-01-01T00:00:00Z"),
		strings.ReplaceAll(kubelet, `startTime: "2026-01-01T00:00:00Z"`, `startTime: "2026-02-30T00:00:00Z"`),
		strings.ReplaceAll(kubelet, "kube-api-access-x7k2p", "kube-api-access-q9z8w"),
		strings.ReplaceAll(kubelet, "name: app", "name: web"),
		strings.ReplaceAll(kubelet, "lastProbeTime: null", `lastProbeTime: "2026-01-01T00:00:00Z"`),
	} {
		f.Add([]byte(kubelet), []byte(other))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ja, err := yaml.YAMLToJSON(a)
		if err != nil {
			return
		}
		var sa v1.PodStatus
		if strict, err := DecodeStrict(ja, &sa); err != nil || len(strict) > 0 {
			return
		}
		jsonShape, ok := cutStatus(ja)
		if !ok {
			return
		}
		shape, ok := cutYAMLStatus(a)
		if !ok || !slices.EqualFunc(shape, jsonShape, func(x, y maskSegment) bool { return x.kind == y.kind }) {
			return
		}
		var d fastDecoder
		start, ok := d.statusAlikeYAML(b, shape)
		if !ok {
			return
		}
		jb, err := yaml.YAMLToJSON(b)
		if err != nil {
			t.Fatalf("%q alike to %q, but does not convert: %v", b, a, err)
		}
		checkAlikeStatus(t, a, b, &sa, jb, start)
	})
}

// TestStatusAlikeYAML checks that the YAML lines of the statuses a kubelet
// writes for a workload's pods are found alike, cut where their JSON is,
// and lines that differ otherwise, or hold values the converter reads
// otherwise, not.
func TestStatusAlikeYAML(t *testing.T) {
	kubelet, err := yaml.JSONToYAML([]byte(leanStatusSeeds[1]))
	if err != nil {
		t.Fatal(err)
	}
	shape, ok := cutYAMLStatus(kubelet)
	jsonShape, _ := cutStatus([]byte(leanStatusSeeds[1]))
	if !ok || !slices.EqualFunc(shape, jsonShape, func(x, y maskSegment) bool { return x.kind == y.kind }) {
		t.Fatalf("the kubelet's YAML status is cut as %+v, its JSON as %+v", shape, jsonShape)
	}
	var d fastDecoder
	// Its own lines, each value as the shape's pod had it.
	if start, alike := d.statusAlikeYAML(kubelet, shape); !alike || start == nil || !start.Equal(&metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}) {
		t.Errorf("the shape's own status: alike %v, start time %v", alike, start)
	}
	for _, tc := range []struct {
		old, new string
		alike    bool
		start    string
	}{
		{"2026-01-01T00:00:0", "2026-03-04T05:06:0", true, "2026-03-04T05:06:00Z"},
		{"x7k2p", "q9z8w", true, "2026-01-01T00:00:00Z"},
		{"10.244.0.7", `"10.9.8.7"`, true, "2026-01-01T00:00:00Z"},
		{`startTime: "2026-01-01T00:00:00Z"`, "startTime: null", true, ""},
		{"10.244.0.7", "10", false, ""},
		{"10.244.0.7", "true", false, ""},
		{"10.244.0.7", "'10.9.8.7'", false, ""},
		{"10.244.0.7", "10.9.8.7 # where", false, ""},
		{"10.244.0.7", "10.9.8.7 ", false, ""},
		{`startTime: "2026-01-01T00:00:00Z"`, "startTime: 2026-01-01T00:00:00Z", false, ""},
		{`startTime: "2026-01-01T00:00:00Z"`, `startTime: "2026-01-01T00:00:60Z"`, false, ""},
		{"restartCount: 0", "restartCount: 1", false, ""},
		{"name: app", "name: web", false, ""},
	} {
		other := strings.ReplaceAll(string(kubelet), tc.old, tc.new)
		if other == string(kubelet) {
			t.Fatalf("%s → %s changes nothing", tc.old, tc.new)
		}
		start, alike := d.statusAlikeYAML([]byte(other), shape)
		if alike != tc.alike {
			t.Errorf("%s → %s: alike %v, want %v", tc.old, tc.new, alike, tc.alike)
			continue
		}
		if got := ""; alike {
			if start != nil {
				got = start.UTC().Format("2006-01-02T15:04:05Z")
			}
			if got != tc.start {
				t.Errorf("%s → %s: start time %q, want %q", tc.old, tc.new, got, tc.start)
			}
		}
	}
}
