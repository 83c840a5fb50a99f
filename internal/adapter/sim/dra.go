package sim

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/dynamic-resource-allocation/resourceclaim"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/scheduler"
)

var _ scheduler.ClaimBinder = (*world)(nil)

// applyDRA hands a scenario's dynamic resource allocation objects to the
// scheduler, as its informers would, and keeps the claims as the API
// server's (the scheduler's PreBind writes them, BindClaims).
func (w *world) applyDRA(objs snapshot.Objects) {
	if len(objs.ResourceSlices)+len(objs.DeviceClasses)+len(objs.ResourceClaims) == 0 {
		return
	}
	w.sched.OnStorage(func(snap *snapshot.Snapshot) {
		for _, o := range objs.ResourceSlices {
			snap.SetResourceSlice(o)
		}
		for _, o := range objs.DeviceClasses {
			snap.SetDeviceClass(o)
		}
	}, true)
	for _, rc := range objs.ResourceClaims {
		w.setResourceClaim(rc)
	}
}

func (w *world) setResourceClaim(rc *resourceapi.ResourceClaim) {
	w.claims[rc.Namespace+"/"+rc.Name] = rc
	w.sched.OnResourceClaim(rc)
}

// BindClaims is the API server's part of DynamicResources' PreBind: each
// claim gets the finalizer, its allocation when it has one, and the pod in
// status.reservedFor; a claim gone or allocated meanwhile fails.
func (w *world) BindClaims(_ context.Context, pod *v1.Pod, node string, a *filter.DRAAllocation) ([]*resourceapi.ResourceClaim, error) {
	var written []*resourceapi.ResourceClaim
	for _, dc := range a.Claims {
		if dc.Extended != nil {
			written = append(written, w.createExtendedClaim(pod, dc))
			continue
		}
		key := dc.Claim.Namespace + "/" + dc.Claim.Name
		cur := w.claims[key]
		if cur == nil || cur.UID != dc.Claim.UID {
			return written, fmt.Errorf("claim %s not found", key)
		}
		c := cur.DeepCopy()
		if dc.Allocation != nil {
			if c.Status.Allocation != nil {
				return written, fmt.Errorf("claim %s got allocated elsewhere", key)
			}
			if !slices.Contains(c.Finalizers, resourceapi.Finalizer) {
				c.Finalizers = append(c.Finalizers, resourceapi.Finalizer)
			}
			c.Status.Allocation = dc.Allocation.DeepCopy()
		}
		if c.Status.Allocation == nil {
			return written, fmt.Errorf("claim %s got deallocated", key)
		}
		if !resourceclaim.IsReservedForPod(pod, c, false) {
			c.Status.ReservedFor = append(c.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: pod.Name, UID: pod.UID})
		}
		w.setResourceClaim(c)
		written = append(written, c)
	}
	return written, nil
}

// UnreserveClaims takes the pod out of the claims' reservedFor.
func (w *world) UnreserveClaims(_ context.Context, pod *v1.Pod, claims []*resourceapi.ResourceClaim) {
	for _, rc := range claims {
		w.releaseClaim(rc.Namespace+"/"+rc.Name, pod, false)
	}
}

// releaseClaims is the resource-claim controller's part when a pod is gone
// or finished: the pod leaves the reservedFor of its claims, and a claim
// reserved for nobody any more is deallocated (its finalizer removed).
func (w *world) releaseClaims(pod *v1.Pod) {
	for _, key := range podClaimKeys(pod) {
		w.releaseClaim(key, pod, true)
	}
}

// podClaimKeys are the namespace/name of the pod's claims: those its spec
// names (directly, or made from a template and named in its status) and
// the claim for its extended resources.
func podClaimKeys(pod *v1.Pod) []string {
	var keys []string
	for i := range pod.Spec.ResourceClaims {
		if name, _, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i]); err == nil && name != nil {
			keys = append(keys, pod.Namespace+"/"+*name)
		}
	}
	if st := pod.Status.ExtendedResourceClaimStatus; st != nil {
		keys = append(keys, pod.Namespace+"/"+st.ResourceClaimName)
	}
	return keys
}

// createExtendedClaim is PreBind for the claim of the pod's extended
// resources backed by DRA: the virtual API server creates it from the
// cycle's in-memory claim (a name generated from its GenerateName, owned by
// the pod), allocated and reserved for the pod, and the pod's status names
// it with the container requests it serves.
func (w *world) createExtendedClaim(pod *v1.Pod, dc filter.DRAClaim) *resourceapi.ResourceClaim {
	c := dc.Claim.DeepCopy()
	c.Name, c.UID, c.CreationTimestamp = c.GenerateName+w.suffix(5), w.newUID(), metav1.NewTime(w.now())
	c.Finalizers = append(c.Finalizers, resourceapi.Finalizer)
	c.Status.Allocation = dc.Allocation.DeepCopy()
	c.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: pod.Name, UID: pod.UID}}
	w.setResourceClaim(c)
	if p := w.pods[pod.Namespace+"/"+pod.Name]; p != nil && p.UID == pod.UID {
		q := p.DeepCopy()
		q.Status.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{RequestMappings: dc.Extended, ResourceClaimName: c.Name}
		w.updatePod(p, q)
	}
	return c
}

func (w *world) releaseClaim(key string, pod *v1.Pod, deallocate bool) {
	cur := w.claims[key]
	if cur == nil || !resourceclaim.IsReservedForPod(pod, cur, false) {
		return
	}
	c := cur.DeepCopy()
	c.Status.ReservedFor = slices.DeleteFunc(c.Status.ReservedFor, func(r resourceapi.ResourceClaimConsumerReference) bool { return r.UID == pod.UID })
	if deallocate && len(c.Status.ReservedFor) == 0 {
		c.Status.Allocation = nil
		c.Finalizers = slices.DeleteFunc(c.Finalizers, func(f string) bool { return f == resourceapi.Finalizer })
	}
	w.setResourceClaim(c)
}
