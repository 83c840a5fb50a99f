package kube

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-helpers/storage/volume"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/scheduler"
)

var _ scheduler.VolumeBinder = (*Cluster)(nil)

// volumeBindTimeout is how long BindVolumes waits for the claims to be
// bound: VolumeBindingArgs.bindTimeoutSeconds' default.
const volumeBindTimeout = 600 * time.Second

// volumeBindPoll is how often BindVolumes looks at the claims, as upstream.
const volumeBindPoll = time.Second

// BindVolumes is VolumeBinding's PreBind (upstream's BindPodVolumes): it
// updates the PVs matched to the pod's claims with their claimRef and the
// claims to provision with the selected node, then waits until the PV
// controller has bound every claim of b.Claims (spec.volumeName and the
// bind-completed annotation), at most volumeBindTimeout. A claim that
// loses its selected node or a PV bound to another claim meanwhile fails
// the binding, as upstream's checkBindings does.
func (c *Cluster) BindVolumes(ctx context.Context, pod *v1.Pod, node string, b *filter.VolumeBindings) error {
	// Part of the binding cycle (WithBindingsFirst).
	return c.bindVolumes(urgent(ctx), pod, node, b, volumeBindTimeout)
}

func (c *Cluster) bindVolumes(ctx context.Context, pod *v1.Pod, node string, b *filter.VolumeBindings, timeout time.Duration) error {
	for _, pv := range b.Static {
		if _, err := c.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("binding volumes: binding PV %q: %w", pv.Name, err)
		}
	}
	for _, claim := range b.Provision {
		if _, err := c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("binding volumes: selecting node %q for claim %s/%s: %w", node, claim.Namespace, claim.Name, err)
		}
	}
	provisioned := map[string]bool{}
	for _, claim := range b.Provision {
		provisioned[claim.Namespace+"/"+claim.Name] = true
	}
	err := wait.PollUntilContextTimeout(ctx, volumeBindPoll, timeout, true, func(ctx context.Context) (bool, error) {
		for _, want := range b.Claims {
			claim, err := c.client.CoreV1().PersistentVolumeClaims(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
			if err != nil {
				return false, fmt.Errorf("claim %s/%s: %w", want.Namespace, want.Name, err)
			}
			if claim.Spec.VolumeName != "" && metav1.HasAnnotation(claim.ObjectMeta, volume.AnnBindCompleted) {
				continue
			}
			if provisioned[want.Namespace+"/"+want.Name] && claim.Spec.VolumeName == "" && claim.Annotations[volume.AnnSelectedNode] != node {
				return false, fmt.Errorf("claim %s/%s: selectedNode annotation reset", want.Namespace, want.Name)
			}
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("binding volumes of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}
