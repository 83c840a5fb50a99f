package admission

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
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

// ValidatePod returns what the API server would refuse in a pod on create
// (ValidatePodCreate), for the fields reprieve reads: names, resource names
// and quantities (non-negative, and small enough for the scheduler's 64-bit
// arithmetic, also summed over the pod), requests within limits,
// hugepages, pod-level resources and their consistency with the
// containers', overhead, enum values, container restart policies,
// duplicate container names and host ports, volumes and resource claims,
// scheduling gates, selectors, tolerations, affinity and topology spread
// constraints. test/conformance's TestAdmissionMatchesAPIServer holds it
// to the API server's own defaulting and validation.
func ValidatePod(p *v1.Pod) field.ErrorList {
	errs := validateObjectMeta(&p.ObjectMeta, true)
	errs = append(errs, validatePodSpec(&p.Spec, &p.ObjectMeta, spec)...)
	errs = append(errs, validateGatedNodeName(&p.Spec)...)
	errs = append(errs, validatePodStatusResources(&p.Status)...)
	if len(errs) == 0 {
		errs = validatePodSums(p)
	}
	return errs
}

// validatePodSums refuses a pod whose requests, summed as the scheduler
// sums them, do not fit its 64-bit arithmetic.
func validatePodSums(p *v1.Pod) field.ErrorList {
	if _, small := RequestsBound(p); small {
		return nil
	}
	// The scheduler sums the containers, counting 100m and 200Mi for a
	// container without a CPU or memory request when it scores, and the
	// resources a resize allocated: every such sum must fit too.
	sum := spec.Child("containers").Key("*").Child("resources", "requests")
	for _, opts := range []resourcehelper.PodResourcesOptions{
		{},
		{UseStatusResources: true, InPlacePodLevelResourcesVerticalScalingEnabled: true},
		{UseStatusResources: true, InPlacePodLevelResourcesVerticalScalingEnabled: true, NonMissingContainerRequests: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("200Mi")}},
	} {
		if errs := validateResourceList(resourcehelper.PodRequests(p, opts), sum, false); len(errs) > 0 {
			return errs
		}
	}
	return nil
}

// validatePodStatusResources checks the resources a kubelet reported (a
// snapshot's bound pods), which the scheduler counts for assigned pods.
func validatePodStatusResources(st *v1.PodStatus) field.ErrorList {
	if statusResourcesValid(st) {
		return nil // without making the paths
	}
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

// statusResourcesValid reports whether validatePodStatusResources finds
// nothing wrong.
func statusResourcesValid(st *v1.PodStatus) bool {
	for _, cs := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for _, c := range cs {
			if !resourcesValid(c.AllocatedResources) || c.Resources != nil && (!resourcesValid(c.Resources.Requests) || !resourcesValid(c.Resources.Limits)) {
				return false
			}
		}
	}
	return st.Resources == nil || resourcesValid(st.Resources.Requests)
}

// resourcesValid reports whether validateResourceList(rl, path, false)
// finds nothing wrong.
func resourcesValid(rl v1.ResourceList) bool {
	for name, q := range rl {
		if len(ValidateQuantity(name, q, nil)) > 0 {
			return false
		}
	}
	return true
}

// ValidatePodTemplate validates a controller's pod template: its labels
// and its spec.
func ValidatePodTemplate(t *v1.PodTemplateSpec, path *field.Path) field.ErrorList {
	errs := metavalidation.ValidateLabels(t.Labels, path.Child("metadata", "labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(t.Annotations, path.Child("metadata", "annotations"))...)
	return append(errs, validatePodSpec(&t.Spec, nil, path.Child("spec"))...)
}

// validatePodSpec checks a pod's spec (meta is the pod's metadata) or a
// template's (meta nil): what changes scheduling of ValidatePodSpec's
// checks. Left out are fields the scheduler does not read (images, probes,
// lifecycle, security contexts, environment, volume mounts, DNS): a pod
// that errs only there is accepted.
func validatePodSpec(s *v1.PodSpec, meta *metav1.ObjectMeta, path *field.Path) field.ErrorList {
	podName, podLabels, annotations := "", map[string]string(nil), map[string]string(nil)
	if meta != nil {
		podName, podLabels, annotations = meta.Name, meta.Labels, meta.Annotations
	}
	errs := validateVolumes(s.Volumes, podName, path)
	errs = append(errs, validatePodClaims(s.ResourceClaims, annotations, path.Child("resourceClaims"))...)
	claims := podClaimNames(s.ResourceClaims)
	errs = append(errs, validateContainers(s, claims, meta != nil, path)...)
	var names sets.Set[string]
	if len(s.EphemeralContainers) > 0 {
		names = sets.New[string]()
		for i := range s.InitContainers {
			names.Insert(s.InitContainers[i].Name)
		}
		for i := range s.Containers {
			names.Insert(s.Containers[i].Name)
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
	errs = append(errs, validatePodLevelResources(s, path)...)
	errs = append(errs, enum(path.Child("restartPolicy"), string(s.RestartPolicy), true, "Always", "OnFailure", "Never")...)
	if s.PreemptionPolicy != nil {
		errs = append(errs, enum(path.Child("preemptionPolicy"), string(*s.PreemptionPolicy), false, string(v1.PreemptLowerPriority), string(v1.PreemptNever))...)
	}
	if s.TerminationGracePeriodSeconds != nil && *s.TerminationGracePeriodSeconds < 0 {
		errs = append(errs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *s.TerminationGracePeriodSeconds, "must be greater than or equal to 0"))
	}
	errs = append(errs, metavalidation.ValidateLabels(s.NodeSelector, path.Child("nodeSelector"))...)
	errs = append(errs, validateReference(s.NodeName, path.Child("nodeName"))...)
	errs = append(errs, validateReference(s.PriorityClassName, path.Child("priorityClassName"))...)
	errs = append(errs, validateTolerations(s.Tolerations, path.Child("tolerations"))...)
	errs = append(errs, validateAffinity(s.Affinity, podLabels, path.Child("affinity"))...)
	errs = append(errs, validateSpread(s.TopologySpreadConstraints, podLabels, path.Child("topologySpreadConstraints"))...)
	errs = append(errs, validateSchedulingGates(s.SchedulingGates, path.Child("schedulingGates"))...)
	errs = append(errs, validateOverhead(s.Overhead, path)...)
	if sg := s.SchedulingGroup; sg != nil {
		if sg.PodGroupName == nil || *sg.PodGroupName == "" {
			errs = append(errs, field.Required(path.Child("schedulingGroup", "podGroupName"), "missing"))
		} else {
			errs = append(errs, validateRequiredReference(*sg.PodGroupName, path.Child("schedulingGroup", "podGroupName"))...)
		}
	}
	return errs
}

// validateGatedNodeName refuses a pod bound to a node while it still has
// scheduling gates.
func validateGatedNodeName(s *v1.PodSpec) field.ErrorList {
	if s.NodeName != "" && len(s.SchedulingGates) > 0 {
		return field.ErrorList{field.Forbidden(spec.Child("nodeName"), "cannot be set until all schedulingGates have been cleared")}
	}
	return nil
}

// validateSchedulingGates checks spec.schedulingGates: qualified names,
// none twice.
func validateSchedulingGates(gates []v1.PodSchedulingGate, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, g := range gates {
		if !isLabelKey(g.Name, false) {
			for _, msg := range validation.IsQualifiedName(g.Name) {
				errs = append(errs, field.Invalid(path.Index(i), g.Name, msg))
			}
		}
		if seen.Has(g.Name) {
			errs = append(errs, field.Duplicate(path.Index(i), g.Name))
		}
		seen.Insert(g.Name)
	}
	return errs
}

// validateReference checks the name of another object (a node, a
// priority class) at path, which may be empty: a DNS subdomain.
func validateReference(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range nameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(path, name, msg))
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

// validateResourceList checks resource names and quantities.
func validateResourceList(rl v1.ResourceList, path *field.Path, names bool) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedNames(rl) {
		q := rl[name]
		p := path.Key(string(name))
		if names && !isLabelKey(string(name), false) {
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
	// Far below the bound (about 9.2e18), rounding up cannot cross it:
	// no need for the exact arithmetic.
	if f := q.AsApproximateFloat64() * math.Pow10(-int(scale)); f < 1e18 {
		return true
	}
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
