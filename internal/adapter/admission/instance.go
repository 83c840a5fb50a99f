package admission

import (
	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// AdmitPodInstance is Admit for a pod ValidatePodInstance validates, whose
// other fields Admit has already defaulted: it defaults what DefaultPod
// defaults of the fields that differ (the status's phase) and reports
// whether ValidatePod would accept the pod.
func AdmitPodInstance(p *v1.Pod) bool {
	defaultPodPhase(&p.Status)
	return len(ValidatePodInstance(p)) == 0
}

// AdmitPodInstanceOfResources is AdmitPodInstance for a pod whose spec and
// status resources (its containers' reports, and the pod's) are the very
// ones of a pod AdmitPodInstance accepted: the sums it checks and the
// resources the status reports are then known to fit, and only the rest
// is validated.
func AdmitPodInstanceOfResources(p *v1.Pod) bool {
	defaultPodPhase(&p.Status)
	return len(validateInstanceMeta(p)) == 0
}

// ValidatePodInstance validates the fields in which the pods of one
// workload differ, for a loader that decodes and admits the rest once: for
// a pod p that equals a pod ValidatePod accepted but in its name, UID,
// resource version, creation time, annotations, managed fields,
// spec.nodeName, spec.volumes and status (and in what ValidatePod does not
// read, such as the containers' volume mounts), ValidatePod(p) is empty
// exactly when ValidatePodInstance(p) is. (ValidatePod's checks are each of one field —
// of metadata as apimachinery's ValidateObjectMeta makes them — but for
// the sums, which read the spec and the status and are made again here.)
// Its errors may be worded otherwise; the caller asks ValidatePod for
// them.
func ValidatePodInstance(p *v1.Pod) field.ErrorList {
	errs := validateInstanceMeta(p)
	errs = append(errs, validatePodStatusResources(&p.Status)...)
	if len(errs) == 0 {
		errs = validatePodSums(p)
	}
	return errs
}

// validateInstanceMeta is ValidatePodInstance but for the resources.
func validateInstanceMeta(p *v1.Pod) field.ErrorList {
	// Of ValidateObjectMeta's checks, those of the fields that differ
	// (the namespace, labels, owner references and the rest are the
	// accepted pod's), each path made only for an error.
	var errs field.ErrorList
	if p.Name == "" {
		errs = append(errs, field.Required(metadata.Child("name"), "name or generateName is required"))
	} else {
		for _, msg := range nameIsDNSSubdomain(p.Name, false) {
			errs = append(errs, field.Invalid(metadata.Child("name"), p.Name, msg))
		}
	}
	if !annotationsValid(p.Annotations) {
		errs = append(errs, apivalidation.ValidateAnnotations(p.Annotations, metadata.Child("annotations"))...)
	}
	if !managedFieldsValid(p.ManagedFields) {
		errs = append(errs, metavalidation.ValidateManagedFields(p.ManagedFields, metadata.Child("managedFields"), metavalidation.CoveredByDeclarative)...)
	}
	if n := p.Spec.NodeName; n != "" && !isDNS1123Subdomain(n) {
		errs = append(errs, validateReference(n, spec.Child("nodeName"))...)
	}
	errs = append(errs, validateGatedNodeName(&p.Spec)...)
	// The volumes, whose checks read the pod's name too.
	return append(errs, validateVolumes(p.Spec.Volumes, p.Name, spec)...)
}
