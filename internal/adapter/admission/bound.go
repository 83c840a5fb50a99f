package admission

import (
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// scoringDefaults are the 100m CPU and 200Mi memory the scheduler counts,
// when it scores, for a container without a request.
var scoringDefaults = [...]int64{100, 200 * 1024 * 1024 * 1000}

// RequestsBound returns an upper bound, in thousandths of a unit, of every
// sum the scheduler makes of the pod's requests: each quantity of each
// container, init container, pod-level resources, overhead and reported
// status counted once for every resource, with the scoring defaults added
// for every container. ok is false when even the bound does not fit in 64
// bits; the caller must then sum exactly. Quantities must be admitted
// (non-negative and representable).
func RequestsBound(p *v1.Pod) (bound int64, ok bool) {
	ok = true
	add := func(v int64) {
		if v < 0 || bound > math.MaxInt64-v {
			ok = false
			return
		}
		bound += v
	}
	list := func(rl v1.ResourceList) {
		for _, q := range rl {
			add(milli(q))
		}
	}
	containers := func(cs []v1.Container) {
		for i := range cs {
			list(cs[i].Resources.Requests)
			list(cs[i].Resources.Limits)
			for _, d := range scoringDefaults {
				add(d)
			}
		}
	}
	containers(p.Spec.InitContainers)
	containers(p.Spec.Containers)
	list(p.Spec.Overhead)
	if r := p.Spec.Resources; r != nil {
		list(r.Requests)
		list(r.Limits)
	}
	for _, statuses := range [][]v1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range statuses {
			list(statuses[i].AllocatedResources)
			if r := statuses[i].Resources; r != nil {
				list(r.Requests)
				list(r.Limits)
			}
		}
	}
	return bound, ok
}

// milli is q in thousandths of a unit, or MaxInt64 when that does not fit.
func milli(q resource.Quantity) int64 {
	if q.CmpInt64(math.MaxInt64/1000) > 0 {
		return math.MaxInt64
	}
	return q.MilliValue()
}
