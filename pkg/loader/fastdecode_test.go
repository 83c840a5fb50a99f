package loader

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// the pod memo decodes, fails on any difference, and returns how many
// times the fast decoder accepted it (twice per type at most).
func checkFastDecode(t *testing.T, data []byte) int {
	t.Helper()
	opts := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
	accepted := 0
	for _, newV := range []func() any{
		func() any { return &v1.PodStatus{} },
		func() any { return new(map[string]string) },
		func() any { return new([]metav1.ManagedFieldsEntry) },
		func() any { return &metav1.Time{} },
		func() any { return new(string) },
		func() any { return &metav1.FieldsV1{} },
	} {
		// Twice with one decoder: the second time from what it remembers.
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
	}
	return accepted
}
