package manifest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// leanManagedSeeds are managed fields as the API server records them, and
// written to be refused.
var leanManagedSeeds = []string{
	`[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}}},"manager":"kube-controller-manager","operation":"Update","time":"2026-01-01T00:00:00Z"}]`,
	`[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:podIPs":{".":{},"k:{\"ip\":\"10.244.0.7\"}":{".":{},"f:ip":{}}}}},"manager":"kubelet","operation":"Update","subresource":"status","time":"2026-01-01T00:00:05Z"},` +
		`{"manager":"kubectl","operation":"Apply","fieldsV1":null,"time":null}]`,
	`[{"fieldsV1":{"f:status":{"f:podIPs":{".":{},"k:{\"ip\":\"10.244.0.7\"}":{".":{},"f:ip":{}}}}}}]`,
	// The kubelet's field set but for its IP, after the seed above (the
	// same field set bar one string, which must be one).
	`[{"fieldsV1":{"f:status":{"f:podIPs":{".":{},"k:{\"ip\":\"10.244.0.77\"}":{".":{},"f:ip":{}}}}}}]`,
	`[{"fieldsV1":{"f:status":{"f:podIPs":{".":{},"k:{\"ip\":\"10.244.0.\u0037\"}":{".":{},"f:ip":{}}}}}}]`,
	`[{"fieldsV1":{"f:status":{"f:podIPs":{".":{},"k:{\"ip\":\"10.244.0.\q\"}":{".":{},"f:ip":{}}}}}}]`,
	`[{"fieldsV1":{"f:status":{"f:podIPs":{".":{},"k:{\"ip\":\"10.244.0.` + "\x01" + `\"}":{".":{},"f:ip":{}}}}}}]`,
	`[{"fieldsV1":{"f:status":{"f:podIPs":{".":{},"k:{\"ip\":\"1\"}":{".":{},"f:ip":{}}}}}}]`,
	`[{"fieldsV1":{"f:status":{"f:podIPs":{".":{},"k:{\"ip\":\"10.244.0.7\"}\"}":{".":{},"f:ip":{}}}}}}]`,
	`[{"fieldsV1":{"f:status":{"f:podIPs":{".":{},"k:{\"ip\":\"10.244.0.7\\\"}":{".":{},"f:ip":{}}}}}}]`,
	`[{"fieldsV1":{"f:status":{"f:podIPs":{".":{},"k:{\"ip\":\"10.244.0.7\"}":{".":{},"f:ip":{}}}}}x}]`,
	`[{"fieldsV1":{"f:status":{"f:podIPs":{".":{},"k:{\"ip\":\"10.244.0.7\"}":{".":{},"f:ip":{}}}}},"fieldsV1":{}}]`,
	`[]`,
	`null`,
	` [ { "manager" : "m" , "operation" : "Update" } ] `,
	`[{"manager":"m","manager":"n"}]`,
	`[{"Manager":"m"}]`,
	`[{"unknown":1}]`,
	`[{"fieldsV1":{"a":}}]`,
	`[{"fieldsV1":[1,2,{"b":"\u00e9"}]}]`,
	`[{"time":"2026-01-01"}]`,
	`[{"manager":"a\nb"}]`,
	`[{"manager":1}]`,
	`[null]`,
	`[{}],`,
	`{}`,
}

// FuzzLeanManagedFields: whatever the managed fields, what
// leanManagedFields accepts DecodeStrict decodes without error or strict
// error into the same entries but for their field sets.
func FuzzLeanManagedFields(f *testing.F) {
	for _, s := range leanManagedSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkLeanManaged(t, data) })
}

// TestLeanManagedFields runs the fuzzer's seeds, and checks
// leanManagedFields reads the managed fields the API server writes.
func TestLeanManagedFields(t *testing.T) {
	seedsAccepted(t, "leanManagedFields", leanManagedSeeds, checkLeanManaged, 2*5)
}

// checkLeanManaged decodes data with leanManagedFields, twice with one
// decoder and into room an earlier pod left, and with DecodeStrict, fails
// on any difference but the field sets, and returns how many times
// leanManagedFields accepted it.
func checkLeanManaged(t *testing.T, data []byte) int {
	t.Helper()
	// The decoder has read other managed fields before, whose field sets
	// it remembers (fieldSets.at).
	var d fastDecoder
	var primed []metav1.ManagedFieldsEntry
	var sets fieldSets
	if !d.leanManagedFields([]byte(leanManagedSeeds[1]), &primed, &sets) || len(sets) != 1 {
		t.Fatalf("leanManagedFields refused %s, or remembers %d field sets", leanManagedSeeds[1], len(sets))
	}
	room := []metav1.ManagedFieldsEntry{{Manager: "stale", Subresource: "left"}}
	accepted := 0
	for range 2 {
		fast := room[:0]
		if !d.leanManagedFields(data, &fast, &sets) {
			break
		}
		accepted++
		var slow []metav1.ManagedFieldsEntry
		strict, err := DecodeStrict(data, &slow)
		if err != nil || len(strict) > 0 {
			t.Fatalf("%q read by leanManagedFields, but DecodeStrict: %v, %v", data, err, strict)
		}
		for i := range slow {
			slow[i].FieldsV1, slow[i].Time = nil, nil
		}
		if diff := cmp.Diff(slow, fast); diff != "" {
			t.Fatalf("%q read otherwise (-DecodeStrict +leanManagedFields):\n%s", data, diff)
		}
	}
	return accepted
}
