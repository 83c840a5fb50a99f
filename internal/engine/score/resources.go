package score

import (
	"math"

	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/component-helpers/resource"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// podScoringRequests returns the pod's requests of resources (CPU in
// millicores, the rest in units) as the resource scorers compute them
// (calculatePodResourceRequestList) with the default feature gates: status
// resources and pod-level resources honoured, overhead included. nonZero
// replaces missing container CPU and memory requests by the scheduler's
// defaults (100m, 200MB), as NodeResourcesFit does; BalancedAllocation uses
// the requests as they are.
func podScoringRequests(pod *v1.Pod, resources []ResourceWeight, nonZero bool) []int64 {
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
	out := make([]int64, len(resources))
	for i, r := range resources {
		q := reqs[r.Name]
		if r.Name == v1.ResourceCPU {
			out[i] = q.MilliValue()
		} else {
			out[i] = q.Value()
		}
	}
	return out
}

// allocation is one node's numbers for the scored resources, in their
// order, as calculateNodeAllocatableRequest fills them: a resource the node
// has no allocatable of, or a scalar resource the pod does not request, is
// left at zero everywhere, so scorers skip it.
type allocation struct {
	requested, allocated, allocatable []int64
}

func newAllocation(n int) allocation {
	b := make([]int64, 3*n)
	return allocation{requested: b[:n:n], allocated: b[n : 2*n : 2*n], allocatable: b[2*n:]}
}

// fill computes the allocation of node for the pod's requests pod of
// resources. nonZero counts CPU and memory of the node's pods by their
// non-zero requests (NodeResourcesFit) rather than their requests
// (BalancedAllocation); other resources always count the requests.
func (a *allocation) fill(node *snapshot.Node, resources []ResourceWeight, pod []int64, nonZero bool) {
	for i, r := range resources {
		a.requested[i], a.allocated[i], a.allocatable[i] = 0, 0, 0
		if pod[i] == 0 && snapshot.IsScalarResourceName(r.Name) {
			continue
		}
		var allocatable, allocated int64
		switch r.Name {
		case v1.ResourceCPU:
			allocatable, allocated = node.Allocatable.MilliCPU, node.Requested.MilliCPU
			if nonZero {
				allocated = node.NonZeroMilliCPU
			}
		case v1.ResourceMemory:
			allocatable, allocated = node.Allocatable.Memory, node.Requested.Memory
			if nonZero {
				allocated = node.NonZeroMemory
			}
		case v1.ResourceEphemeralStorage:
			allocatable, allocated = node.Allocatable.EphemeralStorage, node.Requested.EphemeralStorage
		default:
			allocatable, allocated = node.Allocatable.Scalar(r.Name), node.Requested.Scalar(r.Name)
		}
		if allocatable == 0 {
			continue
		}
		a.allocatable[i] = allocatable
		a.allocated[i] = allocated
		a.requested[i] = allocated + pod[i]
	}
}

// scoreNodeResourcesFit is NodeResourcesFit's scoring with the profile's
// strategy and resources: node usage is the sum of its pods' non-zero
// requests (requests for resources other than CPU and memory), the pod's
// request its non-zero request. No PreScore skip and no NormalizeScore.
//
// For each resource the node has, LeastAllocated scores the share left free
// after adding the pod, MostAllocated the share used (capped at 100), and
// RequestedToCapacityRatio the shape's broken-linear function of the used
// percentage (its value at 100% when the pod does not fit); the node scores
// the weighted average, truncated — rounded, for RequestedToCapacityRatio,
// which also leaves out resources scoring 0.
func scoreNodeResourcesFit(c *cycle) (raw, normalized []int64, skip bool, err error) {
	fit := &c.cfg.Fit
	pod := podScoringRequests(c.obj, fit.Resources, true)
	scorer := resourceScorer(fit)
	a := newAllocation(len(fit.Resources))
	raw = make([]int64, len(c.feasible))
	for i, n := range c.feasible {
		a.fill(n, fit.Resources, pod, true)
		raw[i] = scorer(a.requested, a.allocatable)
	}
	return raw, raw, false, nil
}

// resourceScorer returns the node scorer of fit's strategy.
func resourceScorer(fit *Fit) func(requested, allocatable []int64) int64 {
	switch fit.Strategy {
	case MostAllocated:
		return func(requested, allocatable []int64) int64 {
			return weightedMean(fit.Resources, requested, allocatable, mostRequestedScore)
		}
	case RequestedToCapacityRatio:
		shape := make([]ShapePoint, len(fit.Shape))
		for i, p := range fit.Shape {
			shape[i] = ShapePoint{Utilization: p.Utilization, Score: p.Score * (MaxNodeScore / maxCustomPriorityScore)}
		}
		return func(requested, allocatable []int64) int64 {
			var nodeScore, weightSum int64
			for i := range requested {
				if allocatable[i] == 0 {
					continue
				}
				utilization := int64(100)
				if requested[i] <= allocatable[i] {
					utilization = requested[i] * 100 / allocatable[i]
				}
				if s := brokenLinear(shape, utilization); s > 0 {
					nodeScore += s * fit.Resources[i].Weight
					weightSum += fit.Resources[i].Weight
				}
			}
			if weightSum == 0 {
				return 0
			}
			return int64(math.Round(float64(nodeScore) / float64(weightSum)))
		}
	default:
		return func(requested, allocatable []int64) int64 {
			return weightedMean(fit.Resources, requested, allocatable, leastRequestedScore)
		}
	}
}

// weightedMean is the weighted average, truncated, of score over the
// resources the node has.
func weightedMean(resources []ResourceWeight, requested, allocatable []int64, score func(requested, capacity int64) int64) int64 {
	var nodeScore, weightSum int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		nodeScore += score(requested[i], allocatable[i]) * resources[i].Weight
		weightSum += resources[i].Weight
	}
	if weightSum == 0 {
		return 0
	}
	return nodeScore / weightSum
}

// leastRequestedScore is the free share of capacity on [0, MaxNodeScore].
func leastRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * MaxNodeScore / capacity
}

// mostRequestedScore is the used share of capacity on [0, MaxNodeScore],
// requests beyond capacity counted as capacity.
func mostRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 {
		return 0
	}
	requested = min(requested, capacity)
	return requested * MaxNodeScore / capacity
}

// brokenLinear is upstream's BuildBrokenLinearFunction: the shape's first
// score up to its first utilization, linear interpolation (truncated)
// between points, and its last score beyond.
func brokenLinear(shape []ShapePoint, p int64) int64 {
	for i := range shape {
		if p <= shape[i].Utilization {
			if i == 0 {
				return shape[0].Score
			}
			prev := shape[i-1]
			return prev.Score + (shape[i].Score-prev.Score)*(p-prev.Utilization)/(shape[i].Utilization-prev.Utilization)
		}
	}
	return shape[len(shape)-1].Score
}

// scoreBalancedAllocation is NodeResourcesBalancedAllocation with the
// profile's resources (cpu and memory by default). PreScore skips pods that
// request none of them (best-effort pods). Usage is the node's actual
// requested resources and the pod's actual requests. A node scores
// 50 + (50 + balance with the pod - balance without it) / 2, where balance
// is (1 - standard deviation of the requested fractions) × 100, so between
// 50 and 100. No NormalizeScore.
func scoreBalancedAllocation(c *cycle) (raw, normalized []int64, skip bool, err error) {
	resources := c.cfg.BalancedResources
	pod := podScoringRequests(c.obj, resources, false)
	bestEffort := true
	for _, r := range pod {
		if r != 0 {
			bestEffort = false
		}
	}
	if bestEffort {
		return nil, nil, true, nil
	}
	a := newAllocation(len(resources))
	fractions := make([]float64, 0, len(resources))
	raw = make([]int64, len(c.feasible))
	for i, n := range c.feasible {
		a.fill(n, resources, pod, false)
		withPod := balancedResourceScore(a.requested, a.allocatable, fractions)
		withoutPod := balancedResourceScore(a.allocated, a.allocatable, fractions)
		raw[i] = MaxNodeScore/2 + (MaxNodeScore/2+withPod-withoutPod)/2
	}
	return raw, raw, false, nil
}

// balancedResourceScore is (1 - std) × MaxNodeScore over the requested
// fractions (capped at 1) of the resources the node has.
// fractions is scratch space.
func balancedResourceScore(requested, allocatable []int64, fractions []float64) int64 {
	fractions = fractions[:0]
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
