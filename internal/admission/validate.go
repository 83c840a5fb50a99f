package admission

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Priority limits of the scheduling API.
const (
	// HighestUserDefinablePriority is the largest value a PriorityClass not
	// named system-* may have.
	HighestUserDefinablePriority = 1_000_000_000
	systemPrefix                 = "system-"
)

// systemClasses are the built-in PriorityClasses and their values.
var systemClasses = map[string]int32{"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}

var (
	metadata   = field.NewPath("metadata")
	spec       = field.NewPath("spec")
	maxMilli   = big.NewInt(0).SetUint64(1<<63 - 1)
	selectorOK = metavalidation.LabelSelectorValidationOptions{}
)

// ValidatePod returns what the API server would refuse in a pod, for the
// fields reprieve reads: names, quantities (non-negative, and small enough
// for the scheduler's 64-bit arithmetic, also summed over the pod),
// requests within limits, enum values, duplicate container names,
// selectors, tolerations, affinity and topology spread constraints.
func ValidatePod(p *v1.Pod) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&p.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metadata)
	errs = append(errs, validatePodSpec(&p.Spec, spec)...)
	errs = append(errs, validatePodStatusResources(&p.Status)...)
	if _, small := RequestsBound(p); len(errs) == 0 && !small {
		// The scheduler sums the containers, counting 100m and 200Mi for
		// a container without a CPU or memory request when it scores, and
		// the resources a resize allocated: every such sum must fit too.
		sum := spec.Child("containers").Key("*").Child("resources", "requests")
		for _, opts := range []resourcehelper.PodResourcesOptions{
			{},
			{UseStatusResources: true, InPlacePodLevelResourcesVerticalScalingEnabled: true},
			{UseStatusResources: true, InPlacePodLevelResourcesVerticalScalingEnabled: true, NonMissingContainerRequests: v1.ResourceList{
				v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("200Mi")}},
		} {
			if errs = validateResourceList(resourcehelper.PodRequests(p, opts), sum, false); len(errs) > 0 {
				return errs
			}
		}
	}
	return errs
}

// validatePodStatusResources checks the resources a kubelet reported (a
// snapshot's bound pods), which the scheduler counts for assigned pods.
func validatePodStatusResources(st *v1.PodStatus) field.ErrorList {
	var errs field.ErrorList
	status := field.NewPath("status")
	for _, list := range []struct {
		name string
		cs   []v1.ContainerStatus
	}{{"initContainerStatuses", st.InitContainerStatuses}, {"containerStatuses", st.ContainerStatuses}} {
		for i, c := range list.cs {
			p := status.Child(list.name).Index(i)
			errs = append(errs, validateResourceList(c.AllocatedResources, p.Child("allocatedResources"), false)...)
			if c.Resources != nil {
				errs = append(errs, validateResourceList(c.Resources.Requests, p.Child("resources", "requests"), false)...)
				errs = append(errs, validateResourceList(c.Resources.Limits, p.Child("resources", "limits"), false)...)
			}
		}
	}
	if st.Resources != nil {
		errs = append(errs, validateResourceList(st.Resources.Requests, status.Child("resources", "requests"), false)...)
	}
	return errs
}

// ValidatePodTemplate validates a controller's pod template: its labels
// and its spec.
func ValidatePodTemplate(t *v1.PodTemplateSpec, path *field.Path) field.ErrorList {
	errs := metavalidation.ValidateLabels(t.Labels, path.Child("metadata", "labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(t.Annotations, path.Child("metadata", "annotations"))...)
	return append(errs, validatePodSpec(&t.Spec, path.Child("spec"))...)
}

func validatePodSpec(s *v1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.Containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), "a pod needs at least one container"))
	}
	names := sets.New[string]()
	for _, list := range []struct {
		name string
		cs   []v1.Container
	}{{"initContainers", s.InitContainers}, {"containers", s.Containers}} {
		for i := range list.cs {
			errs = append(errs, validateContainer(&list.cs[i], names, path.Child(list.name).Index(i))...)
		}
	}
	for i := range s.EphemeralContainers {
		c := (*v1.Container)(&s.EphemeralContainers[i].EphemeralContainerCommon)
		p := path.Child("ephemeralContainers").Index(i)
		if errs2 := validateName(c.Name, p.Child("name")); len(errs2) > 0 {
			errs = append(errs, errs2...)
		} else if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		}
		names.Insert(c.Name)
	}
	errs = append(errs, enum(path.Child("restartPolicy"), string(s.RestartPolicy), true, "Always", "OnFailure", "Never")...)
	if s.PreemptionPolicy != nil {
		errs = append(errs, enum(path.Child("preemptionPolicy"), string(*s.PreemptionPolicy), false, string(v1.PreemptLowerPriority), string(v1.PreemptNever))...)
	}
	if s.TerminationGracePeriodSeconds != nil && *s.TerminationGracePeriodSeconds < 0 {
		errs = append(errs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *s.TerminationGracePeriodSeconds, "must be greater than or equal to 0"))
	}
	errs = append(errs, metavalidation.ValidateLabels(s.NodeSelector, path.Child("nodeSelector"))...)
	if s.NodeName != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(s.NodeName, false) {
			errs = append(errs, field.Invalid(path.Child("nodeName"), s.NodeName, msg))
		}
	}
	if s.PriorityClassName != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(s.PriorityClassName, false) {
			errs = append(errs, field.Invalid(path.Child("priorityClassName"), s.PriorityClassName, msg))
		}
	}
	errs = append(errs, validateTolerations(s.Tolerations, path.Child("tolerations"))...)
	errs = append(errs, validateAffinity(s.Affinity, path.Child("affinity"))...)
	errs = append(errs, validateSpread(s.TopologySpreadConstraints, path.Child("topologySpreadConstraints"))...)
	errs = append(errs, validateResourceList(s.Overhead, path.Child("overhead"), false)...)
	if s.Resources != nil {
		errs = append(errs, validateRequirements(s.Resources, path.Child("resources"), true)...)
	}
	if sg := s.SchedulingGroup; sg != nil && (sg.PodGroupName == nil || *sg.PodGroupName == "") {
		errs = append(errs, field.Required(path.Child("schedulingGroup", "podGroupName"), "missing"))
	}
	return errs
}

func validateName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "missing")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

func validateContainer(c *v1.Container, names sets.Set[string], path *field.Path) field.ErrorList {
	errs := validateName(c.Name, path.Child("name"))
	if len(errs) == 0 && names.Has(c.Name) {
		errs = append(errs, field.Duplicate(path.Child("name"), c.Name))
	}
	names.Insert(c.Name)
	errs = append(errs, validateRequirements(&c.Resources, path.Child("resources"), false)...)
	for i, port := range c.Ports {
		pp := path.Child("ports").Index(i)
		if port.ContainerPort < 1 || port.ContainerPort > 65535 {
			errs = append(errs, field.Invalid(pp.Child("containerPort"), port.ContainerPort, "must be between 1 and 65535, inclusive"))
		}
		if port.HostPort < 0 || port.HostPort > 65535 {
			errs = append(errs, field.Invalid(pp.Child("hostPort"), port.HostPort, "must be between 0 and 65535, inclusive"))
		}
		errs = append(errs, enum(pp.Child("protocol"), string(port.Protocol), true, "TCP", "UDP", "SCTP")...)
	}
	return errs
}

// validateRequirements checks requests and limits, and that a request is
// within its limit (equal to it for resources that cannot be overcommitted).
func validateRequirements(r *v1.ResourceRequirements, path *field.Path, podLevel bool) field.ErrorList {
	errs := validateResourceList(r.Limits, path.Child("limits"), true)
	errs = append(errs, validateResourceList(r.Requests, path.Child("requests"), true)...)
	if len(errs) > 0 {
		return errs
	}
	for _, name := range sortedNames(r.Requests) {
		req := r.Requests[name]
		lim, hasLimit := r.Limits[name]
		switch {
		case hasLimit && !overcommitAllowed(name) && !podLevel && req.Cmp(lim) != 0:
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), req.String(), fmt.Sprintf("must be equal to %s limit of %s", name, lim.String())))
		case hasLimit && req.Cmp(lim) > 0:
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), req.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
		case !hasLimit && !podLevel && isExtended(name):
			errs = append(errs, field.Required(path.Child("limits").Key(string(name)), "Limit must be set for non overcommitable resources"))
		}
	}
	return errs
}

// validateResourceList checks resource names and quantities.
func validateResourceList(rl v1.ResourceList, path *field.Path, names bool) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedNames(rl) {
		q := rl[name]
		p := path.Key(string(name))
		if names {
			for _, msg := range validation.IsQualifiedName(string(name)) {
				errs = append(errs, field.Invalid(p, string(name), msg))
			}
		}
		errs = append(errs, ValidateQuantity(name, q, p)...)
	}
	return errs
}

// ValidateQuantity refuses a negative quantity, a fractional amount of a
// resource counted in whole units, and a quantity the scheduler cannot
// count in 64 bits (CPU in millicores, the rest in units): "1e20" CPU or
// "1e30" bytes would otherwise wrap around and fit anywhere.
func ValidateQuantity(name v1.ResourceName, q resource.Quantity, path *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must be greater than or equal to 0")}
	}
	scale := resource.Scale(0)
	unit := ""
	if name == v1.ResourceCPU {
		scale, unit = resource.Milli, "m"
	}
	if !representable(q, scale) {
		return field.ErrorList{field.Invalid(path, q.String(), fmt.Sprintf("must be at most %d%s: larger amounts overflow the scheduler's arithmetic", int64(1<<63-1), unit))}
	}
	if isInteger(name) && q.MilliValue()%1000 != 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must be an integer")}
	}
	return nil
}

// representable reports whether q, rounded up to the given scale, fits an
// int64 (what Quantity.ScaledValue returns without wrapping around).
func representable(q resource.Quantity, scale resource.Scale) bool {
	d := q.AsDec()
	unscaled, exp := d.UnscaledBig(), -int(d.Scale())+int(-scale)
	if unscaled.Sign() == 0 {
		return true
	}
	digits := len(unscaled.String())
	switch {
	case digits+exp > 19:
		return false
	case digits+exp < -2:
		return true // rounds up to 1
	}
	v := new(big.Int).Set(unscaled)
	if exp >= 0 {
		v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil))
	} else {
		div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-exp)), nil)
		var rem big.Int
		v.QuoRem(v, div, &rem)
		if rem.Sign() != 0 {
			v.Add(v, big.NewInt(1))
		}
	}
	return v.Cmp(maxMilli) <= 0
}

func isNative(name v1.ResourceName) bool {
	s := string(name)
	return !strings.Contains(s, "/") || strings.Contains(s, v1.ResourceDefaultNamespacePrefix)
}

func isExtended(name v1.ResourceName) bool {
	if isNative(name) || strings.HasPrefix(string(name), v1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(v1.DefaultResourceRequestsPrefix+string(name))) == 0
}

func isInteger(name v1.ResourceName) bool {
	return name == v1.ResourcePods || isExtended(name)
}

func sortedNames(rl v1.ResourceList) []v1.ResourceName {
	out := make([]v1.ResourceName, 0, len(rl))
	for name := range rl {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// enum refuses a value outside the allowed ones ("" too unless emptyOK).
func enum(path *field.Path, value string, emptyOK bool, allowed ...string) field.ErrorList {
	if value == "" && emptyOK {
		return nil
	}
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(path, value, allowed)}
}

func validateTolerations(ts []v1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		p := path.Index(i)
		if t.Key != "" {
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

// ValidateNode checks a node's name, taints and resources (capacity and
// allocatable non-negative and representable).
func ValidateNode(n *v1.Node) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&n.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, metadata)
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
	errs := apivalidation.ValidateObjectMeta(&pc.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, metadata)
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
	errs := apivalidation.ValidateObjectMeta(&pdb.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metadata)
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
	errs := apivalidation.ValidateObjectMeta(&d.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metadata)
	return append(errs, validateReplicated(d.Spec.Replicas, d.Spec.Selector, &d.Spec.Template)...)
}

// ValidateReplicaSet is ValidateDeployment for a ReplicaSet.
func ValidateReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&rs.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metadata)
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
	errs := apivalidation.ValidateObjectMeta(&j.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metadata)
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
	return apivalidation.ValidateObjectMeta(&pg.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metadata)
}

// ValidateCompositePodGroup checks a CompositePodGroup's name.
func ValidateCompositePodGroup(cpg *schedulingv1alpha3.CompositePodGroup) field.ErrorList {
	return apivalidation.ValidateObjectMeta(&cpg.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metadata)
}
