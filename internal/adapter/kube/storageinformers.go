package kube

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/scheduler"
)

// storageHandler is an informer and the handler that feeds its objects to
// the scheduler.
type storageHandler struct {
	inf cache.SharedIndexInformer
	h   cache.ResourceEventHandler
}

// storageFuncs builds the handler of one storage kind from its set and
// remove operations on the snapshot.
func storageFuncs[T any](s *scheduler.Live, set func(*snapshot.Snapshot, T), remove func(*snapshot.Snapshot, T)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			if t, ok := o.(T); ok {
				s.OnStorage(func(snap *snapshot.Snapshot) { set(snap, t) }, true)
			}
		},
		UpdateFunc: func(_, o any) {
			if t, ok := o.(T); ok {
				s.OnStorage(func(snap *snapshot.Snapshot) { set(snap, t) }, true)
			}
		},
		DeleteFunc: func(o any) {
			if t, ok := unwrap[T](o); ok {
				s.OnStorage(func(snap *snapshot.Snapshot) { remove(snap, t) }, false)
			}
		},
	}
}

// storageHandlers are the informers of the storage kinds the volume
// plugins read.
func storageHandlers(f informers.SharedInformerFactory, s *scheduler.Live) []storageHandler {
	core, st := f.Core().V1(), f.Storage().V1()
	return []storageHandler{
		{core.PersistentVolumes().Informer(), storageFuncs(s,
			(*snapshot.Snapshot).SetPersistentVolume,
			func(snap *snapshot.Snapshot, o *v1.PersistentVolume) { snap.RemovePersistentVolume(o.Name) })},
		{core.PersistentVolumeClaims().Informer(), storageFuncs(s,
			(*snapshot.Snapshot).SetPersistentVolumeClaim,
			func(snap *snapshot.Snapshot, o *v1.PersistentVolumeClaim) {
				snap.RemovePersistentVolumeClaim(o.Namespace + "/" + o.Name)
			})},
		{st.StorageClasses().Informer(), storageFuncs(s,
			(*snapshot.Snapshot).SetStorageClass,
			func(snap *snapshot.Snapshot, o *storagev1.StorageClass) { snap.RemoveStorageClass(o.Name) })},
		{st.CSINodes().Informer(), storageFuncs(s,
			(*snapshot.Snapshot).SetCSINode,
			func(snap *snapshot.Snapshot, o *storagev1.CSINode) { snap.RemoveCSINode(o.Name) })},
		{st.CSIDrivers().Informer(), storageFuncs(s,
			(*snapshot.Snapshot).SetCSIDriver,
			func(snap *snapshot.Snapshot, o *storagev1.CSIDriver) { snap.RemoveCSIDriver(o.Name) })},
		{st.CSIStorageCapacities().Informer(), storageFuncs(s,
			(*snapshot.Snapshot).SetCSIStorageCapacity,
			func(snap *snapshot.Snapshot, o *storagev1.CSIStorageCapacity) {
				snap.RemoveCSIStorageCapacity(o.Namespace + "/" + o.Name)
			})},
		{st.VolumeAttachments().Informer(), storageFuncs(s,
			(*snapshot.Snapshot).SetVolumeAttachment,
			func(snap *snapshot.Snapshot, o *storagev1.VolumeAttachment) { snap.RemoveVolumeAttachment(o.Name) })},
	}
}
