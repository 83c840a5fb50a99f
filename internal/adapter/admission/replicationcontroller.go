package admission

import (
	"maps"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// DefaultReplicationController is the API server's defaulting: without a
// selector, the template's labels are the selector (and the labels, when
// it has none); replicas 1; the template's pod spec defaulted.
func DefaultReplicationController(rc *v1.ReplicationController) {
	if t := rc.Spec.Template; t != nil && len(t.Labels) > 0 {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = maps.Clone(t.Labels)
		}
		if len(rc.Labels) == 0 {
			rc.Labels = maps.Clone(t.Labels)
		}
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = ptr.To[int32](1)
	}
	if t := rc.Spec.Template; t != nil {
		DefaultPodSpec(&t.Spec)
	}
}

// ValidateReplicationController checks what the scheduler reads of it: a
// selector (of valid labels) that the template's labels match, and the
// template.
func ValidateReplicationController(rc *v1.ReplicationController) field.ErrorList {
	errs := validateObjectMeta(&rc.ObjectMeta, true)
	if r := rc.Spec.Replicas; r != nil && *r < 0 {
		errs = append(errs, field.Invalid(spec.Child("replicas"), *r, "must be greater than or equal to 0"))
	}
	if len(rc.Spec.Selector) == 0 {
		return append(errs, field.Required(spec.Child("selector"), ""))
	}
	if rc.Spec.Template == nil {
		return append(errs, field.Required(spec.Child("template"), ""))
	}
	sel := &metav1.LabelSelector{MatchLabels: rc.Spec.Selector}
	return append(errs, validateReplicated(nil, sel, rc.Spec.Template)...)
}
