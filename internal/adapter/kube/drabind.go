package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/klog/v2"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/scheduler"
)

var _ scheduler.ClaimBinder = (*Cluster)(nil)

// errClaimChanged is wrapped when a claim changed under PreBind so that
// the reservation cannot be made: deleted, or allocated by someone else.
var errClaimChanged = errors.New("claim changed meanwhile")

// BindClaims is DynamicResources' PreBind (upstream's bindClaim for each
// claim): a claim to allocate gets the delete-protection finalizer (an
// update) and then its allocation, stamped with the allocation time, and
// the pod in status.reservedFor (an update of the status); an allocated
// claim only gets the pod in reservedFor. A conflict is retried on a fresh
// read. A claim deleted or allocated elsewhere meanwhile fails the binding.
// It returns the claims written before any failure, as stored.
func (c *Cluster) BindClaims(ctx context.Context, pod *v1.Pod, node string, a *filter.DRAAllocation) ([]*resourceapi.ResourceClaim, error) {
	ctx = urgent(ctx) // part of the binding cycle (WithBindingsFirst)
	var written []*resourceapi.ResourceClaim
	var extended *resourceapi.ResourceClaim
	var mappings []v1.ContainerExtendedResourceRequest
	for _, dc := range a.Claims {
		if dc.Extended != nil {
			created, err := c.createExtendedClaim(ctx, dc.Claim)
			if err != nil {
				return written, fmt.Errorf("reserving resource claims of pod %s/%s on node %s: %w", pod.Namespace, pod.Name, node, err)
			}
			written = append(written, created)
			dc.Claim, extended, mappings = created, created, dc.Extended
		}
		claim, err := c.bindClaim(ctx, pod, dc)
		if err != nil {
			return written, fmt.Errorf("reserving resource claims of pod %s/%s on node %s: %w", pod.Namespace, pod.Name, node, err)
		}
		if dc.Extended != nil {
			written[len(written)-1] = claim
			continue
		}
		written = append(written, claim)
	}
	if extended != nil {
		// The pod's status names the claim and the container requests it
		// serves, for the kubelet.
		err := c.patchStatus(ctx, pod, func(st *v1.PodStatus) {
			st.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{RequestMappings: mappings, ResourceClaimName: extended.Name}
		})
		if err != nil {
			return written, fmt.Errorf("update pod %s/%s ExtendedResourceClaimStatus: %w", pod.Namespace, pod.Name, err)
		}
	}
	return written, nil
}

// createExtendedClaim creates the claim for a pod's extended resources
// backed by DRA from the cycle's in-memory one (its generated name, owner,
// annotation and requests), as upstream's PreBind does before writing its
// allocation.
func (c *Cluster) createExtendedClaim(ctx context.Context, inMemory *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	claim := inMemory.DeepCopy()
	claim.Name, claim.UID, claim.ResourceVersion = "", "", ""
	claim.Status = resourceapi.ResourceClaimStatus{}
	created, err := c.client.ResourceV1().ResourceClaims(claim.Namespace).Create(ctx, claim, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create claim for extended resources %s: %w", klog.KObj(claim), err)
	}
	return created, nil
}

func (c *Cluster) bindClaim(ctx context.Context, pod *v1.Pod, dc filter.DRAClaim) (*resourceapi.ResourceClaim, error) {
	claims := c.client.ResourceV1().ResourceClaims(dc.Claim.Namespace)
	claim := dc.Claim.DeepCopy()
	refresh := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if refresh {
			fresh, err := claims.Get(ctx, claim.Name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("get claim %s after a conflict: %w", klog.KObj(claim), err)
			}
			claim = fresh
		}
		refresh = true
		if claim.DeletionTimestamp != nil {
			return fmt.Errorf("claim %s got deleted: %w", klog.KObj(claim), errClaimChanged)
		}
		if resourceclaim.IsReservedForPod(pod, claim, false) {
			// An earlier attempt got through.
			return nil
		}
		if dc.Allocation != nil {
			if claim.Status.Allocation != nil {
				return fmt.Errorf("claim %s got allocated elsewhere: %w", klog.KObj(claim), errClaimChanged)
			}
			// The finalizer needs a normal update, before the status.
			if !slices.Contains(claim.Finalizers, resourceapi.Finalizer) {
				claim.Finalizers = append(claim.Finalizers, resourceapi.Finalizer)
				updated, err := claims.Update(ctx, claim, metav1.UpdateOptions{})
				if err != nil {
					return fmt.Errorf("add finalizer to claim %s: %w", klog.KObj(claim), err)
				}
				claim = updated
			}
			claim.Status.Allocation = dc.Allocation.DeepCopy()
		}
		if claim.Status.Allocation == nil {
			return fmt.Errorf("claim %s got deallocated: %w", klog.KObj(claim), errClaimChanged)
		}
		// DRADeviceBindingConditions and DRAResourceClaimDeviceStatus are on
		// by default in v1.37: the allocation records when it was made.
		if claim.Status.Allocation.AllocationTimestamp == nil {
			now := metav1.Now()
			claim.Status.Allocation.AllocationTimestamp = &now
		}
		claim.Status.ReservedFor = append(claim.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{
			APIGroup: v1.GroupName, Resource: "pods", Name: pod.Name, UID: pod.UID,
		})
		updated, err := claims.UpdateStatus(ctx, claim, metav1.UpdateOptions{})
		if err != nil {
			if dc.Allocation != nil {
				return fmt.Errorf("add allocation and reservation to claim %s: %w", klog.KObj(claim), err)
			}
			return fmt.Errorf("add reservation to claim %s: %w", klog.KObj(claim), err)
		}
		claim = updated
		return nil
	})
	return claim, err
}

// UnreserveClaims is DynamicResources' Unreserve: the pod leaves the
// status.reservedFor of each claim, by a strategic merge patch that needs
// no fresh copy (the claim's UID guards against a new claim of that name).
// Failures are logged; the next attempt at the pod retries. The claim
// PreBind created for the pod's extended resources is deleted instead (its
// finalizer removed first), as upstream's Unreserve deletes it.
func (c *Cluster) UnreserveClaims(ctx context.Context, pod *v1.Pod, claims []*resourceapi.ResourceClaim) {
	for _, claim := range claims {
		if filter.IsExtendedResourceClaimOf(claim, pod) {
			c.deleteExtendedClaim(ctx, claim)
			continue
		}
		if !resourceclaim.IsReservedForPod(pod, claim, false) {
			continue
		}
		patch := fmt.Sprintf(`{"metadata":{"uid":%q},"status":{"reservedFor":[{"$patch":"delete","uid":%q}]}}`, claim.UID, pod.UID)
		if _, err := c.client.ResourceV1().ResourceClaims(claim.Namespace).Patch(ctx, claim.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			klog.FromContext(ctx).Error(err, "Unreserving resource claim failed", "claim", klog.KObj(claim), "pod", klog.KObj(pod))
		}
	}
}

// deleteExtendedClaim deletes a claim made for a pod's extended resources,
// taking its delete-protection finalizer off first (conflicts retried).
func (c *Cluster) deleteExtendedClaim(ctx context.Context, claim *resourceapi.ResourceClaim) {
	claims := c.client.ResourceV1().ResourceClaims(claim.Namespace)
	logger := klog.FromContext(ctx)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := claims.Get(ctx, claim.Name, metav1.GetOptions{})
		if err != nil || cur.UID != claim.UID {
			return err
		}
		i := slices.Index(cur.Finalizers, resourceapi.Finalizer)
		if i < 0 {
			return nil
		}
		cur.Finalizers = slices.Delete(cur.Finalizers, i, i+1)
		_, err = claims.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) {
		logger.Error(err, "Removing the finalizer of an extended resource claim failed", "claim", klog.KObj(claim), "pod", claim.OwnerReferences)
	}
	uid := claim.UID
	if err := claims.Delete(ctx, claim.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
		logger.Error(err, "Deleting an extended resource claim failed", "claim", klog.KObj(claim))
	}
}
