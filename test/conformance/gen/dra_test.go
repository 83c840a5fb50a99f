package gen

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	resourceapi "k8s.io/api/resource/v1"
)

// TestDRAProfile checks the DRA profile: deterministic, YAML round trip,
// the general invariants, and a cluster whose claims could exist: every
// allocated device is published on the allocation's node and held by one
// claim only, reserved pods exist, run on that node and name the claim,
// bound pods' claims exist, and requests carry the API server's defaults.
func TestDRAProfile(t *testing.T) {
	var withSlices, withAllocated, preemptorClaims int
	for seed := range int64(*seeds) {
		s := Generate(seed, DRA)
		y, err := s.YAML()
		if err != nil {
			t.Fatalf("seed %d: YAML: %v", seed, err)
		}
		if again, _ := Generate(seed, DRA).YAML(); !bytes.Equal(y, again) {
			t.Fatalf("seed %d: two runs differ", seed)
		}
		got, err := Parse(y)
		if err != nil {
			t.Fatalf("seed %d: Parse: %v", seed, err)
		}
		if diff := cmp.Diff(s, got); diff != "" {
			t.Fatalf("seed %d: round trip (-want,+got):\n%s", seed, diff)
		}
		errs := invariantErrors(s)
		errs = append(errs, draErrors(s)...)
		for _, err := range errs {
			t.Errorf("seed %d: %v", seed, err)
		}
		if t.Failed() {
			t.FailNow()
		}
		if len(s.ResourceSlices) > 0 {
			withSlices++
		}
		for _, c := range s.ResourceClaims {
			if c.Status.Allocation != nil {
				withAllocated++
				break
			}
		}
		if len(s.Preemptor.Spec.ResourceClaims) > 0 {
			preemptorClaims++
		}
	}
	n := *seeds
	if withSlices < n*8/10 || withAllocated < n/2 || preemptorClaims < n*7/10 {
		t.Errorf("of %d scenarios, %d publish devices, %d have allocated claims, %d preemptors have claims; the profile is too tame", n, withSlices, withAllocated, preemptorClaims)
	}
}

func draErrors(s *Scenario) []error {
	var errs []error
	published := map[string]bool{} // pool/device
	for _, rs := range s.ResourceSlices {
		if rs.Spec.NodeName == nil || rs.Spec.Pool.Name != *rs.Spec.NodeName {
			errs = append(errs, fmt.Errorf("slice %s: pool %q is not its node", rs.Name, rs.Spec.Pool.Name))
		}
		for _, d := range rs.Spec.Devices {
			published[rs.Spec.Pool.Name+"/"+d.Name] = true
		}
	}
	pods := map[string]int{}
	for i, p := range s.Pods {
		pods[p.Namespace+"/"+p.Name] = i
	}
	claims := map[string]*resourceapi.ResourceClaim{}
	held := map[string]string{}
	for _, c := range s.ResourceClaims {
		claims[c.Namespace+"/"+c.Name] = c
		for _, r := range c.Spec.Devices.Requests {
			if e := r.Exactly; e != nil && (e.AllocationMode == "" || e.AllocationMode == resourceapi.DeviceAllocationModeExactCount && e.Count == 0) {
				errs = append(errs, fmt.Errorf("claim %s/%s: request %s not defaulted", c.Namespace, c.Name, r.Name))
			}
		}
		a := c.Status.Allocation
		if a == nil {
			continue
		}
		node := a.NodeSelector.NodeSelectorTerms[0].MatchFields[0].Values[0]
		for _, r := range a.Devices.Results {
			id := r.Pool + "/" + r.Device
			if r.Pool != node || !published[id] {
				errs = append(errs, fmt.Errorf("claim %s/%s: device %s is not published on node %s", c.Namespace, c.Name, id, node))
			}
			if r.ShareID != nil {
				continue
			}
			if prev, dup := held[id]; dup {
				errs = append(errs, fmt.Errorf("device %s allocated to claims %s and %s/%s", id, prev, c.Namespace, c.Name))
			}
			held[id] = c.Namespace + "/" + c.Name
		}
		for _, ref := range c.Status.ReservedFor {
			i, ok := pods[c.Namespace+"/"+ref.Name]
			if !ok {
				errs = append(errs, fmt.Errorf("claim %s/%s: reserved for missing pod %s", c.Namespace, c.Name, ref.Name))
				continue
			}
			p := s.Pods[i]
			named := false
			for _, pc := range p.Spec.ResourceClaims {
				named = named || pc.ResourceClaimName != nil && *pc.ResourceClaimName == c.Name
			}
			if p.Spec.NodeName != node || p.UID != ref.UID || !named {
				errs = append(errs, fmt.Errorf("claim %s/%s: reserved for pod %s, which is not its user on node %s", c.Namespace, c.Name, ref.Name, node))
			}
		}
	}
	for _, p := range s.Pods {
		if p.Spec.NodeName == "" {
			continue
		}
		for _, pc := range p.Spec.ResourceClaims {
			if pc.ResourceClaimName == nil || claims[p.Namespace+"/"+*pc.ResourceClaimName] == nil {
				errs = append(errs, fmt.Errorf("bound pod %s/%s: claim %s does not exist", p.Namespace, p.Name, pc.Name))
			}
		}
	}
	return errs
}
