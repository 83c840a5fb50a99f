package manifest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// kubeletManagedYAML is managed fields as kubectl writes them in YAML: a
// controller's entry and a kubelet's, naming the pod's IP.
const kubeletManagedYAML = `- apiVersion: v1
  fieldsType: FieldsV1
  fieldsV1:
    f:metadata:
      f:ownerReferences:
        .: {}
        k:{"uid":"u1"}: {}
  manager: kube-controller-manager
  operation: Update
  time: "2026-01-01T00:00:00Z"
- apiVersion: v1
  fieldsType: FieldsV1
  fieldsV1:
    f:status:
      f:podIPs:
        .: {}
        k:{"ip":"10.1.0.7"}:
          .: {}
          f:ip: {}
  manager: kubelet
  operation: Update
  subresource: status
  time: "2026-01-01T00:00:05Z"
`

// FuzzManagedAlikeYAML: when managed fields as YAML lines that convert and
// decode are cut into a managed shape, any managed fields
// managedAlikeYAML finds alike convert and decode strictly, with field
// sets that are JSON, to the same entries but for their times and field
// sets.
func FuzzManagedAlikeYAML(f *testing.F) {
	for _, other := range []string{
		kubeletManagedYAML,
		strings.ReplaceAll(kubeletManagedYAML, "10.1.0.7", "10.9.8.7"),
		strings.ReplaceAll(kubeletManagedYAML, `"2026-01-01T00:00:05Z"`, `"2026-03-04T05:06:07Z"`),
		strings.ReplaceAll(kubeletManagedYAML, `"2026-01-01T00:00:05Z"`, `"2026-02-30T00:00:00Z"`),
		strings.ReplaceAll(kubeletManagedYAML, `"2026-01-01T00:00:05Z"`, `null`),
		strings.ReplaceAll(kubeletManagedYAML, `"2026-01-01T00:00:05Z"`, `5`),
		strings.ReplaceAll(kubeletManagedYAML, `k:{"ip":"10.1.0.7"}`, `k:{"ip": "10.1.0.7"}`),
		strings.ReplaceAll(kubeletManagedYAML, `k:{"ip":"10.1.0.7"}`, `'k:{"ip":"10.1.0.7"}'`),
		strings.ReplaceAll(kubeletManagedYAML, `k:{"ip":"10.1.0.7"}`, "k:{\"ip\":\"\x7f\"}"),
		strings.ReplaceAll(kubeletManagedYAML, `k:{"ip":"10.1.0.7"}`, `k:{"ip":"x"} # c`),
		strings.ReplaceAll(kubeletManagedYAML, "operation: Update\n  subresource", "operation: Apply\n  subresource"),
	} {
		f.Add([]byte(kubeletManagedYAML), []byte(other))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ea, ok := decodeManagedYAML(a)
		if !ok {
			return
		}
		shape, ok := cutYAMLManaged(a)
		if !ok {
			return
		}
		var d fastDecoder
		if !d.managedAlikeYAML(b, shape) {
			return
		}
		eb, ok := decodeManagedYAML(b)
		if !ok {
			t.Fatalf("%q alike to %q, but it does not convert, decode or hold JSON field sets", b, a)
		}
		if diff := cmp.Diff(ea, eb); diff != "" {
			t.Fatalf("%q alike to %q, but decoded otherwise (-first +second):\n%s", b, a, diff)
		}
	})
}

// decodeManagedYAML converts and decodes data strictly as managed fields
// whose field sets are JSON, and returns them without their times and
// field sets.
func decodeManagedYAML(data []byte) ([]metav1.ManagedFieldsEntry, bool) {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, false
	}
	return decodeManagedJSON(j)
}

// TestManagedAlikeYAML checks that managed fields as a workload's pods
// have them are found alike, and managed fields that differ otherwise, or
// hold what the converter reads otherwise, not.
func TestManagedAlikeYAML(t *testing.T) {
	shape, ok := cutYAMLManaged([]byte(kubeletManagedYAML))
	if !ok {
		t.Fatal("not cut")
	}
	var d fastDecoder
	for _, tc := range []struct {
		old, new string
		alike    bool
	}{
		{"", "", true},
		{"10.1.0.7", "10.9.8.7", true},
		{"10.1.0.7", "10.1.0.77", true},
		{`k:{"ip":"10.1.0.7"}`, `k:{"ip":"10.1.0.7"}x`, true},
		{`k:{"uid":"u1"}`, `k:{"uid":"u2"}`, true},
		{`"2026-01-01T00:00:05Z"`, `"2026-03-04T05:06:07Z"`, true},
		{`"2026-01-01T00:00:05Z"`, "null", true},
		{`"2026-01-01T00:00:05Z"`, `"2026-02-30T00:00:00Z"`, false},
		{`"2026-01-01T00:00:05Z"`, "2026-01-01T00:00:05Z", false},
		{`k:{"ip":"10.1.0.7"}`, `k:{"ip": "10.1.0.7"}`, false},
		{`k:{"ip":"10.1.0.7"}`, `'k:{"ip":"10.1.0.7"}'`, false},
		{`k:{"ip":"10.1.0.7"}`, "k:{\"ip\":\"\x7f\"}", false},
		{"manager: kubelet", "manager: kubelets", false},
	} {
		other := strings.ReplaceAll(kubeletManagedYAML, tc.old, tc.new)
		if alike := d.managedAlikeYAML([]byte(other), shape); alike != tc.alike {
			t.Errorf("%s → %s: alike %v, want %v", tc.old, tc.new, alike, tc.alike)
		}
	}
}

// FuzzManagedAlike: when managed fields' JSON that decodes, with field sets
// that are JSON, is cut into a managed shape, any managed fields
// managedAlike finds alike decode strictly, with field sets that are JSON,
// to the same entries but for their times and field sets.
func FuzzManagedAlike(f *testing.F) {
	for i, s := range leanManagedSeeds {
		f.Add([]byte(s), []byte(leanManagedSeeds[(i+1)%len(leanManagedSeeds)]))
		f.Add([]byte(s), []byte(s))
	}
	kubelet := leanManagedSeeds[1]
	for _, other := range []string{
		strings.ReplaceAll(kubelet, "10.244.0.7", "10.9.8.7"),
		strings.ReplaceAll(kubelet, "10.244.0.7", `\q`),
		strings.ReplaceAll(kubelet, "10.244.0.7", `\"`),
		strings.ReplaceAll(kubelet, `"2026-01-01T00:00:05Z"`, `"2026-02-30T00:00:05Z"`),
		strings.ReplaceAll(kubelet, `"2026-01-01T00:00:05Z"`, `null`),
		strings.ReplaceAll(kubelet, `"2026-01-01T00:00:05Z"`, `5`),
	} {
		f.Add([]byte(kubelet), []byte(other))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ea, ok := decodeManagedJSON(a)
		if !ok {
			return
		}
		shape, ok := cutManaged(a)
		if !ok {
			return
		}
		var d fastDecoder
		if d.managedAlike(b, 0, shape) != len(b) {
			return
		}
		eb, ok := decodeManagedJSON(b)
		if !ok {
			t.Fatalf("%q alike to %q, but it does not decode or hold JSON field sets", b, a)
		}
		if diff := cmp.Diff(ea, eb); diff != "" {
			t.Fatalf("%q alike to %q, but decoded otherwise (-first +second):\n%s", b, a, diff)
		}
	})
}

// decodeManagedJSON decodes data strictly as managed fields whose field
// sets are JSON, and returns them without their times and field sets.
func decodeManagedJSON(data []byte) ([]metav1.ManagedFieldsEntry, bool) {
	var entries []metav1.ManagedFieldsEntry
	if strict, err := DecodeStrict(data, &entries); err != nil || len(strict) > 0 {
		return nil, false
	}
	for i := range entries {
		if f := entries[i].FieldsV1; f != nil && !json.Valid(f.Raw) {
			return nil, false
		}
		entries[i].Time, entries[i].FieldsV1 = nil, nil
	}
	return entries, true
}

// TestManagedAlike checks that managed fields as a workload's pods have
// them are found alike, and managed fields that differ otherwise not.
func TestManagedAlike(t *testing.T) {
	kubelet := leanManagedSeeds[1]
	shape, ok := cutManaged([]byte(kubelet))
	if !ok {
		t.Fatal("not cut")
	}
	var d fastDecoder
	for _, tc := range []struct {
		old, new string
		alike    bool
	}{
		{"", "", true},
		{"10.244.0.7", "10.9.8.7", true},
		{"10.244.0.7", "10.244.0.77", true},
		{"10.244.0.7", `10.9.8.\u0037`, true},
		{`"2026-01-01T00:00:05Z"`, `"2026-03-04T05:06:07Z"`, true},
		{`"2026-01-01T00:00:05Z"`, "null", true},
		{"10.244.0.7", `\q`, false},
		{`"2026-01-01T00:00:05Z"`, `"2026-02-30T00:00:05Z"`, false},
		{`"2026-01-01T00:00:05Z"`, "5", false},
		{`"manager":"kubelet"`, `"manager":"kubelets"`, false},
	} {
		other := strings.ReplaceAll(kubelet, tc.old, tc.new)
		if alike := d.managedAlike([]byte(other), 0, shape) == len(other); alike != tc.alike {
			t.Errorf("%s → %s: alike %v, want %v", tc.old, tc.new, alike, tc.alike)
		}
	}
}
