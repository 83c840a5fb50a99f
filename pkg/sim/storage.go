package sim

import (
	"github.com/reprieve/reprieve/pkg/snapshot"
)

// applyStorage hands a scenario's storage objects to the scheduler, as its
// storage informers would. The simulation does not bind or provision
// claims: they stay as the scenario gives them.
func (w *world) applyStorage(st snapshot.StorageObjects) {
	if len(st.PersistentVolumes)+len(st.PersistentVolumeClaims)+len(st.StorageClasses)+len(st.CSINodes)+
		len(st.CSIDrivers)+len(st.CSIStorageCapacities)+len(st.VolumeAttachments) == 0 {
		return
	}
	w.sched.OnStorage(func(snap *snapshot.Snapshot) {
		for _, o := range st.PersistentVolumes {
			snap.SetPersistentVolume(o)
		}
		for _, o := range st.PersistentVolumeClaims {
			snap.SetPersistentVolumeClaim(o)
		}
		for _, o := range st.StorageClasses {
			snap.SetStorageClass(o)
		}
		for _, o := range st.CSINodes {
			snap.SetCSINode(o)
		}
		for _, o := range st.CSIDrivers {
			snap.SetCSIDriver(o)
		}
		for _, o := range st.CSIStorageCapacities {
			snap.SetCSIStorageCapacity(o)
		}
		for _, o := range st.VolumeAttachments {
			snap.SetVolumeAttachment(o)
		}
	}, true)
}
