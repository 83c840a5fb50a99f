package conformance

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/test/conformance/gen"
)

// snapshotStorage returns the scenario's storage objects for reprieve.
func snapshotStorage(sc *gen.Scenario) snapshot.StorageObjects {
	st := sc.Storage
	return snapshot.StorageObjects{
		PersistentVolumes:      st.PersistentVolumes,
		PersistentVolumeClaims: st.PersistentVolumeClaims,
		StorageClasses:         st.StorageClasses,
		CSINodes:               st.CSINodes,
		CSIDrivers:             st.CSIDrivers,
		CSIStorageCapacities:   st.CSIStorageCapacities,
		VolumeAttachments:      st.VolumeAttachments,
	}
}

// upstreamStorage returns the scenario's storage objects for upstream's
// fake clientset.
func upstreamStorage(sc *gen.Scenario) []runtime.Object {
	st := sc.Storage
	var out []runtime.Object
	for _, o := range st.PersistentVolumes {
		out = append(out, o)
	}
	for _, o := range st.PersistentVolumeClaims {
		out = append(out, o)
	}
	for _, o := range st.StorageClasses {
		out = append(out, o)
	}
	for _, o := range st.CSINodes {
		out = append(out, o)
	}
	for _, o := range st.CSIDrivers {
		out = append(out, o)
	}
	for _, o := range st.CSIStorageCapacities {
		out = append(out, o)
	}
	for _, o := range st.VolumeAttachments {
		out = append(out, o)
	}
	return out
}
