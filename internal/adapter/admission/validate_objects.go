package admission

import (
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateNode checks a node's name, taints and resources (capacity and
// allocatable non-negative and representable).
func ValidateNode(n *v1.Node) field.ErrorList {
	errs := validateObjectMeta(&n.ObjectMeta, false)
	seen := sets.New[string]()
	for i, t := range n.Spec.Taints {
		p := spec.Child("taints").Index(i)
		errs = append(errs, metavalidation.ValidateLabelName(t.Key, p.Child("key"))...)
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
		}
		errs = append(errs, enum(p.Child("effect"), string(t.Effect), false, string(v1.TaintEffectNoSchedule), string(v1.TaintEffectPreferNoSchedule), string(v1.TaintEffectNoExecute))...)
		key := t.Key + "\x00" + string(t.Effect)
		if seen.Has(key) {
			errs = append(errs, field.Duplicate(p, "taints must be unique by key and effect pair"))
		}
		seen.Insert(key)
	}
	status := field.NewPath("status")
	errs = append(errs, validateResourceList(n.Status.Capacity, status.Child("capacity"), true)...)
	errs = append(errs, validateResourceList(n.Status.Allocatable, status.Child("allocatable"), true)...)
	return errs
}

// ValidateNamespace checks a namespace's name (a DNS label).
func ValidateNamespace(ns *v1.Namespace) field.ErrorList {
	return apivalidation.ValidateObjectMeta(&ns.ObjectMeta, false, apivalidation.NameIsDNSLabel, metadata)
}

// ValidatePriorityClass checks a PriorityClass: the system- prefix is
// reserved for the built-in classes, user classes are at most
// HighestUserDefinablePriority, and preemptionPolicy is an enum.
func ValidatePriorityClass(pc *schedulingv1.PriorityClass) field.ErrorList {
	errs := validateObjectMeta(&pc.ObjectMeta, false)
	if strings.HasPrefix(pc.Name, systemPrefix) {
		if v, ok := systemClasses[pc.Name]; !ok || v != pc.Value || pc.GlobalDefault {
			errs = append(errs, field.Forbidden(metadata.Child("name"), fmt.Sprintf("priority class names with %q prefix are reserved for system use", systemPrefix)))
		}
	} else if pc.Value > HighestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %d", HighestUserDefinablePriority)))
	}
	if pc.PreemptionPolicy != nil {
		errs = append(errs, enum(field.NewPath("preemptionPolicy"), string(*pc.PreemptionPolicy), false, string(v1.PreemptLowerPriority), string(v1.PreemptNever))...)
	}
	return errs
}

// ValidatePDB checks a PodDisruptionBudget's selector and its
// minAvailable/maxUnavailable (not both, non-negative, valid percentages).
func ValidatePDB(pdb *policyv1.PodDisruptionBudget) field.ErrorList {
	errs := validateObjectMeta(&pdb.ObjectMeta, true)
	if pdb.Spec.MinAvailable != nil && pdb.Spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(spec, pdb.Spec, "minAvailable and maxUnavailable cannot be both set"))
	}
	for _, f := range []struct {
		name string
		v    *intstr.IntOrString
	}{{"minAvailable", pdb.Spec.MinAvailable}, {"maxUnavailable", pdb.Spec.MaxUnavailable}} {
		if f.v != nil {
			errs = append(errs, validateIntOrPercent(*f.v, spec.Child(f.name))...)
		}
	}
	errs = append(errs, metavalidation.ValidateLabelSelector(pdb.Spec.Selector, selectorOK, spec.Child("selector"))...)
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil {
		errs = append(errs, enum(spec.Child("unhealthyPodEvictionPolicy"), string(*p), false, string(policyv1.IfHealthyBudget), string(policyv1.AlwaysAllow))...)
	}
	return errs
}

func validateIntOrPercent(v intstr.IntOrString, path *field.Path) field.ErrorList {
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return field.ErrorList{field.Invalid(path, v.IntVal, "must be greater than or equal to 0")}
		}
		return nil
	}
	s, ok := strings.CutSuffix(v.StrVal, "%")
	n, err := strconv.Atoi(s)
	if !ok || err != nil {
		return field.ErrorList{field.Invalid(path, v.StrVal, "must be an integer or percentage (e.g '5%')")}
	}
	if n < 0 || n > 100 {
		return field.ErrorList{field.Invalid(path, v.StrVal, "must not be greater than 100%")}
	}
	return nil
}

// ValidateDeployment checks replicas, the selector (required, non-empty and
// matching the template's labels) and the template (restartPolicy Always).
func ValidateDeployment(d *appsv1.Deployment) field.ErrorList {
	errs := validateObjectMeta(&d.ObjectMeta, true)
	return append(errs, validateReplicated(d.Spec.Replicas, d.Spec.Selector, &d.Spec.Template)...)
}

// ValidateReplicaSet is ValidateDeployment for a ReplicaSet.
func ValidateReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	errs := validateObjectMeta(&rs.ObjectMeta, true)
	return append(errs, validateReplicated(rs.Spec.Replicas, rs.Spec.Selector, &rs.Spec.Template)...)
}

func validateReplicated(replicas *int32, sel *metav1.LabelSelector, t *v1.PodTemplateSpec) field.ErrorList {
	var errs field.ErrorList
	if replicas != nil && *replicas < 0 {
		errs = append(errs, field.Invalid(spec.Child("replicas"), *replicas, "must be greater than or equal to 0"))
	}
	errs = append(errs, validateSelectorMatches(sel, t)...)
	errs = append(errs, ValidatePodTemplate(t, spec.Child("template"))...)
	if t.Spec.RestartPolicy != v1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(spec.Child("template", "spec", "restartPolicy"), t.Spec.RestartPolicy, []string{string(v1.RestartPolicyAlways)}))
	}
	return errs
}

func validateSelectorMatches(sel *metav1.LabelSelector, t *v1.PodTemplateSpec) field.ErrorList {
	if sel == nil {
		return field.ErrorList{field.Required(spec.Child("selector"), "")}
	}
	errs := metavalidation.ValidateLabelSelector(sel, selectorOK, spec.Child("selector"))
	if len(errs) > 0 {
		return errs
	}
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		return field.ErrorList{field.Invalid(spec.Child("selector"), sel, "empty selector is invalid for deployment")}
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return field.ErrorList{field.Invalid(spec.Child("selector"), sel, err.Error())}
	}
	if !s.Matches(labels.Set(t.Labels)) {
		return field.ErrorList{field.Invalid(spec.Child("template", "metadata", "labels"), t.Labels, "`selector` does not match template `labels`")}
	}
	return nil
}

// ValidateJob checks parallelism and completions (non-negative) and the
// template (restartPolicy OnFailure or Never).
func ValidateJob(j *batchv1.Job) field.ErrorList {
	errs := validateObjectMeta(&j.ObjectMeta, true)
	if p := j.Spec.Parallelism; p != nil && *p < 0 {
		errs = append(errs, field.Invalid(spec.Child("parallelism"), *p, "must be greater than or equal to 0"))
	}
	if c := j.Spec.Completions; c != nil && *c < 0 {
		errs = append(errs, field.Invalid(spec.Child("completions"), *c, "must be greater than or equal to 0"))
	}
	if j.Spec.Selector != nil {
		errs = append(errs, validateSelectorMatches(j.Spec.Selector, &j.Spec.Template)...)
	}
	errs = append(errs, ValidatePodTemplate(&j.Spec.Template, spec.Child("template"))...)
	if rp := j.Spec.Template.Spec.RestartPolicy; rp != v1.RestartPolicyOnFailure && rp != v1.RestartPolicyNever {
		errs = append(errs, field.NotSupported(spec.Child("template", "spec", "restartPolicy"), rp, []string{string(v1.RestartPolicyOnFailure), string(v1.RestartPolicyNever)}))
	}
	return errs
}

// ValidatePodGroup checks a PodGroup's name.
func ValidatePodGroup(pg *schedulingv1beta1.PodGroup) field.ErrorList {
	return validateObjectMeta(&pg.ObjectMeta, true)
}

// ValidateCompositePodGroup checks a CompositePodGroup's name.
func ValidateCompositePodGroup(cpg *schedulingv1alpha3.CompositePodGroup) field.ErrorList {
	return validateObjectMeta(&cpg.ObjectMeta, true)
}
