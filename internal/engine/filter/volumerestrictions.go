package filter

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// preFilterRestrictions is VolumeRestrictions' PreFilter: every claim the
// pod names must exist; the ReadWriteOncePod claims among them conflict
// when pods on nodes use them. The plugin skips a pod without inline disks
// and without such a conflict, and then does not follow AddPod/RemovePod.
func (vs *volumeState) preFilterRestrictions(snap *snapshot.Snapshot, pod *v1.Pod) Status {
	for i := range pod.Spec.Volumes {
		if needsRestrictionsCheck(&pod.Spec.Volumes[i]) {
			vs.inlineDisks = append(vs.inlineDisks, &pod.Spec.Volumes[i])
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		pvc := snap.PersistentVolumeClaim(pod.Namespace, v.PersistentVolumeClaim.ClaimName)
		if pvc == nil {
			return reject(UnschedulableAndUnresolvable, VolumeRestrictions, notFound("persistentvolumeclaim", v.PersistentVolumeClaim.ClaimName).Error())
		}
		if !slices.Contains(pvc.Spec.AccessModes, v1.ReadWriteOncePod) {
			continue
		}
		if vs.rwopClaims == nil {
			vs.rwopClaims = map[string]bool{}
		}
		vs.rwopClaims[pvc.Name] = true
	}
	for name := range vs.rwopClaims {
		if claimUsedByPods(snap, pod.Namespace, name) {
			vs.rwopInUse++
		}
	}
	vs.restrictions = len(vs.inlineDisks) > 0 || vs.rwopInUse > 0
	return Status{}
}

// claimUsedByPods reports whether a pod bound to a node of the snapshot
// uses the claim namespace/name directly (not as an ephemeral volume).
func claimUsedByPods(snap *snapshot.Snapshot, namespace, name string) bool {
	for _, n := range snap.Nodes {
		for _, p := range n.Pods {
			if p.Namespace() != namespace {
				continue
			}
			for _, v := range p.Volumes() {
				if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == name {
					return true
				}
			}
		}
	}
	return false
}

// rwopRefs is upstream's conflictingPVCRefCountForPod: how many of a pod's
// claim volumes name one of the incoming pod's ReadWriteOncePod claims. As
// upstream, it compares names only, whatever the pod's namespace.
func (vs *volumeState) rwopRefs(volumes []v1.Volume) int {
	n := 0
	for _, v := range volumes {
		if v.PersistentVolumeClaim != nil && vs.rwopClaims[v.PersistentVolumeClaim.ClaimName] {
			n++
		}
	}
	return n
}

func needsRestrictionsCheck(v *v1.Volume) bool {
	return v.GCEPersistentDisk != nil || v.AWSElasticBlockStore != nil || v.RBD != nil || v.ISCSI != nil
}

// diskConflict reports whether one of the incoming pod's inline disks
// conflicts with one of a pod's volumes.
func (vs *volumeState) diskConflict(volumes []v1.Volume) bool {
	for _, v := range vs.inlineDisks {
		if isVolumeConflict(v, volumes) {
			return true
		}
	}
	return false
}

// isVolumeConflict is upstream's test of one inline disk against the
// volumes of a pod on the node: the same GCE PD unless both are read-only,
// the same EBS volume, the same iSCSI IQN or RBD image (overlapping
// monitors, same pool) unless both are read-only.
func isVolumeConflict(v *v1.Volume, volumes []v1.Volume) bool {
	for _, ev := range volumes {
		if d, e := v.GCEPersistentDisk, ev.GCEPersistentDisk; d != nil && e != nil {
			if d.PDName == e.PDName && !(d.ReadOnly && e.ReadOnly) {
				return true
			}
		}
		if d, e := v.AWSElasticBlockStore, ev.AWSElasticBlockStore; d != nil && e != nil {
			if d.VolumeID == e.VolumeID {
				return true
			}
		}
		if d, e := v.ISCSI, ev.ISCSI; d != nil && e != nil {
			if d.IQN == e.IQN && !(d.ReadOnly && e.ReadOnly) {
				return true
			}
		}
		if d, e := v.RBD, ev.RBD; d != nil && e != nil {
			if haveOverlap(d.CephMonitors, e.CephMonitors) && d.RBDPool == e.RBDPool && d.RBDImage == e.RBDImage && !(d.ReadOnly && e.ReadOnly) {
				return true
			}
		}
	}
	return false
}

func haveOverlap(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}
