package filter

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/component-helpers/storage/volume"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// ClassStorage is, for one StorageClass, the storage a pod's unbound
// WaitForFirstConsumer claims request on a node and the capacity that
// would serve them: what VolumeBinding's Score reads.
type ClassStorage struct {
	Requested, Capacity int64
}

// VolumeScoreInputs returns, for each of nodes (nodes the pod passed the
// filters on, in order), VolumeBinding's Score input by class, as upstream
// groups it: the claims matched to static PVs (request and PV capacity
// summed) when any claim on the node is matched; otherwise the claims to
// provision whose driver tracks capacity (requests summed, the capacity of
// the CSIStorageCapacity that fits the claim). A nil map scores 0: the pod
// has no unbound WaitForFirstConsumer claim, or nothing is grouped.
func VolumeScoreInputs(snap *snapshot.Snapshot, pod *v1.Pod, nodes []*snapshot.Node) []map[string]ClassStorage {
	out := make([]map[string]ClassStorage, len(nodes))
	bs, st := bindingPreFilter(snap, pod)
	if !st.IsSuccess() || bs == nil || len(bs.delayClaims) == 0 {
		return out
	}
	for i, n := range nodes {
		out[i] = bs.scoreInput(snap, n.Obj)
	}
	return out
}

func (bs *bindingState) scoreInput(snap *snapshot.Snapshot, node *v1.Node) map[string]ClassStorage {
	var toMatch, toProvision []*v1.PersistentVolumeClaim
	for _, claim := range bs.delayClaims {
		if _, ok := claim.Annotations[volume.AnnSelectedNode]; ok {
			toProvision = append(toProvision, claim)
		} else {
			toMatch = append(toMatch, claim)
		}
	}
	_, matched, unmatched, err := bs.findMatchingVolumes(toMatch, node)
	if err != nil {
		return nil
	}
	classes := map[string]ClassStorage{}
	if len(matched) > 0 {
		for _, claim := range toMatch {
			pv, ok := matched[claim]
			if !ok {
				continue
			}
			cs := classes[pv.Spec.StorageClassName]
			req := claim.Spec.Resources.Requests[v1.ResourceStorage]
			capacity := pv.Spec.Capacity[v1.ResourceStorage]
			cs.Requested += req.Value()
			cs.Capacity += capacity.Value()
			classes[pv.Spec.StorageClassName] = cs
		}
		return classes
	}
	for _, claim := range append(toProvision, unmatched...) {
		name := volume.GetPersistentVolumeClaimClass(claim)
		class := snap.StorageClass(name)
		if class == nil {
			continue
		}
		capObj := trackedCapacity(snap, class, claim, node)
		if capObj == nil {
			continue
		}
		cs := classes[name]
		// The capacity of the class on the node, not a sum: two claims of
		// a class share it.
		if capObj.Capacity != nil {
			cs.Capacity = capObj.Capacity.Value()
		} else {
			cs.Capacity = 0
		}
		req := claim.Spec.Resources.Requests[v1.ResourceStorage]
		cs.Requested += req.Value()
		classes[name] = cs
	}
	if len(classes) == 0 {
		return nil
	}
	return classes
}

// trackedCapacity is the CSIStorageCapacity upstream's hasEnoughCapacity
// finds for the claim on node: nil when the claim requests no storage, the
// class's driver does not track capacity, or none fits (the first that
// fits, in the snapshot's order; upstream takes the first its lister
// lists).
func trackedCapacity(snap *snapshot.Snapshot, class *storagev1.StorageClass, claim *v1.PersistentVolumeClaim, node *v1.Node) *storagev1.CSIStorageCapacity {
	c, _ := capacityFor(snap, class, claim, node)
	return c
}
