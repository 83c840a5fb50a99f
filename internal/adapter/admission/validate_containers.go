package admission

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Values a container's restartPolicy may take (init containers too: with
// the ContainerRestartRules gate, on by default since 1.35, an init
// container may be Never or OnFailure as well as Always, a sidecar).
var containerRestartPolicies = []string{string(v1.ContainerRestartPolicyAlways), string(v1.ContainerRestartPolicyNever), string(v1.ContainerRestartPolicyOnFailure)}

// validateContainers checks the init and regular containers as
// ValidatePodSpec does: names unique across both lists, each container's
// fields, host ports unique among the regular containers and within each
// init container (init containers run one at a time), and under host
// networking a host port equal to its container port (for a pod; a
// template may leave it 0, to be defaulted). claims are the names of the
// pod's resource claims.
func validateContainers(s *v1.PodSpec, claims sets.Set[string], isPod bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.Containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), "a pod needs at least one container"))
	}
	names := sets.New[string]()
	for i := range s.InitContainers {
		c := &s.InitContainers[i]
		p := path.Child("initContainers").Index(i)
		errs = append(errs, validateContainer(c, names, claims, p)...)
		errs = append(errs, hostPortConflicts(s.InitContainers[i:i+1], i, path, "initContainers")...)
	}
	for i := range s.Containers {
		c := &s.Containers[i]
		p := path.Child("containers").Index(i)
		errs = append(errs, validateContainer(c, names, claims, p)...)
		if s.HostNetwork {
			for j, port := range c.Ports {
				if (isPod || port.HostPort != 0) && port.HostPort != port.ContainerPort {
					errs = append(errs, field.Invalid(p.Child("ports").Index(j).Child("hostPort"), port.HostPort, "must match `containerPort` when `hostNetwork` is true"))
				}
			}
		}
	}
	return append(errs, hostPortConflicts(s.Containers, 0, path, "containers")...)
}

// hostPortConflicts refuses a host port used twice (same protocol, host IP
// and port) among cs, the containers of the list path.list from index
// first.
func hostPortConflicts(cs []v1.Container, first int, path *field.Path, list string) field.ErrorList {
	var errs field.ErrorList
	var seen sets.Set[string]
	for i := range cs {
		for j, port := range cs[i].Ports {
			if port.HostPort == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", port.Protocol, port.HostIP, port.HostPort)
			if seen.Has(key) {
				errs = append(errs, field.Duplicate(path.Child(list).Index(first+i).Child("ports").Index(j).Child("hostPort"), key))
				continue
			}
			if seen == nil {
				seen = sets.New[string]()
			}
			seen.Insert(key)
		}
	}
	return errs
}

func validateContainer(c *v1.Container, names sets.Set[string], claims sets.Set[string], path *field.Path) field.ErrorList {
	errs := validateName(c.Name, path.Child("name"))
	if len(errs) == 0 && names.Has(c.Name) {
		errs = append(errs, field.Duplicate(path.Child("name"), c.Name))
	}
	names.Insert(c.Name)
	errs = append(errs, validateResources(&c.Resources, containerResources, claims, path.Child("resources"))...)
	errs = append(errs, validatePorts(c.Ports, path)...)
	return append(errs, validateContainerRestartPolicy(c, path)...)
}

func validatePorts(ports []v1.ContainerPort, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	var names sets.Set[string]
	for i, port := range ports {
		pp := path.Child("ports").Index(i)
		if port.Name != "" {
			if msgs := validation.IsValidPortName(port.Name); len(msgs) > 0 {
				for _, msg := range msgs {
					errs = append(errs, field.Invalid(pp.Child("name"), port.Name, msg))
				}
			} else if names.Has(port.Name) {
				errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
			} else {
				if names == nil {
					names = sets.New[string]()
				}
				names.Insert(port.Name)
			}
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(pp.Child("containerPort"), ""))
		} else if port.ContainerPort < 1 || port.ContainerPort > 65535 {
			errs = append(errs, field.Invalid(pp.Child("containerPort"), port.ContainerPort, validation.InclusiveRangeError(1, 65535)))
		}
		if port.HostPort < 0 || port.HostPort > 65535 {
			errs = append(errs, field.Invalid(pp.Child("hostPort"), port.HostPort, validation.InclusiveRangeError(1, 65535)))
		}
		errs = append(errs, enum(pp.Child("protocol"), string(port.Protocol), true, "SCTP", "TCP", "UDP")...)
	}
	return errs
}

// validateContainerRestartPolicy checks a container's restartPolicy and
// restartPolicyRules, as ValidatePodSpec does with the ContainerRestartRules
// and RestartAllContainersOnContainerExits gates on (their defaults).
func validateContainerRestartPolicy(c *v1.Container, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case c.RestartPolicy == nil && len(c.RestartPolicyRules) == 0:
		return nil
	case c.RestartPolicy == nil:
		errs = append(errs, field.Required(path.Child("restartPolicy"), "must specify restartPolicy when restart rules are used"))
	default:
		errs = append(errs, enum(path.Child("restartPolicy"), string(*c.RestartPolicy), false, containerRestartPolicies...)...)
	}
	if n := len(c.RestartPolicyRules); n > 20 {
		errs = append(errs, field.TooMany(path.Child("restartPolicyRules"), n, 20))
	}
	for i, rule := range c.RestartPolicyRules {
		p := path.Child("restartPolicyRules").Index(i)
		errs = append(errs, enum(p.Child("action"), string(rule.Action), false, string(v1.ContainerRestartRuleActionRestart), string(v1.ContainerRestartRuleActionRestartAllContainers))...)
		if rule.ExitCodes == nil {
			errs = append(errs, field.Required(p.Child("exitCodes"), "must be specified"))
			continue
		}
		errs = append(errs, enum(p.Child("exitCodes", "operator"), string(rule.ExitCodes.Operator), false, string(v1.ContainerRestartRuleOnExitCodesOpIn), string(v1.ContainerRestartRuleOnExitCodesOpNotIn))...)
		if n := len(rule.ExitCodes.Values); n > 255 {
			errs = append(errs, field.TooMany(p.Child("exitCodes", "values"), n, 255))
		}
	}
	return errs
}

// resourceKind says which resource names a ResourceRequirements may hold.
type resourceKind int

const (
	// containerResources are a container's (and the pod overhead's):
	// cpu, memory, ephemeral-storage, hugepages-<size>, and extended
	// resources (qualified names outside kubernetes.io).
	containerResources resourceKind = iota + 1
	// podResources are pod-level resources: cpu, memory, hugepages-<size>.
	podResources
)

// validateResources checks requests and limits as the API server does:
// resource names, quantities (also representable, see ValidateQuantity),
// hugepages in whole pages and only beside cpu or memory, each request
// within its limit and equal to it for a resource that cannot be
// overcommitted (hugepages, extended resources), which must have a limit;
// and that every claim names one of claims, the pod's resource claims.
func validateResources(r *v1.ResourceRequirements, kind resourceKind, claims sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	cpuOrMemory, hugePages := false, false
	for _, name := range sortedNames(r.Limits) {
		p := path.Child("limits").Key(string(name))
		errs = append(errs, validateResourceName(name, kind, p)...)
		errs = append(errs, validateRequirement(name, r.Limits[name], p)...)
		cpuOrMemory = cpuOrMemory || name == v1.ResourceCPU || name == v1.ResourceMemory
		hugePages = hugePages || isHugePage(name)
	}
	for _, name := range sortedNames(r.Requests) {
		p := path.Child("requests").Key(string(name))
		req := r.Requests[name]
		errs = append(errs, validateResourceName(name, kind, p)...)
		errs = append(errs, validateRequirement(name, req, p)...)
		lim, hasLimit := r.Limits[name]
		switch {
		case hasLimit && !overcommitAllowed(name) && req.Cmp(lim) != 0:
			errs = append(errs, field.Invalid(path.Child("requests"), req.String(), fmt.Sprintf("must be equal to %s limit of %s", name, lim.String())))
		case hasLimit && req.Cmp(lim) > 0:
			errs = append(errs, field.Invalid(path.Child("requests"), req.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
		case !hasLimit && !overcommitAllowed(name):
			errs = append(errs, field.Required(path.Child("limits"), "Limit must be set for non overcommitable resources"))
		}
		cpuOrMemory = cpuOrMemory || name == v1.ResourceCPU || name == v1.ResourceMemory
		hugePages = hugePages || isHugePage(name)
	}
	if hugePages && !cpuOrMemory {
		errs = append(errs, field.Forbidden(path, "HugePages require cpu or memory"))
	}
	return append(errs, validateClaimReferences(r.Claims, claims, path.Child("claims"))...)
}

// validateRequirement checks one quantity of a request or limit: that
// ValidateQuantity accepts it and, for hugepages, that it is a whole
// number of pages.
func validateRequirement(name v1.ResourceName, q resource.Quantity, path *field.Path) field.ErrorList {
	errs := ValidateQuantity(name, q, path)
	if isHugePage(name) && !hugePagesDivisible(name, q) {
		errs = append(errs, field.Invalid(path, q.String(), fmt.Sprintf("%s is not positive integer multiple of %s", q.String(), name)))
	}
	return errs
}

// hugePagesDivisible reports whether q is a whole number of the pages
// name (hugepages-<size>) counts; false when the size is not a positive
// whole number of bytes.
func hugePagesDivisible(name v1.ResourceName, q resource.Quantity) bool {
	size, err := resource.ParseQuantity(strings.TrimPrefix(string(name), v1.ResourceHugePagesPrefix))
	if err != nil || size.Sign() <= 0 || size.MilliValue()%1000 != 0 {
		return false
	}
	return q.Value()%size.Value() == 0
}

// standardResources are the unqualified resource names the API server
// knows (helper.IsStandardResourceName, hugepages aside).
var standardResources = sets.New[v1.ResourceName](
	v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage,
	v1.ResourceRequestsCPU, v1.ResourceRequestsMemory, v1.ResourceRequestsEphemeralStorage,
	v1.ResourceLimitsCPU, v1.ResourceLimitsMemory, v1.ResourceLimitsEphemeralStorage,
	v1.ResourcePods, v1.ResourceQuotas, v1.ResourceServices, v1.ResourceReplicationControllers,
	v1.ResourceSecrets, v1.ResourceConfigMaps, v1.ResourcePersistentVolumeClaims, v1.ResourceStorage,
	v1.ResourceRequestsStorage, v1.ResourceServicesNodePorts, v1.ResourceServicesLoadBalancers,
)

// validateResourceName checks a resource name: a qualified name; if
// unqualified, a standard one, and for a container one a container may
// request (cpu, memory, ephemeral-storage, hugepages-*), for a qualified
// one outside kubernetes.io an extended resource name; at pod level only
// cpu, memory and hugepages-*.
func validateResourceName(name v1.ResourceName, kind resourceKind, path *field.Path) field.ErrorList {
	switch name {
	case v1.ResourceCPU, v1.ResourceMemory:
		return nil // the common case, without the regular expressions
	}
	s := string(name)
	if !isLabelKey(s, false) {
		var errs field.ErrorList
		for _, msg := range validation.IsQualifiedName(s) {
			errs = append(errs, field.Invalid(path, s, msg))
		}
		return errs
	}
	qualified := strings.Contains(s, "/")
	if !qualified && !standardResources.Has(name) && !isHugePage(name) && !strings.HasPrefix(s, v1.ResourceRequestsHugePagesPrefix) {
		return field.ErrorList{field.Invalid(path, s, "must be a standard resource type or fully qualified")}
	}
	if kind == podResources {
		if !strings.HasPrefix(s, v1.ResourceHugePagesPrefix) {
			return field.ErrorList{field.NotSupported(path, s, []string{string(v1.ResourceCPU), v1.ResourceHugePagesPrefix, string(v1.ResourceMemory)})}
		}
		return nil
	}
	switch {
	case !qualified && name != v1.ResourceEphemeralStorage && !isHugePage(name):
		return field.ErrorList{field.Invalid(path, s, "must be a standard resource for containers")}
	case qualified && !isNative(name) && !isExtended(name):
		return field.ErrorList{field.Invalid(path, s, "doesn't follow extended resource name standard")}
	}
	return nil
}

// validateClaimReferences checks a container's resources.claims: each a
// name of the pod's resource claims (podClaims), each claim or request of
// a claim referenced once.
func validateClaimReferences(refs []v1.ResourceClaim, podClaims sets.Set[string], path *field.Path) field.ErrorList {
	if len(refs) == 0 {
		return nil
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i, ref := range refs {
		p := path.Index(i)
		if ref.Name == "" {
			errs = append(errs, field.Required(p, ""))
			continue
		}
		if names.Has(ref.Name) {
			errs = append(errs, field.Duplicate(p, ref.Name))
		} else {
			key := ref.Name
			if ref.Request != "" {
				for _, msg := range validation.IsDNS1123Label(ref.Request) {
					errs = append(errs, field.Invalid(p.Child("request"), ref.Request, msg))
				}
				key += "/" + ref.Request
			}
			switch {
			case names.Has(key):
				errs = append(errs, field.Duplicate(p, key))
			case ref.Request == "":
				// The whole claim, after one of its requests.
				for k := range names {
					if before, _, ok := strings.Cut(k, "/"); ok && before == ref.Name {
						errs = append(errs, field.Duplicate(p, ref.Name))
					}
				}
			}
			names.Insert(key)
		}
		if !podClaims.Has(ref.Name) {
			fe := field.NotFound(p, ref.Name)
			fe.Detail = "must be one of the names in pod.spec.resourceClaims"
			if len(podClaims) == 0 {
				fe.Detail += " which is empty"
			} else {
				fe.Detail += ": " + strings.Join(sets.List(podClaims), ", ")
			}
			errs = append(errs, fe)
		}
	}
	return errs
}
