package admission

import (
	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidatePodInstance validates the fields in which the pods of one
// workload differ, for a loader that decodes and admits the rest once: for
// a pod p that equals a pod ValidatePod accepted but in its name, UID,
// resource version, creation time, annotations, managed fields,
// spec.nodeName and status (and in what ValidatePod does not read, such as
// spec.volumes and the containers' volume mounts), ValidatePod(p) is empty
// exactly when ValidatePodInstance(p) is. (ValidatePod's checks are each of one field —
// of metadata as apimachinery's ValidateObjectMeta makes them — but for
// the sums, which read the spec and the status and are made again here.)
// Its errors may be worded otherwise; the caller asks ValidatePod for
// them.
func ValidatePodInstance(p *v1.Pod) field.ErrorList {
	// The namespace is the accepted pod's: not checked again (its regular
	// expression costs as much as the rest of this).
	meta := metav1.ObjectMeta{Name: p.Name, GenerateName: p.GenerateName, Annotations: p.Annotations, ManagedFields: p.ManagedFields}
	errs := apivalidation.ValidateObjectMeta(&meta, false, nameIsDNSSubdomain, metadata)
	errs = append(errs, validateReference(p.Spec.NodeName, spec.Child("nodeName"))...)
	errs = append(errs, validatePodStatusResources(&p.Status)...)
	if len(errs) == 0 {
		errs = validatePodSums(p)
	}
	return errs
}
