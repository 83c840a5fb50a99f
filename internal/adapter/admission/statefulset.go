package admission

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// DefaultStatefulSet sets replicas to 1 and podManagementPolicy to
// OrderedReady when unset, the claim templates' volumeMode to Filesystem,
// and defaults the pod template.
func DefaultStatefulSet(s *appsv1.StatefulSet) {
	if s.Spec.Replicas == nil {
		s.Spec.Replicas = ptr.To[int32](1)
	}
	if s.Spec.PodManagementPolicy == "" {
		s.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	for i := range s.Spec.VolumeClaimTemplates {
		if s.Spec.VolumeClaimTemplates[i].Spec.VolumeMode == nil {
			s.Spec.VolumeClaimTemplates[i].Spec.VolumeMode = ptr.To(v1.PersistentVolumeFilesystem)
		}
	}
	DefaultPodSpec(&s.Spec.Template.Spec)
}

// ValidateStatefulSet checks what ValidateDeployment checks, the pod
// management policy, and that every volume claim template has a name, an
// access mode and a storage request.
func ValidateStatefulSet(s *appsv1.StatefulSet) field.ErrorList {
	errs := validateObjectMeta(&s.ObjectMeta, true)
	errs = append(errs, validateReplicated(s.Spec.Replicas, s.Spec.Selector, &s.Spec.Template)...)
	switch s.Spec.PodManagementPolicy {
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.NotSupported(spec.Child("podManagementPolicy"), s.Spec.PodManagementPolicy,
			[]string{string(appsv1.OrderedReadyPodManagement), string(appsv1.ParallelPodManagement)}))
	}
	for i, t := range s.Spec.VolumeClaimTemplates {
		path := spec.Child("volumeClaimTemplates").Index(i)
		if t.Name == "" {
			errs = append(errs, field.Required(path.Child("metadata", "name"), ""))
		}
		if len(t.Spec.AccessModes) == 0 {
			errs = append(errs, field.Required(path.Child("spec", "accessModes"), "at least 1 access mode is required"))
		}
		if q, ok := t.Spec.Resources.Requests[v1.ResourceStorage]; !ok || q.Sign() <= 0 {
			errs = append(errs, field.Required(path.Child("spec", "resources", "requests", "storage"), "must be a positive quantity"))
		}
	}
	return errs
}
