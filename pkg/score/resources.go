package score

import (
	"math"

	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/component-helpers/resource"

	"github.com/reprieve/reprieve/pkg/snapshot"
)

// podScoringRequests returns the pod's CPU (millicores) and memory (bytes)
// requests as the resource scorers compute them (calculatePodResourceRequest)
// with the default feature gates: status resources and pod-level resources
// honoured, overhead included. nonZero replaces missing container requests
// by the scheduler's defaults (100m, 200MB), as NodeResourcesFit does;
// BalancedAllocation uses the requests as they are.
func podScoringRequests(pod *v1.Pod, nonZero bool) (milliCPU, memory int64) {
	opts := resource.PodResourcesOptions{
		UseStatusResources: true,
		InPlacePodLevelResourcesVerticalScalingEnabled: true,
	}
	if nonZero {
		opts.NonMissingContainerRequests = v1.ResourceList{
			v1.ResourceCPU:    *apiresource.NewMilliQuantity(snapshot.DefaultMilliCPURequest, apiresource.DecimalSI),
			v1.ResourceMemory: *apiresource.NewQuantity(snapshot.DefaultMemoryRequest, apiresource.DecimalSI),
		}
	}
	reqs := resource.PodRequests(pod, opts)
	cpu, mem := reqs[v1.ResourceCPU], reqs[v1.ResourceMemory]
	return cpu.MilliValue(), mem.Value()
}

// allocation is one node's numbers for the two scored resources, cpu then
// memory, as calculateNodeAllocatableRequest fills them: a resource the node
// has no allocatable of is left at zero everywhere, so scorers skip it.
type allocation struct {
	requested, allocated, allocatable [2]int64
}

func newAllocation(allocatable, allocated, pod [2]int64) allocation {
	var a allocation
	for i := range allocatable {
		if allocatable[i] == 0 {
			continue
		}
		a.allocatable[i] = allocatable[i]
		a.allocated[i] = allocated[i]
		a.requested[i] = allocated[i] + pod[i]
	}
	return a
}

// scoreLeastAllocated is NodeResourcesFit's LeastAllocated scoring with the
// default resources (cpu and memory, weight 1 each): for each resource the
// share left free after adding the pod, on [0, MaxNodeScore], averaged by
// weight with integer division. Node usage is the sum of its pods' non-zero
// requests, the pod's request its non-zero request. No PreScore skip and no
// NormalizeScore.
func scoreLeastAllocated(c *cycle) (raw, normalized []int64, skip bool, err error) {
	cpu, mem := podScoringRequests(c.pod.Obj, true)
	pod := [2]int64{cpu, mem}
	weights := [2]int64{1, 1}
	raw = make([]int64, len(c.feasible))
	for i, n := range c.feasible {
		a := newAllocation(
			[2]int64{n.Allocatable.MilliCPU, n.Allocatable.Memory},
			[2]int64{n.NonZeroMilliCPU, n.NonZeroMemory},
			pod)
		var nodeScore, weightSum int64
		for r := range a.requested {
			if a.allocatable[r] == 0 {
				continue
			}
			nodeScore += leastRequestedScore(a.requested[r], a.allocatable[r]) * weights[r]
			weightSum += weights[r]
		}
		if weightSum != 0 {
			raw[i] = nodeScore / weightSum
		}
	}
	return raw, raw, false, nil
}

// leastRequestedScore is the free share of capacity on [0, MaxNodeScore].
func leastRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * MaxNodeScore / capacity
}

// scoreBalancedAllocation is NodeResourcesBalancedAllocation with cpu and
// memory. PreScore skips pods that request neither (best-effort pods).
// Usage is the node's actual requested resources and the pod's actual
// requests. A node scores 50 + (50 + balance with the pod - balance without
// it) / 2, where balance is (1 - standard deviation of the requested
// fractions) × 100, so between 50 and 100. No NormalizeScore.
func scoreBalancedAllocation(c *cycle) (raw, normalized []int64, skip bool, err error) {
	cpu, mem := podScoringRequests(c.pod.Obj, false)
	if cpu == 0 && mem == 0 {
		return nil, nil, true, nil
	}
	pod := [2]int64{cpu, mem}
	raw = make([]int64, len(c.feasible))
	for i, n := range c.feasible {
		a := newAllocation(
			[2]int64{n.Allocatable.MilliCPU, n.Allocatable.Memory},
			[2]int64{n.Requested.MilliCPU, n.Requested.Memory},
			pod)
		withPod := balancedResourceScore(a.requested[:], a.allocatable[:])
		withoutPod := balancedResourceScore(a.allocated[:], a.allocatable[:])
		raw[i] = MaxNodeScore/2 + (MaxNodeScore/2+withPod-withoutPod)/2
	}
	return raw, raw, false, nil
}

// balancedResourceScore is (1 - std) × MaxNodeScore over the requested
// fractions (capped at 1) of the resources the node has.
func balancedResourceScore(requested, allocatable []int64) int64 {
	var fractions []float64
	var total float64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		f := float64(requested[i]) / float64(allocatable[i])
		if f > 1 {
			f = 1
		}
		total += f
		fractions = append(fractions, f)
	}
	std := 0.0
	if len(fractions) == 2 {
		std = math.Abs((fractions[0] - fractions[1]) / 2)
	} else if len(fractions) > 2 {
		mean := total / float64(len(fractions))
		var sum float64
		for _, f := range fractions {
			sum = sum + (f-mean)*(f-mean)
		}
		std = math.Sqrt(sum / float64(len(fractions)))
	}
	return int64((1 - std) * float64(MaxNodeScore))
}
