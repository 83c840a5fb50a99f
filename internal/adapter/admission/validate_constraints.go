package admission

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validateTolerations(ts []v1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		p := path.Index(i)
		if t.Key != "" && !isLabelKey(t.Key, false) {
			errs = append(errs, metavalidation.ValidateLabelName(t.Key, p.Child("key"))...)
		}
		if t.Key == "" && t.Operator != v1.TolerationOpExists {
			errs = append(errs, field.Invalid(p.Child("operator"), t.Operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != v1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(p.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case v1.TolerationOpEqual, "":
			if isLabelValue(t.Value) {
				break
			}
			// Upstream's path: the operator.
			errs = append(errs, field.Invalid(p.Child("operator"), t.Value, strings.Join(validation.IsValidLabelValue(t.Value), ";")))
		case v1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			// Lt and Gt need the TaintTolerationComparisonOperators gate (alpha, off).
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, []string{string(v1.TolerationOpEqual), string(v1.TolerationOpExists)}))
		}
		errs = append(errs, enum(p.Child("effect"), string(t.Effect), true, string(v1.TaintEffectNoSchedule), string(v1.TaintEffectPreferNoSchedule), string(v1.TaintEffectNoExecute))...)
	}
	return errs
}

// validateAffinity checks the node affinity, and the pod (anti-)affinity
// terms of a pod whose labels are podLabels (nil for a template).
func validateAffinity(a *v1.Affinity, podLabels map[string]string, path *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		p := path.Child("nodeAffinity")
		if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			rp := p.Child("requiredDuringSchedulingIgnoredDuringExecution")
			if len(r.NodeSelectorTerms) == 0 {
				errs = append(errs, field.Required(rp.Child("nodeSelectorTerms"), "must have at least one node selector term"))
			}
			for i, term := range r.NodeSelectorTerms {
				errs = append(errs, validateNodeSelectorTerm(term, true, rp.Child("nodeSelectorTerms").Index(i))...)
			}
		}
		for i, term := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			tp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, validateWeight(term.Weight, tp.Child("weight"))...)
			// Preferred terms may have values that are not label values.
			errs = append(errs, validateNodeSelectorTerm(term.Preference, false, tp.Child("preference"))...)
		}
	}
	for _, pa := range []struct {
		name string
		req  []v1.PodAffinityTerm
		pref []v1.WeightedPodAffinityTerm
	}{
		{"podAffinity", podAffinityRequired(a.PodAffinity), podAffinityPreferred(a.PodAffinity)},
		{"podAntiAffinity", podAntiAffinityRequired(a.PodAntiAffinity), podAntiAffinityPreferred(a.PodAntiAffinity)},
	} {
		p := path.Child(pa.name)
		for i, term := range pa.req {
			errs = append(errs, validatePodAffinityTerm(term, podLabels, p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
		}
		for i, term := range pa.pref {
			tp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, validateWeight(term.Weight, tp.Child("weight"))...)
			errs = append(errs, validatePodAffinityTerm(term.PodAffinityTerm, podLabels, tp.Child("podAffinityTerm"))...)
		}
	}
	return errs
}

func podAffinityRequired(a *v1.PodAffinity) []v1.PodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.RequiredDuringSchedulingIgnoredDuringExecution
}

func podAffinityPreferred(a *v1.PodAffinity) []v1.WeightedPodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.PreferredDuringSchedulingIgnoredDuringExecution
}

func podAntiAffinityRequired(a *v1.PodAntiAffinity) []v1.PodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.RequiredDuringSchedulingIgnoredDuringExecution
}

func podAntiAffinityPreferred(a *v1.PodAntiAffinity) []v1.WeightedPodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.PreferredDuringSchedulingIgnoredDuringExecution
}

func validateWeight(w int32, path *field.Path) field.ErrorList {
	if w < 1 || w > 100 {
		return field.ErrorList{field.Invalid(path, w, "must be in the range 1-100")}
	}
	return nil
}

// validateNodeSelectorTerm checks a node selector term; labelValues says
// whether the values of its expressions must be label values (they must
// in a required term).
func validateNodeSelectorTerm(t v1.NodeSelectorTerm, labelValues bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range t.MatchExpressions {
		p := path.Child("matchExpressions").Index(i)
		errs = append(errs, validateNodeSelectorRequirement(r, p)...)
		errs = append(errs, metavalidation.ValidateLabelName(r.Key, p.Child("key"))...)
		if !labelValues {
			continue
		}
		for j, v := range r.Values {
			if isLabelValue(v) {
				continue
			}
			for _, msg := range validation.IsValidLabelValue(v) {
				errs = append(errs, field.Invalid(p.Child("values").Index(j), v, msg))
			}
		}
	}
	for i, r := range t.MatchFields {
		p := path.Child("matchFields").Index(i)
		if r.Operator != v1.NodeSelectorOpIn && r.Operator != v1.NodeSelectorOpNotIn {
			errs = append(errs, field.Invalid(p.Child("operator"), r.Operator, "not a valid selector operator"))
		} else if len(r.Values) != 1 {
			errs = append(errs, field.Required(p.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
		if r.Key != metav1.ObjectNameField {
			errs = append(errs, field.Invalid(p.Child("key"), r.Key, "not a valid field selector key"))
			continue
		}
		for j, v := range r.Values {
			errs = append(errs, validateRequiredReference(v, p.Child("values").Index(j))...)
		}
	}
	return errs
}

// validateNodeSelectorRequirement checks an expression's operator and its
// values' count. The value of Gt and Lt need not be an integer: the API
// server accepts it, and the scheduler then matches no node with it.
func validateNodeSelectorRequirement(r v1.NodeSelectorRequirement, p *field.Path) field.ErrorList {
	switch r.Operator {
	case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			return field.ErrorList{field.Required(p.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'")}
		}
	case v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			return field.ErrorList{field.Forbidden(p.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")}
		}
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			return field.ErrorList{field.Required(p.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'")}
		}
	default:
		return field.ErrorList{field.Invalid(p.Child("operator"), r.Operator, "not a valid selector operator")}
	}
	return nil
}

// validatePodAffinityTerm checks a pod (anti-)affinity term of a pod whose
// labels are podLabels (nil for a template).
func validatePodAffinityTerm(t v1.PodAffinityTerm, podLabels map[string]string, path *field.Path) field.ErrorList {
	errs := metavalidation.ValidateLabelSelector(t.LabelSelector, selectorOK, path.Child("labelSelector"))
	errs = append(errs, metavalidation.ValidateLabelSelector(t.NamespaceSelector, selectorOK, path.Child("namespaceSelector"))...)
	for _, ns := range t.Namespaces {
		if isDNS1123Label(ns) {
			continue
		}
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(path.Child("namespace"), ns, msg))
		}
	}
	errs = append(errs, validateLabelKeys(path, t.MatchLabelKeys, t.MismatchLabelKeys, t.LabelSelector, podLabels)...)
	if t.TopologyKey == "" {
		errs = append(errs, field.Required(path.Child("topologyKey"), "can not be empty"))
	} else {
		errs = append(errs, metavalidation.ValidateLabelName(t.TopologyKey, path.Child("topologyKey"))...)
	}
	return errs
}

// validateLabelKeys checks the matchLabelKeys and mismatchLabelKeys of a
// pod affinity term or a topology spread constraint (path), as the API
// server does on create: label names, only beside a label selector, no key
// in both lists, and no key of matchLabelKeys that the label selector
// already has.
//
// That last check is made, as upstream makes it, on the selector after
// the API server has added to it, for every key of the lists that the pod
// has a label of (podLabels; nil for a template), the requirement
// "key In (value)" (NotIn for mismatchLabelKeys): a key of matchLabelKeys
// that the selector names as well is refused when the pod has that label.
// A requirement the selector already has exactly as it would be added is
// taken as added by the API server that stored the pod, and not added
// again: a pod read back from a cluster is valid as it is.
func validateLabelKeys(path *field.Path, match, mismatch []string, sel *metav1.LabelSelector, podLabels map[string]string) field.ErrorList {
	if len(match) == 0 && len(mismatch) == 0 {
		return nil
	}
	var errs field.ErrorList
	for _, keys := range []struct {
		name string
		keys []string
	}{{"matchLabelKeys", match}, {"mismatchLabelKeys", mismatch}} {
		if len(keys.keys) == 0 {
			continue
		}
		if sel == nil {
			errs = append(errs, field.Forbidden(path.Child(keys.name), "must not be specified when labelSelector is not set"))
			continue
		}
		for i, k := range keys.keys {
			errs = append(errs, metavalidation.ValidateLabelName(k, path.Child(keys.name).Index(i))...)
		}
	}
	if sel != nil && len(match) > 0 {
		index := make(map[string]int, len(match))
		for i, k := range match {
			index[k] = i
		}
		seen := sets.New[string]()
		for k := range sel.MatchLabels {
			seen.Insert(k)
		}
		check := func(key string) {
			if i, ok := index[key]; ok && seen.Has(key) {
				errs = append(errs, field.Invalid(path.Index(i), key, "exists in both matchLabelKeys and labelSelector"))
			}
			seen.Insert(key)
		}
		for _, r := range sel.MatchExpressions {
			check(r.Key)
		}
		for _, added := range []struct {
			keys []string
			op   metav1.LabelSelectorOperator
		}{{match, metav1.LabelSelectorOpIn}, {mismatch, metav1.LabelSelectorOpNotIn}} {
			for _, k := range added.keys {
				if v, ok := podLabels[k]; ok && !hasRequirement(sel, k, added.op, v) {
					check(k)
				}
			}
		}
	}
	mismatchSet := sets.New(mismatch...)
	for i, k := range match {
		if mismatchSet.Has(k) {
			errs = append(errs, field.Invalid(path.Child("matchLabelKeys").Index(i), k, "exists in both matchLabelKeys and mismatchLabelKeys"))
		}
	}
	return errs
}

// hasRequirement reports whether sel has the requirement "key op (value)".
func hasRequirement(sel *metav1.LabelSelector, key string, op metav1.LabelSelectorOperator, value string) bool {
	for _, r := range sel.MatchExpressions {
		if r.Key == key && r.Operator == op && len(r.Values) == 1 && r.Values[0] == value {
			return true
		}
	}
	return false
}

// validateSpread checks the topology spread constraints of a pod whose
// labels are podLabels (nil for a template). The topology key need only
// be set: the API server does not check it is a label key.
func validateSpread(cs []v1.TopologySpreadConstraint, podLabels map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, c := range cs {
		p := path.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		}
		errs = append(errs, enum(p.Child("whenUnsatisfiable"), string(c.WhenUnsatisfiable), false, string(v1.DoNotSchedule), string(v1.ScheduleAnyway))...)
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				errs = append(errs, field.Invalid(p.Child("minDomains"), *c.MinDomains, "must be greater than 0"))
			} else if c.WhenUnsatisfiable != v1.DoNotSchedule {
				errs = append(errs, field.Invalid(p.Child("minDomains"), *c.MinDomains, "can only use minDomains if whenUnsatisfiable=DoNotSchedule"))
			}
		}
		for _, pol := range []struct {
			name string
			v    *v1.NodeInclusionPolicy
		}{{"nodeAffinityPolicy", c.NodeAffinityPolicy}, {"nodeTaintsPolicy", c.NodeTaintsPolicy}} {
			if pol.v != nil {
				errs = append(errs, enum(p.Child(pol.name), string(*pol.v), false, string(v1.NodeInclusionPolicyHonor), string(v1.NodeInclusionPolicyIgnore))...)
			}
		}
		// MatchLabelKeysInPodTopologySpreadSelectorMerge (beta, on): as for
		// pod affinity, on the selector the API server merges them into.
		errs = append(errs, validateLabelKeys(p, c.MatchLabelKeys, nil, c.LabelSelector, podLabels)...)
		errs = append(errs, metavalidation.ValidateLabelSelector(c.LabelSelector, selectorOK, p.Child("labelSelector"))...)
		key := c.TopologyKey + "\x00" + string(c.WhenUnsatisfiable)
		if seen.Has(key) {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
		}
		seen.Insert(key)
	}
	return errs
}
