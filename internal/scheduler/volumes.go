package scheduler

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// VolumeBinder is implemented by a Cluster that carries out VolumeBinding's
// PreBind: it writes the PVs' claimRefs and the claims' selected node, then
// waits (bounded) until the PV controller has bound every claim. The pod is
// bound only when it returns nil. A Cluster without it binds pods with
// unbound claims as they are.
type VolumeBinder interface {
	BindVolumes(ctx context.Context, pod *v1.Pod, node string, b *filter.VolumeBindings) error
}

// volumeBindings returns what VolumeBinding's PreBind must do for the pod on
// node, nil when nothing (a failure to compute it leaves the claims as
// they are, as the Filter would have failed first).
func volumeBindings(c *filter.Cycle, node *snapshot.Node) *filter.VolumeBindings {
	vb, err := c.VolumeBindings(node)
	if err != nil {
		return nil
	}
	return vb
}

// bindVolumes runs the PreBind of the binding's claims, if any.
func (e executor) bindVolumes(ctx context.Context, b *Binding) error {
	if b.Volumes == nil {
		return nil
	}
	vb, ok := e.cluster.(VolumeBinder)
	if !ok {
		return nil
	}
	return vb.BindVolumes(ctx, b.Pod, b.Node, b.Volumes)
}
