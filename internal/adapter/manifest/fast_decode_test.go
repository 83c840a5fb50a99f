package manifest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// fastDecodeSeeds are values the pod memo decodes per pod, well and badly
// written.
var fastDecodeSeeds = []string{
	`{"phase": "Running", "hostIP": "10.0.0.1", "podIP": "10.244.0.7", "qosClass": "Burstable", "startTime": "2026-01-01T00:00:00Z",
	  "conditions": [{"lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:00Z", "status": "True", "type": "Ready"}]}`,
	`{"containerStatuses": [{"name": "c", "ready": true, "restartCount": 3, "image": "i", "imageID": "x", "started": true,
	  "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}, "allocatedResources": {"cpu": "100m"}}], "podIPs": [{"ip": "10.0.0.1"}]}`,
	`{"phase": "Running", "phase": "Pending"}`,
	`{"Phase": "Running"}`,
	`{"phase": 3}`,
	`{"phase": "Run\u006eing"}`,
	"{\"phase\": \"Run\tning\"}",
	`{"containerStatuses": [{"restartCount": 1.5}]}`,
	`{"containerStatuses": [{"restartCount": 01}]}`,
	`{"containerStatuses": [{"restartCount": 99999999999}]}`,
	`{"containerStatuses": [{"ready": tru}]}`,
	`{"containerStatuses": null, "conditions": []}`,
	`{"startTime": "yesterday"}`,
	`{"a": "b", "c": "d"}`,
	`{"a": "b", "a": "d"}`,
	`{"a": 1}`,
	`[{"manager": "m", "operation": "Update", "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {}}}]`,
	`[{"managr": "m"}]`,
	`{"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}`,
	`{"f:metadata": {"f:labels": {".": {}, "f:app": {}}}`,
	`{"f:metadata": 1, "f:metadata": 2}`,
	`"2026-01-01T00:00:00Z"`,
	`null`,
}

// FuzzFastDecode: whatever the value, what the fast decoder accepts,
// DecodeStrict decodes without error or strict error into the same value.
func FuzzFastDecode(f *testing.F) {
	for _, s := range fastDecodeSeeds {
		f.Add([]byte(s))
	}
	for _, data := range objectSeeds(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFastDecode(t, data) })
}

// TestFastDecode runs the fuzzer's seeds, and checks the fast decoder
// accepts the usual values.
func TestFastDecode(t *testing.T) {
	accepted := 0
	for _, s := range fastDecodeSeeds {
		accepted += checkFastDecode(t, []byte(s))
	}
	if accepted < 16 {
		t.Errorf("the fast decoder accepted %d of the values twice, want at least 16", accepted)
	}
}

// checkFastDecode decodes data fast and with DecodeStrict into each type
// the pod memo decodes, and into a pod and a node, fails on any
// difference, and returns how many times the fast decoder accepted it
// (twice per type at most).
func checkFastDecode(t *testing.T, data []byte) int {
	t.Helper()
	accepted := 0
	for _, newV := range []func() any{
		func() any { return &v1.PodStatus{} },
		func() any { return new(map[string]string) },
		func() any { return new([]metav1.ManagedFieldsEntry) },
		func() any { return &metav1.Time{} },
		func() any { return new(string) },
		func() any { return &metav1.FieldsV1{} },
		func() any { return &v1.Pod{} },
		func() any { return &v1.Node{} },
	} {
		accepted += checkFastDecodeAs(t, data, newV)
	}
	return accepted
}

// checkFastDecodeAs decodes data fast and with DecodeStrict into what newV
// returns, twice with one decoder (the second time from what it
// remembers), fails on any difference, and returns how many times the
// fast decoder accepted it.
func checkFastDecodeAs(t *testing.T, data []byte, newV func() any) int {
	t.Helper()
	opts := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
	accepted := 0
	var d fastDecoder
	for range 2 {
		fast, slow := newV(), newV()
		if !d.decode(data, fast) {
			break
		}
		accepted++
		strict, err := DecodeStrict(data, slow)
		if err != nil || len(strict) > 0 {
			t.Fatalf("%T: %q decoded fast, but DecodeStrict: %v, %v", fast, data, err, strict)
		}
		if diff := cmp.Diff(slow, fast, opts); diff != "" {
			t.Fatalf("%T: %q decoded otherwise (-DecodeStrict +fast):\n%s", fast, data, diff)
		}
	}
	return accepted
}

// objectSeeds are whole objects as kubectl writes them, for the fast
// decoder's object path: each of kubectlSnapshot's nodes and pods, and the
// objects of the bundled examples.
func objectSeeds(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, item := range kubectlSnapshot(2, 3)["items"].([]any) {
		data, err := json.Marshal(item)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, data)
	}
	files, _ := filepath.Glob("../../../examples/*/*.yaml")
	more, _ := filepath.Glob("../../../examples/*/*/*.yaml")
	for _, path := range append(files, more...) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(data, []byte("\n---")) {
			if j, err := yaml.YAMLToJSON(doc); err == nil && len(j) > 2 {
				out = append(out, j)
			}
		}
	}
	return out
}

// TestFastDecodeObjects holds the fast decoder to DecodeStrict on whole
// objects of every kind the loader reads, and checks it reads kubectl's
// nodes and pods itself.
func TestFastDecodeObjects(t *testing.T) {
	seeds := objectSeeds(t)
	if len(seeds) < 20 {
		t.Fatalf("%d objects, want more", len(seeds))
	}
	accepted := map[string]int{}
	for _, data := range seeds {
		kind := sniffKind(data)
		if newObject(kind) == nil {
			continue
		}
		if checkFastDecodeAs(t, data, func() any { return newObject(kind) }) > 0 {
			accepted[kind]++
		}
	}
	if accepted["Pod"] < 3 || accepted["Node"] < 2 {
		t.Errorf("the fast decoder read %v, want kubectl's 3 pods and 2 nodes at least", accepted)
	}
}

// BenchmarkDecodePod decodes a pod as kubectl writes it, fast and with
// DecodeStrict.
func BenchmarkDecodePod(b *testing.B) {
	var pod []byte
	for _, data := range objectSeeds(b) {
		if sniffKind(data) == "Pod" {
			pod = data
			break
		}
	}
	var d fastDecoder
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			if !d.decode(pod, &v1.Pod{}) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("strict", func(b *testing.B) {
		for b.Loop() {
			if _, err := DecodeStrict(pod, &v1.Pod{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDecodeTypedWithDecoder: a pod or node the fast decoder reads is what
// DecodeStrict makes of it, without strict error or error, for kubectl's
// objects written well and badly.
func TestDecodeTypedWithDecoder(t *testing.T) {
	edits := map[string]func(string) string{
		"as written":       func(s string) string { return s },
		"unknown field":    func(s string) string { return strings.Replace(s, `"metadata":{`, `"metadata":{"colour":"red",`, 1) },
		"duplicate field":  func(s string) string { return strings.Replace(s, `"metadata":{`, `"metadata":{"name":"x",`, 1) },
		"kind twice":       func(s string) string { return strings.Replace(s, `"metadata":{`, `"kind":"Pod","metadata":{`, 1) },
		"wrong case":       func(s string) string { return strings.Replace(s, `"metadata":{`, `"Metadata":{`, 1) },
		"name a number":    func(s string) string { return strings.Replace(s, `"name":"`, `"name":7,"x":"`, 1) },
		"escaped name":     func(s string) string { return strings.Replace(s, `"name":"`, `"name":"\u0061`, 1) },
		"null labels":      func(s string) string { return strings.Replace(s, `"labels":{`, `"labels":null,"x":{`, 1) },
		"null label value": func(s string) string { return strings.Replace(s, `"labels":{`, `"labels":{"k":null,`, 1) },
		"numeric quantity": func(s string) string { return strings.Replace(s, `"cpu":"`, `"cpu":2,"x":"`, 1) },
		"huge exponent":    func(s string) string { return strings.Replace(s, `"cpu":"`, `"cpu":"1e-100000","x":"`, 1) },
		"bad quantity":     func(s string) string { return strings.Replace(s, `"cpu":"`, `"cpu":"4x","x":"`, 1) },
		"int overflow": func(s string) string {
			return strings.Replace(s, `"metadata":{`, `"metadata":{"generation":99999999999999999999,`, 1)
		},
		"float int":        func(s string) string { return strings.Replace(s, `"metadata":{`, `"metadata":{"generation":1.5,`, 1) },
		"truncated":        func(s string) string { return s[:len(s)-1] },
		"trailing data":    func(s string) string { return s + " {}" },
		"space everywhere": func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, ":", " :\n "), ",", "\t,\r\n") },
		"invalid utf8":     func(s string) string { return strings.Replace(s, `"name":"`, "\"name\":\"\xff", 1) },
		"empty arrays":     func(s string) string { return strings.Replace(s, `"metadata":{`, `"metadata":{"finalizers":[],`, 1) },
		"trailing comma": func(s string) string {
			return strings.Replace(s, `"metadata":{`, `"metadata":{"finalizers":["a",],`, 1)
		},
		"deletion time null": func(s string) string {
			return strings.Replace(s, `"metadata":{`, `"metadata":{"deletionTimestamp":null,`, 1)
		},
		"deletion time": func(s string) string {
			return strings.Replace(s, `"metadata":{`, `"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z",`, 1)
		},
		"bad time": func(s string) string {
			return strings.Replace(s, `"metadata":{`, `"metadata":{"deletionTimestamp":"soon",`, 1)
		},
		"bool as string": func(s string) string {
			return strings.Replace(s, `"metadata":{`, `"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"K","name":"n","uid":"u","controller":"true"}],`, 1)
		},
	}
	decoded := 0
	for _, data := range objectSeeds(t) {
		kind := sniffKind(data)
		if kind != "Pod" && kind != "Node" {
			continue
		}
		for name, edit := range edits {
			raw := []byte(edit(string(data)))
			var d fastDecoder
			for range 2 {
				fast := newObject(kind)
				read := d.decode(raw, fast)
				slow, slowStrict, slowErr := decodeTyped(kind, raw)
				if !read {
					continue
				}
				if slowErr != nil || len(slowStrict) > 0 {
					t.Fatalf("%s %s: the decoder reads what DecodeStrict refuses: %v, %v", kind, name, slowStrict, slowErr)
				}
				opts := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
				if diff := cmp.Diff(slow, fast, opts); diff != "" {
					t.Fatalf("%s %s: decoded otherwise (-without +with the decoder):\n%s", kind, name, diff)
				}
			}
			if d.decode(raw, newObject(kind)) {
				decoded++
			}
		}
	}
	if decoded < 5*4 {
		t.Errorf("the decoder read %d of the objects, want more", decoded)
	}
}
