package filter

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/component-helpers/storage/volume"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// pvTopology is one zone or region label of a bound PV: the label key and
// the values ("__"-separated in the label) the node must carry.
type pvTopology struct {
	key    string
	values map[string]bool
}

// zoneLabels are the labels VolumeZone compares, in upstream's order.
var zoneLabels = []string{v1.LabelFailureDomainBetaZone, v1.LabelFailureDomainBetaRegion, v1.LabelTopologyZone, v1.LabelTopologyRegion}

// zonePreFilter is VolumeZone's PreFilter: the topology labels of the PVs
// of the pod's claim volumes. Unbound WaitForFirstConsumer claims have no
// PV yet and are left out; other unbound claims reject the pod. It returns
// nil when the plugin skips (no topology).
func zonePreFilter(snap *snapshot.Snapshot, pod *v1.Pod) ([]pvTopology, Status) {
	var out []pvTopology
	uu := func(msg string) ([]pvTopology, Status) {
		return nil, reject(UnschedulableAndUnresolvable, VolumeZone, msg)
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		name := v.PersistentVolumeClaim.ClaimName
		if name == "" {
			return uu("PersistentVolumeClaim had no name")
		}
		pvc := snap.PersistentVolumeClaim(pod.Namespace, name)
		if pvc == nil {
			return uu(notFound("persistentvolumeclaim", name).Error())
		}
		if pvc.Spec.VolumeName == "" {
			className := volume.GetPersistentVolumeClaimClass(pvc)
			if className == "" {
				return uu("PersistentVolumeClaim had no pv name and storageClass name")
			}
			class := snap.StorageClass(className)
			if class == nil {
				return uu(notFoundStorage("storageclass", className).Error())
			}
			if class.VolumeBindingMode == nil {
				return uu(fmt.Sprintf("VolumeBindingMode not set for StorageClass %q", className))
			}
			if *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
				continue
			}
			return uu("PersistentVolume had no name")
		}
		pv := snap.PersistentVolume(pvc.Spec.VolumeName)
		if pv == nil {
			return uu(notFound("persistentvolume", pvc.Spec.VolumeName).Error())
		}
		for _, key := range zoneLabels {
			value, ok := pv.Labels[key]
			if !ok {
				continue
			}
			values, ok := zoneSet(value)
			if !ok {
				continue
			}
			out = append(out, pvTopology{key: key, values: values})
		}
	}
	return out, Status{}
}

// zoneSet parses a multi-zone label value ("a__b"); an empty element makes
// the label ignored, as upstream.
func zoneSet(value string) (map[string]bool, bool) {
	set := map[string]bool{}
	for _, z := range strings.Split(value, "__") {
		z = strings.TrimSpace(z)
		if z == "" {
			return nil, false
		}
		set[z] = true
	}
	return set, true
}

// filterZone is VolumeZone's Filter: a node with any zone or region label
// must carry every PV topology label (or its GA twin) with an allowed value.
func filterZone(zones []pvTopology, node *v1.Node) Status {
	hasAny := false
	for _, l := range zoneLabels {
		if _, ok := node.Labels[l]; ok {
			hasAny = true
			break
		}
	}
	if !hasAny {
		return Status{}
	}
	for _, t := range zones {
		v, ok := node.Labels[t.key]
		if !ok {
			v, ok = node.Labels[gaZoneLabel(t.key)]
		}
		if !ok || !t.values[v] {
			return statusVolumeZone
		}
	}
	return Status{}
}

func gaZoneLabel(key string) string {
	switch key {
	case v1.LabelFailureDomainBetaRegion:
		return v1.LabelTopologyRegion
	case v1.LabelFailureDomainBetaZone:
		return v1.LabelTopologyZone
	}
	return key
}
