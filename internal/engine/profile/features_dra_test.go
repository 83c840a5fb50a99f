package profile

import "testing"

// TestDRAPreemptionGate checks that DRAPreemption parses on its own and is
// not handed to kube-scheduler v1.37, which does not know it.
func TestDRAPreemptionGate(t *testing.T) {
	got, err := ParseFeatureGates("DRAPreemption=true")
	if err != nil || got != (Features{DRAPreemption: true}) {
		t.Fatalf("got %+v, %v; want DRAPreemption only", got, err)
	}
	if _, ok := got.Gates()[GateDRAPreemption]; ok {
		t.Errorf("Gates() = %v passes DRAPreemption to upstream", got.Gates())
	}
}
