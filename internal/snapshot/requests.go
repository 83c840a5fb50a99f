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
// any other pod. Quantities are summed exactly before they are rounded, as
// the resource helpers do.
func simpleRequests(pod *v1.Pod) (req Resources, nonZeroMilliCPU, nonZeroMemory int64, ok bool) {
	spec, status := &pod.Spec, &pod.Status
	if len(spec.InitContainers) > 0 || len(spec.Overhead) > 0 || spec.Resources != nil ||
		status.Resources != nil || status.AllocatedResources != nil {
		return Resources{}, 0, 0, false
	}
	for i := range status.ContainerStatuses {
		if cs := &status.ContainerStatuses[i]; cs.Resources != nil || cs.AllocatedResources != nil {
			return Resources{}, 0, 0, false
		}
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
