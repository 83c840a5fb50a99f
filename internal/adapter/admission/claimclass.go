package admission

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// The annotations that make a StorageClass the default.
const (
	defaultClassAnnotation     = "storageclass.kubernetes.io/is-default-class"
	betaDefaultClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
)

// DefaultClaimClass is the DefaultStorageClass admission plugin: a claim
// created without storageClassName gets the default StorageClass of
// classes (the newest of several, then the first by name), if any.
func DefaultClaimClass(pvc *v1.PersistentVolumeClaim, classes []*storagev1.StorageClass) {
	if pvc.Spec.StorageClassName != nil {
		return
	}
	var defaults []*storagev1.StorageClass
	for _, c := range classes {
		if c.Annotations[defaultClassAnnotation] == "true" || c.Annotations[betaDefaultClassAnnotation] == "true" {
			defaults = append(defaults, c)
		}
	}
	if len(defaults) == 0 {
		return
	}
	def := slices.MinFunc(defaults, func(a, b *storagev1.StorageClass) int {
		if ta, tb := a.CreationTimestamp.UnixNano(), b.CreationTimestamp.UnixNano(); ta != tb {
			if ta > tb {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	name := def.Name
	pvc.Spec.StorageClassName = &name
}
