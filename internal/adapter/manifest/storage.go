package manifest

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// storageKinds are the storage kinds the volume plugins read, with their
// apiVersion and whether they are namespaced.
var storageKinds = map[string]struct {
	apiVersion string
	namespaced bool
}{
	"PersistentVolume":      {"v1", false},
	"PersistentVolumeClaim": {"v1", true},
	"StorageClass":          {"storage.k8s.io/v1", false},
	"CSINode":               {"storage.k8s.io/v1", false},
	"CSIDriver":             {"storage.k8s.io/v1", false},
	"CSIStorageCapacity":    {"storage.k8s.io/v1", true},
	"VolumeAttachment":      {"storage.k8s.io/v1", false},
}

// newStorageObject returns an empty object of a storage kind, nil for
// other kinds.
func newStorageObject(kind string) any {
	switch kind {
	case "PersistentVolume":
		return &v1.PersistentVolume{}
	case "PersistentVolumeClaim":
		return &v1.PersistentVolumeClaim{}
	case "StorageClass":
		return &storagev1.StorageClass{}
	case "CSINode":
		return &storagev1.CSINode{}
	case "CSIDriver":
		return &storagev1.CSIDriver{}
	case "CSIStorageCapacity":
		return &storagev1.CSIStorageCapacity{}
	case "VolumeAttachment":
		return &storagev1.VolumeAttachment{}
	}
	return nil
}

// addStorage files a decoded storage object (namespaced ones into ns),
// applying the API server's defaults the volume plugins rely on. It
// returns false for other objects.
func (s *Set) addStorage(obj any, ns string) bool {
	st := &s.Objects.Storage
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		if o.Spec.VolumeMode == nil {
			mode := v1.PersistentVolumeFilesystem
			o.Spec.VolumeMode = &mode
		}
		if o.Spec.PersistentVolumeReclaimPolicy == "" {
			o.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimRetain
		}
		st.PersistentVolumes = append(st.PersistentVolumes, o)
	case *v1.PersistentVolumeClaim:
		o.Namespace = ns
		if o.Spec.VolumeMode == nil {
			mode := v1.PersistentVolumeFilesystem
			o.Spec.VolumeMode = &mode
		}
		st.PersistentVolumeClaims = append(st.PersistentVolumeClaims, o)
	case *storagev1.StorageClass:
		if o.VolumeBindingMode == nil {
			mode := storagev1.VolumeBindingImmediate
			o.VolumeBindingMode = &mode
		}
		if o.ReclaimPolicy == nil {
			policy := v1.PersistentVolumeReclaimDelete
			o.ReclaimPolicy = &policy
		}
		st.StorageClasses = append(st.StorageClasses, o)
	case *storagev1.CSINode:
		st.CSINodes = append(st.CSINodes, o)
	case *storagev1.CSIDriver:
		st.CSIDrivers = append(st.CSIDrivers, o)
	case *storagev1.CSIStorageCapacity:
		o.Namespace = ns
		st.CSIStorageCapacities = append(st.CSIStorageCapacities, o)
	case *storagev1.VolumeAttachment:
		st.VolumeAttachments = append(st.VolumeAttachments, o)
	default:
		return false
	}
	return true
}
