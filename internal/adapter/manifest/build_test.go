package manifest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// TestNodeSumsInParts holds CheckNodeSums on pods kept in parts (whose
// shape's bound boundsFit works out once) to the same pods whole: random
// pods of a few shared shapes, bound to a few nodes, with requests near
// the 64-bit bound, some finished or unbound, some with container statuses
// that allocate more than the spec requests.
func TestNodeSumsInParts(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	quantity := func() resource.Quantity {
		// Milli-CPU from tiny to a third of the bound.
		return *resource.NewMilliQuantity([]int64{100, 4000, 1 << 40, 1 << 61, 3 << 61}[r.IntN(5)], resource.DecimalSI)
	}
	var overflowed, fitted int
	for trial := range 400 {
		var shapes []*v1.Pod
		for range 1 + r.IntN(3) {
			shapes = append(shapes, &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: quantity()}}}}}})
		}
		var parts, whole snapshot.Objects
		for i := range r.IntN(12) {
			p := &snapshot.PodParts{Shape: shapes[r.IntN(len(shapes))], Name: fmt.Sprint("p", i),
				NodeName: []string{"", "n1", "n2"}[r.IntN(3)]}
			p.Status.Phase = []v1.PodPhase{v1.PodRunning, v1.PodRunning, v1.PodSucceeded}[r.IntN(3)]
			if r.IntN(4) == 0 {
				p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", AllocatedResources: v1.ResourceList{v1.ResourceCPU: quantity()}}}
			}
			if r.IntN(8) == 0 {
				p.Status.Rest = &v1.PodStatus{InitContainerStatuses: []v1.ContainerStatus{{Name: "i", AllocatedResources: v1.ResourceList{v1.ResourceCPU: quantity()}}}}
			}
			parts.PodParts = append(parts.PodParts, p)
			whole.Pods = append(whole.Pods, p.Pod())
		}
		origin := func(any) string { return "f.yaml" }
		if got, want := boundsFit(&parts), boundsFit(&whole); got != want {
			t.Fatalf("trial %d: boundsFit in parts %v, whole %v", trial, got, want)
		}
		errParts, errWhole := CheckNodeSums(&parts, origin), CheckNodeSums(&whole, origin)
		if fmt.Sprint(errParts) != fmt.Sprint(errWhole) {
			t.Fatalf("trial %d: in parts %v, whole %v", trial, errParts, errWhole)
		}
		if boundsFit(&whole) {
			fitted++
		} else {
			overflowed++
		}
	}
	if overflowed < 50 || fitted < 50 {
		t.Errorf("trials: %d whose bounds overflow, %d that fit: want both", overflowed, fitted)
	}
}
