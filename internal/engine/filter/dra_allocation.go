package filter

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/resourceclaim"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// DRAClaim is one of the pod's resource claims as DynamicResources' Reserve
// leaves it for PreBind: the claim as the cycle saw it and, when the cycle
// allocated it, the allocation to write.
type DRAClaim struct {
	// Claim is the claim in the snapshot the cycle ran on (not a copy: do
	// not change it).
	Claim *resourceapi.ResourceClaim
	// Allocation is the allocation made on the chosen node; nil when the
	// claim was allocated already, and then PreBind only adds the pod to
	// its status.reservedFor.
	Allocation *resourceapi.AllocationResult
	// Extended is set for the claim of the pod's extended resources backed
	// by DRA, which does not exist yet (upstream's special claim, named
	// in memory only): PreBind creates it from Claim (its GenerateName,
	// owner, annotation and requests for the node), then writes the
	// allocation, and records in the pod's status.extendedResourceClaimStatus
	// these container requests it serves.
	Extended []v1.ContainerExtendedResourceRequest
}

// DRAAllocation is what DynamicResources' PreBind must write for a pod on
// a node: its claims that are not reserved for it yet, in the pod's order.
type DRAAllocation struct {
	Claims []DRAClaim
}

// nodeToAllocate are the claims to allocate on node: the claims without an
// allocation, with the extended resource claim's requests for the node.
// skip (with s Success) means DynamicResources has nothing to do on the
// node; a status that is not Success rejects the node.
func (d *draState) nodeToAllocate(pod *v1.Pod, node *v1.Node) (toAllocate []*resourceapi.ResourceClaim, skip bool, s Status) {
	toAllocate, _, _, skip, s = d.nodeToAllocateExtended(pod, node)
	return toAllocate, skip, s
}

// nodeToAllocateExtended is nodeToAllocate with the extended resource
// claim for node among them (nil when there is none to allocate) and the
// container requests it serves.
func (d *draState) nodeToAllocateExtended(pod *v1.Pod, node *v1.Node) (toAllocate []*resourceapi.ResourceClaim, ext *resourceapi.ResourceClaim, mappings []v1.ContainerExtendedResourceRequest, skip bool, s Status) {
	toAllocate = d.toAllocate
	if d.ext == nil {
		return toAllocate, nil, nil, false, Status{}
	}
	claim, mappings, skip, s := d.ext.nodeClaimAndMappings(pod, node, d.numUser == 0)
	if skip || !s.IsSuccess() {
		return nil, nil, nil, skip, s
	}
	if claim != nil && len(toAllocate) > 0 && toAllocate[len(toAllocate)-1] == d.ext.claim {
		toAllocate = append(slices.Clone(toAllocate[:len(toAllocate)-1]), claim)
		return toAllocate, claim, mappings, false, Status{}
	}
	return toAllocate, nil, nil, false, Status{}
}

// DRAAllocation is DynamicResources' Reserve for the cycle's pod on n, a
// node its Filter accepted: the allocations of the pod's unallocated claims
// on n (the allocator's answer for the node, as the Filter computed it) and
// the allocated claims still to be reserved for the pod. It returns nil when
// the pod has no claim that needs PreBind. The claim for the pod's extended
// resources backed by DRA comes last, when n serves them through DRA.
func (c *Cycle) DRAAllocation(n *snapshot.Node) (*DRAAllocation, error) {
	d := c.dra
	if d == nil || (d.numUser == 0 && d.ext == nil) {
		return nil, nil
	}
	pod := c.obj
	toAllocate, ext, mappings, skip, s := d.nodeToAllocateExtended(pod, n.Obj)
	if !s.IsSuccess() {
		return nil, fmt.Errorf("node %s: %s", n.Name, s.Message())
	}
	allocations := map[*resourceapi.ResourceClaim]*resourceapi.AllocationResult{}
	if !skip && d.allocator != nil && len(toAllocate) > 0 {
		results, err := d.allocator.Allocate(context.Background(), n.Obj, toAllocate)
		if err != nil {
			return nil, fmt.Errorf("allocating the claims of pod %s/%s on node %s: %w", pod.Namespace, pod.Name, n.Name, err)
		}
		if len(results) != len(toAllocate) {
			return nil, fmt.Errorf("allocating the claims of pod %s/%s on node %s: %d results for %d claims", pod.Namespace, pod.Name, n.Name, len(results), len(toAllocate))
		}
		for i, claim := range toAllocate {
			allocations[claim] = &results[i]
		}
	}
	a := &DRAAllocation{}
	for _, claim := range d.claims[:d.numUser] {
		if resourceclaim.IsReservedForPod(pod, claim, false) {
			continue
		}
		alloc := allocations[claim]
		if claim.Status.Allocation == nil && alloc == nil {
			return nil, fmt.Errorf("claim %s/%s of pod %s/%s: no allocation on node %s", claim.Namespace, claim.Name, pod.Namespace, pod.Name, n.Name)
		}
		a.Claims = append(a.Claims, DRAClaim{Claim: claim, Allocation: alloc})
	}
	if ext != nil {
		alloc := allocations[ext]
		if alloc == nil {
			return nil, fmt.Errorf("extended resource claim of pod %s/%s: no allocation on node %s", pod.Namespace, pod.Name, n.Name)
		}
		a.Claims = append(a.Claims, DRAClaim{Claim: ext, Allocation: alloc, Extended: mappings})
	}
	if len(a.Claims) == 0 {
		return nil, nil
	}
	return a, nil
}

// DeviceScore is DynamicResources' Score for the cycle's pod on n, a node
// its Filter accepted, from the allocation that Filter made there (see
// deviceScore). It is 0 for a pod without claims, on a node the Filter
// rejected, and where no claim of the pod was allocated in the cycle
// (upstream's Filter then keeps no allocation for the node).
func (c *Cycle) DeviceScore(n *snapshot.Node) int64 {
	if c.dra == nil {
		return 0
	}
	return c.dra.verdict(c.obj, n).score
}

// deviceScore counts, for every request of the pod's claims that lists
// devices by preference (firstAvailable), the sub-request the allocation
// takes, as resource.k8s.io's FirstAvailableDeviceRequestMaxSize minus its
// position: 8 for the first choice, 7 for the second, and so on. results
// are the allocations of the claims without one, in order; claims
// allocated already count with their own.
func (d *draState) deviceScore(results []resourceapi.AllocationResult) int64 {
	var score int64
	next := 0
	for _, claim := range d.claims {
		alloc := claim.Status.Allocation
		if alloc == nil {
			if next >= len(results) {
				return 0
			}
			alloc = &results[next]
			next++
		}
		var chosen map[string]bool
		for _, r := range alloc.Devices.Results {
			if resourceclaim.IsSubRequestRef(r.Request) {
				if chosen == nil {
					chosen = map[string]bool{}
				}
				chosen[r.Request] = true
			}
		}
		for _, req := range claim.Spec.Devices.Requests {
			for i, sub := range req.FirstAvailable {
				if chosen[resourceclaim.CreateSubRequestRef(req.Name, sub.Name)] {
					score += int64(resourceapi.FirstAvailableDeviceRequestMaxSize - i)
				}
			}
		}
	}
	return score
}
