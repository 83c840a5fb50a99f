package admission

import (
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
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
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
			}
		case v1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, []string{string(v1.TolerationOpEqual), string(v1.TolerationOpExists)}))
		}
		errs = append(errs, enum(p.Child("effect"), string(t.Effect), true, string(v1.TaintEffectNoSchedule), string(v1.TaintEffectPreferNoSchedule), string(v1.TaintEffectNoExecute))...)
	}
	return errs
}

func validateAffinity(a *v1.Affinity, path *field.Path) field.ErrorList {
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
				errs = append(errs, validateNodeSelectorTerm(term, rp.Child("nodeSelectorTerms").Index(i))...)
			}
		}
		for i, term := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			tp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, validateWeight(term.Weight, tp.Child("weight"))...)
			errs = append(errs, validateNodeSelectorTerm(term.Preference, tp.Child("preference"))...)
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
			errs = append(errs, validatePodAffinityTerm(term, p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
		}
		for i, term := range pa.pref {
			tp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, validateWeight(term.Weight, tp.Child("weight"))...)
			errs = append(errs, validatePodAffinityTerm(term.PodAffinityTerm, tp.Child("podAffinityTerm"))...)
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

func validateNodeSelectorTerm(t v1.NodeSelectorTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range t.MatchExpressions {
		p := path.Child("matchExpressions").Index(i)
		errs = append(errs, metavalidation.ValidateLabelName(r.Key, p.Child("key"))...)
		errs = append(errs, validateNodeSelectorRequirement(r, p)...)
	}
	for i, r := range t.MatchFields {
		p := path.Child("matchFields").Index(i)
		if r.Key != "metadata.name" {
			errs = append(errs, field.NotSupported(p.Child("key"), r.Key, []string{"metadata.name"}))
		}
		if r.Operator != v1.NodeSelectorOpIn && r.Operator != v1.NodeSelectorOpNotIn {
			errs = append(errs, field.NotSupported(p.Child("operator"), r.Operator, []string{"In", "NotIn"}))
		} else if len(r.Values) != 1 {
			errs = append(errs, field.Required(p.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
	}
	return errs
}

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
		if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
			return field.ErrorList{field.Invalid(p.Child("values").Index(0), r.Values[0], "must be an integer")}
		}
	default:
		return field.ErrorList{field.NotSupported(p.Child("operator"), r.Operator, []string{"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})}
	}
	return nil
}

func validatePodAffinityTerm(t v1.PodAffinityTerm, path *field.Path) field.ErrorList {
	errs := metavalidation.ValidateLabelSelector(t.LabelSelector, selectorOK, path.Child("labelSelector"))
	errs = append(errs, metavalidation.ValidateLabelSelector(t.NamespaceSelector, selectorOK, path.Child("namespaceSelector"))...)
	for i, ns := range t.Namespaces {
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(path.Child("namespaces").Index(i), ns, msg))
		}
	}
	if t.TopologyKey == "" {
		errs = append(errs, field.Required(path.Child("topologyKey"), "can not be empty"))
	} else {
		errs = append(errs, metavalidation.ValidateLabelName(t.TopologyKey, path.Child("topologyKey"))...)
	}
	return errs
}

func validateSpread(cs []v1.TopologySpreadConstraint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, c := range cs {
		p := path.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, metavalidation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
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
		errs = append(errs, metavalidation.ValidateLabelSelector(c.LabelSelector, selectorOK, p.Child("labelSelector"))...)
		key := c.TopologyKey + "\x00" + string(c.WhenUnsatisfiable)
		if seen.Has(key) {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
		}
		seen.Insert(key)
	}
	return errs
}
