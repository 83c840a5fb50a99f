package scheduler

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/resourceclaim"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// ClaimBinder is implemented by a Cluster that carries out DynamicResources'
// PreBind: for each claim of a it writes the allocation (with the
// delete-protection finalizer) when it has one and adds pod to
// status.reservedFor, retrying conflicts. It returns the claims as the API
// server stored them, also those written before a failure, so that
// UnreserveClaims can take the pod out of them again. A Cluster without it
// binds pods with claims as they are.
type ClaimBinder interface {
	BindClaims(ctx context.Context, pod *v1.Pod, node string, a *filter.DRAAllocation) ([]*resourceapi.ResourceClaim, error)
	// UnreserveClaims removes pod from the status.reservedFor of claims
	// (DynamicResources' Unreserve, after a failed binding).
	UnreserveClaims(ctx context.Context, pod *v1.Pod, claims []*resourceapi.ResourceClaim)
}

// claimInFlight is a claim the cache holds as a scheduling cycle assumed
// it (allocated, reserved for pods being bound) until PreBind's write is
// seen or undone: upstream's in-flight allocations and assume cache.
type claimInFlight struct {
	// latest is the claim as the API last sent it (nil once deleted).
	latest *resourceapi.ResourceClaim
	// allocation is the allocation the cycle assumed, nil when the claim
	// was allocated already.
	allocation *resourceapi.AllocationResult
	// pods are the pods being bound with the claim (by UID), in order.
	pods []resourceapi.ResourceClaimConsumerReference
}

// assumed is latest with the assumed allocation (when it has none) and the
// pods being bound in reservedFor.
func (f *claimInFlight) assumed() *resourceapi.ResourceClaim {
	c := f.latest.DeepCopy()
	if c.Status.Allocation == nil && f.allocation != nil {
		if !slices.Contains(c.Finalizers, resourceapi.Finalizer) {
			c.Finalizers = append(c.Finalizers, resourceapi.Finalizer)
		}
		c.Status.Allocation = f.allocation.DeepCopy()
	}
	for _, ref := range f.pods {
		if !slices.ContainsFunc(c.Status.ReservedFor, func(r resourceapi.ResourceClaimConsumerReference) bool { return r.UID == ref.UID }) {
			c.Status.ReservedFor = append(c.Status.ReservedFor, ref)
		}
	}
	return c
}

func claimKey(c *resourceapi.ResourceClaim) string { return c.Namespace + "/" + c.Name }

func podReference(pod *v1.Pod) resourceapi.ResourceClaimConsumerReference {
	return resourceapi.ResourceClaimConsumerReference{APIGroup: v1.GroupName, Resource: "pods", Name: pod.Name, UID: pod.UID}
}

// reserveClaims is DynamicResources' Reserve for the pod on node: it
// returns what PreBind must write (nil when nothing) and assumes it in the
// cache at once, so that the next cycle does not hand the same devices out
// again. An error (the allocator failing on a node the Filter accepted,
// which upstream treats as an internal error too) leaves the claims as
// they are, and the pod must not be bound.
func (s *Core) reserveClaims(c *filter.Cycle, p *snapshot.Pod, node *snapshot.Node) (*filter.DRAAllocation, error) {
	a, err := c.DRAAllocation(node)
	if err != nil {
		return nil, fmt.Errorf("running Reserve plugin %q: %w", filter.DynamicResources, err)
	}
	if a == nil {
		return nil, nil
	}
	if s.claimsInFlight == nil {
		s.claimsInFlight = map[string]*claimInFlight{}
	}
	ref := podReference(p.Obj())
	for _, dc := range a.Claims {
		if dc.Extended != nil {
			s.snap.SetResourceClaim(assumedExtendedClaim(p.Obj(), dc))
			continue
		}
		key := claimKey(dc.Claim)
		f := s.claimsInFlight[key]
		if f == nil {
			f = &claimInFlight{}
			s.claimsInFlight[key] = f
		}
		if f.latest == nil {
			f.latest = dc.Claim
		}
		if dc.Allocation != nil && f.allocation == nil {
			f.allocation = dc.Allocation
		}
		f.pods = append(f.pods, ref)
		s.snap.SetResourceClaim(f.assumed())
	}
	return a, nil
}

// releaseClaims ends the in-flight state of the pod's claims after its
// binding, bound telling whether it succeeded. written (the claims as
// PreBind stored them, without the pod in reservedFor when the binding
// failed and Unreserve took it out) are kept when newer than what the
// informer sent, as upstream's AssumeClaimAfterAPICall; a claim no other
// pod is being bound with then goes back to the API's version, which undoes
// the assumption when nothing was written.
func (s *Core) releaseClaims(b *Binding, written []*resourceapi.ResourceClaim, bound bool) {
	if b.Claims == nil {
		return
	}
	uid := b.Pod.UID
	for _, w := range written {
		if filter.IsExtendedResourceClaimOf(w, b.Pod) {
			// The claim PreBind created for the pod's extended resources:
			// kept as written once bound (the informer may not have sent it
			// yet), left to the informer otherwise (Unreserve deleted it).
			if cur := s.snap.ResourceClaim(w.Namespace, w.Name); bound && (cur == nil || newer(w, cur)) {
				s.snap.SetResourceClaim(w)
			}
			continue
		}
		if !bound {
			// Unreserve took the pod out; the allocation stays.
			w = w.DeepCopy()
			w.Status.ReservedFor = slices.DeleteFunc(w.Status.ReservedFor, func(r resourceapi.ResourceClaimConsumerReference) bool { return r.UID == uid })
		}
		if f := s.claimsInFlight[claimKey(w)]; f != nil && f.latest != nil && newer(w, f.latest) {
			f.latest = w
		}
	}
	for _, dc := range b.Claims.Claims {
		if dc.Extended != nil {
			s.snap.RemoveResourceClaim(dc.Claim.Namespace, assumedExtendedClaimName(b.Pod))
			continue
		}
		key := claimKey(dc.Claim)
		f := s.claimsInFlight[key]
		if f == nil {
			continue
		}
		f.pods = slices.DeleteFunc(f.pods, func(r resourceapi.ResourceClaimConsumerReference) bool { return r.UID == uid })
		switch {
		case f.latest == nil:
			delete(s.claimsInFlight, key)
			s.snap.RemoveResourceClaim(dc.Claim.Namespace, dc.Claim.Name)
		case len(f.pods) == 0:
			delete(s.claimsInFlight, key)
			s.snap.SetResourceClaim(f.latest)
		default:
			s.snap.SetResourceClaim(f.assumed())
		}
	}
}

// newer reports whether a is a later version of the claim b: another
// claim of that name, or a greater resourceVersion (a number, as etcd's;
// one that is not counts as 0).
func newer(a, b *resourceapi.ResourceClaim) bool {
	if a.UID != b.UID {
		return true
	}
	ra, err := strconv.ParseUint(a.ResourceVersion, 10, 64)
	if err != nil {
		return false
	}
	rb, _ := strconv.ParseUint(b.ResourceVersion, 10, 64)
	return ra > rb
}

// bindClaims runs DynamicResources' PreBind of the binding's claims, if
// any, and returns the claims written.
func (e executor) bindClaims(ctx context.Context, b *Binding) ([]*resourceapi.ResourceClaim, error) {
	if b.Claims == nil {
		return nil, nil
	}
	cb, ok := e.cluster.(ClaimBinder)
	if !ok {
		return nil, nil
	}
	return cb.BindClaims(ctx, b.Pod, b.Node, b.Claims)
}

// unreserveClaims is DynamicResources' Unreserve after a failed binding:
// the pod leaves the reservedFor of the claims PreBind wrote.
func (e executor) unreserveClaims(ctx context.Context, b *Binding, written []*resourceapi.ResourceClaim) {
	if cb, ok := e.cluster.(ClaimBinder); ok && len(written) > 0 {
		cb.UnreserveClaims(ctx, b.Pod, written)
	}
}

// claimStatusesChanged reports whether a pending pod's update named the
// claims made for it from templates (status.resourceClaimStatuses): the
// event upstream's DynamicResources requeues such a pod on
// (UpdatePodGeneratedResourceClaim), since the claim may have arrived
// before the pod's status named it.
func claimStatusesChanged(old, pod *v1.Pod) bool {
	return old != nil && !resourceclaim.PodStatusEqual(old.Status.ResourceClaimStatuses, pod.Status.ResourceClaimStatuses)
}

// OnResourceClaim handles a created or changed ResourceClaim (defaulted by
// the caller). A claim a cycle assumed keeps the assumed allocation until
// the API's version has one, and the pods being bound with it in
// reservedFor. It moves unschedulable pods back to the active or backoff
// queue: a claim made from a template, or one deallocated, may make them
// schedulable.
func (s *Core) OnResourceClaim(claim *resourceapi.ResourceClaim) {
	if f := s.claimsInFlight[claimKey(claim)]; f != nil {
		if f.latest == nil || newer(claim, f.latest) || claim.ResourceVersion == f.latest.ResourceVersion {
			f.latest = claim
		}
		s.snap.SetResourceClaim(f.assumed())
	} else {
		s.snap.SetResourceClaim(claim)
	}
	s.queue.MoveAllToActiveOrBackoff()
}

// OnResourceClaimDelete handles a deleted ResourceClaim. A claim deleted
// while allocated frees its devices, so unschedulable pods are moved back to
// the active or backoff queue then.
func (s *Core) OnResourceClaimDelete(namespace, name string, uid types.UID) {
	if f := s.claimsInFlight[namespace+"/"+name]; f != nil && f.latest != nil && f.latest.UID == uid {
		f.latest = nil
	}
	if c := s.snap.ResourceClaim(namespace, name); c != nil && c.Status.Allocation != nil {
		s.queue.MoveAllToActiveOrBackoff()
	}
	s.snap.RemoveResourceClaim(namespace, name)
}

// assumedExtendedClaim is the claim for the pod's extended resources, which
// does not exist yet, as the cache holds it while the pod is bound:
// allocated and reserved for the pod, under a name of its own that no
// object can have (upstream keeps it in its assume cache).
func assumedExtendedClaim(pod *v1.Pod, dc filter.DRAClaim) *resourceapi.ResourceClaim {
	c := dc.Claim.DeepCopy()
	c.Name = assumedExtendedClaimName(pod)
	c.Finalizers = append(c.Finalizers, resourceapi.Finalizer)
	c.Status.Allocation = dc.Allocation.DeepCopy()
	c.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{podReference(pod)}
	return c
}

// assumedExtendedClaimName is the name of assumedExtendedClaim.
func assumedExtendedClaimName(pod *v1.Pod) string {
	return "<extended-resources:" + string(pod.UID) + ">"
}
