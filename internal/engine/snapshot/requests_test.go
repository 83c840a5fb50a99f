package snapshot

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/component-helpers/resource"
)

// TestSimpleRequestsMatchHelpers checks the fast path against the resource
// helpers on random pods: odd quantities (fractions of a millicore or byte,
// exponents, binary suffixes), several containers, missing and explicit
// zero requests, container statuses that report resources (the spec's or
// others), pending resizes, and the shapes the fast path must refuse.
func TestSimpleRequestsMatchHelpers(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	quantities := []string{"0", "1", "100m", "0.5m", "1500u", "2.5", "1e3", "3k", "128Mi", "1Gi", "1.5Gi", "0.3", "7n", "999999999n", "123456789"}
	names := []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, "example.com/gpu", v1.ResourcePods}
	quantity := func() apiresource.Quantity { return apiresource.MustParse(quantities[r.IntN(len(quantities))]) }
	simple, withStatus := 0, 0
	for trial := range 20000 {
		pod := &v1.Pod{}
		for i := range r.IntN(4) {
			c := v1.Container{Name: fmt.Sprintf("c%d", i), Resources: v1.ResourceRequirements{Requests: v1.ResourceList{}}}
			for _, name := range names {
				limit := 3
				if name == "example.com/gpu" || name == v1.ResourcePods {
					limit = 40
				}
				if r.IntN(limit) == 0 || (r.IntN(4) > 0 && limit == 3) {
					c.Resources.Requests[name] = quantity()
				}
			}
			pod.Spec.Containers = append(pod.Spec.Containers, c)
		}
		switch r.IntN(30) {
		case 0, 4, 5:
			pod.Spec.InitContainers = []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: quantity()}}}}
		case 1:
			pod.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: quantity()}
		case 2:
			pod.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceMemory: quantity()}}
		case 3:
			if len(pod.Spec.Containers) > 0 {
				pod.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c0", AllocatedResources: v1.ResourceList{v1.ResourceCPU: quantity()}}}
			}
		}
		// Container statuses as a kubelet reports them (the spec's
		// requests, written otherwise: 100m as 0.1), or differing from
		// them, or of containers the pod does not have; and resizes.
		for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
			if r.IntN(3) == 0 {
				continue
			}
			cs := v1.ContainerStatus{Name: c.Name}
			if r.IntN(8) == 0 {
				cs.Name = "other"
			}
			reported := func() v1.ResourceList {
				l := v1.ResourceList{}
				for name, q := range c.Resources.Requests {
					l[name] = *apiresource.NewMilliQuantity(q.MilliValue(), apiresource.DecimalSI)
					if q.MilliValue()*1000 != q.ScaledValue(apiresource.Micro) {
						l[name] = q.DeepCopy() // not whole millis
					}
				}
				switch r.IntN(12) {
				case 0:
					l[v1.ResourceCPU] = quantity()
				case 1:
					delete(l, v1.ResourceMemory)
				case 2:
					l["example.com/gpu"] = quantity()
				case 3:
					return nil
				}
				return l
			}
			switch r.IntN(4) {
			case 0:
				cs.AllocatedResources = reported()
			case 1:
				cs.Resources = &v1.ResourceRequirements{Requests: reported()}
			case 2:
				cs.AllocatedResources, cs.Resources = reported(), &v1.ResourceRequirements{Requests: reported(), Limits: reported()}
			case 3:
				cs.Resources = &v1.ResourceRequirements{Limits: reported()}
			}
			if r.IntN(10) == 0 {
				pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, cs)
			} else {
				pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, cs)
			}
		}
		if r.IntN(10) == 0 {
			reason := []string{v1.PodReasonInfeasible, v1.PodReasonDeferred}[r.IntN(2)]
			pod.Status.Conditions = append(pod.Status.Conditions, v1.PodCondition{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: reason})
		}
		// Whatever else the pod has, a status that agrees leaves the
		// helpers' answer the spec's.
		if StatusRequestsAgree(&pod.Spec, pod.Status.Conditions, pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses) {
			specOnly := &v1.Pod{Spec: pod.Spec}
			got, want := AssignedPodRequests(pod), AssignedPodRequests(specOnly)
			gotCPU, gotMem := NonZeroRequests(pod)
			wantCPU, wantMem := NonZeroRequests(specOnly)
			if !reflect.DeepEqual(got, want) || gotCPU != wantCPU || gotMem != wantMem {
				t.Fatalf("trial %d: the status agrees, but the helpers give %+v (non-zero %d/%d) with it and %+v (%d/%d) without, for %+v", trial, got, gotCPU, gotMem, want, wantCPU, wantMem, pod)
			}
		}
		req, nzCPU, nzMem, ok := simpleRequests(pod)
		if !ok {
			continue
		}
		simple++
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.AllocatedResources != nil || cs.Resources != nil && cs.Resources.Requests != nil {
				withStatus++
				break
			}
		}
		wantNZCPU, wantNZMem := NonZeroRequests(pod)
		if want := AssignedPodRequests(pod); req.MilliCPU != want.MilliCPU || req.Memory != want.Memory ||
			req.EphemeralStorage != want.EphemeralStorage || len(want.Scalars) != 0 || want.AllowedPods != 0 {
			t.Fatalf("trial %d: requests %+v, helpers give %+v for %+v", trial, req, want, pod.Spec)
		}
		if want := NewResources(resource.PodRequests(pod, resource.PodResourcesOptions{})); req.MilliCPU != want.MilliCPU || req.Memory != want.Memory || req.EphemeralStorage != want.EphemeralStorage {
			t.Fatalf("trial %d: incoming requests %+v, helpers give %+v", trial, req, want)
		}
		if nzCPU != wantNZCPU || nzMem != wantNZMem {
			t.Fatalf("trial %d: non-zero requests %d/%d, helpers give %d/%d for %+v", trial, nzCPU, nzMem, wantNZCPU, wantNZMem, pod.Spec)
		}
	}
	if withStatus < 2000 {
		t.Fatalf("only %d pods with container statuses that report resources took the fast path", withStatus)
	}
	if simple < 5000 {
		t.Fatalf("only %d of 20000 pods took the fast path; the test does not exercise it", simple)
	}
}

// TestHeadroomMatchesFits checks that a use fits a request on a node
// exactly when it lies within the node's headroom for the request, on
// random requests (zero and negative amounts included), allocatables and
// uses, and that amounts where the two forms could overflow apart get no
// headroom.
func TestHeadroomMatchesFits(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	amount := func() int64 { return int64(r.IntN(7)) - 2 }
	for range 50000 {
		req := Resources{MilliCPU: amount(), Memory: amount(), EphemeralStorage: amount()}
		alloc := Usage{MilliCPU: amount() + 2, Memory: amount() + 2, EphemeralStorage: amount() + 2, Pods: amount() + 2}
		used := Usage{MilliCPU: amount() + 2, Memory: amount() + 2, EphemeralStorage: amount() + 2, Pods: amount() + 2}
		room, ok := alloc.Headroom(&req)
		if !ok {
			t.Fatalf("allocatable %+v, request %+v: no headroom", alloc, req)
		}
		if got, want := used.Within(&room), used.Fits(&req, &alloc); got != want {
			t.Fatalf("request %+v, allocatable %+v, used %+v: within headroom %+v %v, fits %v", req, alloc, used, room, got, want)
		}
	}
	for _, tc := range []struct {
		alloc Usage
		req   Resources
	}{
		{Usage{MilliCPU: -1, Pods: 1}, Resources{}},
		{Usage{Memory: math.MaxInt64, Pods: 1}, Resources{}},
		{Usage{Pods: 1}, Resources{EphemeralStorage: math.MaxInt64}},
	} {
		if _, ok := tc.alloc.Headroom(&tc.req); ok {
			t.Errorf("allocatable %+v, request %+v: headroom, want none", tc.alloc, tc.req)
		}
	}
}
