package snapshot

import (
	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
)

// simpleRequests computes, without building resource lists, what
// AssignedPodRequests, NonZeroRequests and IncomingPodRequests return for
// the common pod they all agree on: regular containers requesting only cpu,
// memory and ephemeral-storage; no init containers, overhead or pod-level
// resources; no resource status from an in-place resize. ok is false for
// any other pod. A status whose containers report the resources their
// spec requests, as a kubelet reports them when no resize is under way,
// leaves a pod simple (StatusRequestsAgree). Quantities are summed exactly before they are rounded, as
// the resource helpers do.
func simpleRequests(pod *v1.Pod) (req Resources, nonZeroMilliCPU, nonZeroMemory int64, ok bool) {
	spec, status := &pod.Spec, &pod.Status
	if len(spec.InitContainers) > 0 || len(spec.Overhead) > 0 || spec.Resources != nil ||
		status.Resources != nil || status.AllocatedResources != nil ||
		!StatusRequestsAgree(spec, status.Conditions, status.ContainerStatuses, status.InitContainerStatuses) {
		return Resources{}, 0, 0, false
	}
	var cpu, mem, eph apiresource.Quantity
	var missingCPU, missingMem int64
	for i := range spec.Containers {
		requests := spec.Containers[i].Resources.Requests
		found := 0
		if q, has := requests[v1.ResourceCPU]; has {
			cpu.Add(q)
			found++
		} else {
			missingCPU++
		}
		if q, has := requests[v1.ResourceMemory]; has {
			mem.Add(q)
			found++
		} else {
			missingMem++
		}
		if q, has := requests[v1.ResourceEphemeralStorage]; has {
			eph.Add(q)
			found++
		}
		if found != len(requests) {
			return Resources{}, 0, 0, false
		}
	}
	req = Resources{MilliCPU: cpu.MilliValue(), Memory: mem.Value(), EphemeralStorage: eph.Value()}
	// The defaults are whole millicores and bytes, so adding them after
	// rounding gives what adding them before would.
	return req, req.MilliCPU + missingCPU*DefaultMilliCPURequest, req.Memory + missingMem*DefaultMemoryRequest, true
}

// StatusRequestsAgree reports whether a pod's status (its conditions and
// container statuses) leaves its requests those of spec: no in-place
// resize is pending (no PodResizePending condition), and each container
// status that reports resources — the actuated requests or the allocated
// resources — reports exactly the requests of the container of its name.
// The resource helpers take, per resource, the most of a container's spec,
// actuated and allocated requests (without the spec's when a resize is
// infeasible), each read from the container's status when it reports them
// and from the spec when not: here all three are the spec's. A status of
// a container the spec does not have is never read.
func StatusRequestsAgree(spec *v1.PodSpec, conds []v1.PodCondition, statuses ...[]v1.ContainerStatus) bool {
	for i := range conds {
		if conds[i].Type == v1.PodResizePending {
			return false
		}
	}
	for _, css := range statuses {
		for i := range css {
			cs := &css[i]
			var actuated v1.ResourceList
			if cs.Resources != nil {
				actuated = cs.Resources.Requests
			}
			if actuated == nil && cs.AllocatedResources == nil {
				continue
			}
			for _, cs2 := range [][]v1.Container{spec.Containers, spec.InitContainers} {
				for j := range cs2 {
					if c := &cs2[j]; c.Name == cs.Name {
						if actuated != nil && !sameResources(actuated, c.Resources.Requests) ||
							cs.AllocatedResources != nil && !sameResources(cs.AllocatedResources, c.Resources.Requests) {
							return false
						}
					}
				}
			}
		}
	}
	return true
}

// sameResources reports whether a and b name the same resources in equal
// quantities.
func sameResources(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if q2, ok := b[name]; !ok || q.Cmp(q2) != 0 {
			return false
		}
	}
	return true
}
