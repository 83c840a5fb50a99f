package admission

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"
)

// validatePodLevelResources checks spec.resources (PodLevelResources, on by
// default since 1.34): only cpu, memory and hugepages, no claims, requests
// within limits as for a container, and then their consistency with the
// containers: each pod-level request at least the containers' aggregate
// request (what the scheduler would count without pod-level resources,
// restartable init containers included), pod-level hugepage limits at
// least the containers' aggregate, and no container limit above the
// pod-level one.
func validatePodLevelResources(s *v1.PodSpec, path *field.Path) field.ErrorList {
	if s.Resources == nil {
		return nil
	}
	path = path.Child("resources")
	var errs field.ErrorList
	if s.Resources.Claims != nil {
		errs = append(errs, field.Forbidden(path.Child("claims"), "claims may not be set for Resources at pod-level"))
	}
	errs = append(errs, validateResources(s.Resources, podResources, nil, path)...)
	if len(errs) > 0 {
		return errs
	}
	pod := &v1.Pod{Spec: *s}
	for name, sum := range resourcehelper.AggregateContainerRequests(pod, resourcehelper.PodResourcesOptions{}) {
		if req, ok := s.Resources.Requests[name]; ok && sum.Cmp(req) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(string(name)), req.String(), fmt.Sprintf("must be greater than or equal to aggregate container requests of %s", sum.String())))
		}
	}
	for name, sum := range resourcehelper.AggregateContainerLimits(pod, resourcehelper.PodResourcesOptions{}) {
		if !isHugePage(name) {
			continue
		}
		if lim, ok := s.Resources.Limits[name]; ok && sum.Cmp(lim) > 0 {
			errs = append(errs, field.Invalid(path.Child("limits").Key(string(name)), lim.String(), fmt.Sprintf("must be greater than or equal to aggregate container limits of %s", sum.String())))
		}
	}
	for i := range s.Containers {
		for _, name := range sortedNames(s.Containers[i].Resources.Limits) {
			lim := s.Containers[i].Resources.Limits[name]
			if podLim, ok := s.Resources.Limits[name]; ok && lim.Cmp(podLim) > 0 {
				// The path is upstream's, odd as it is.
				errs = append(errs, field.Invalid(path.Child("containers").Index(i).Key(string(name)).Child("limits"), lim.String(), fmt.Sprintf("must be less than or equal to pod limits of %s", podLim.String())))
			}
		}
	}
	sortErrors(errs)
	return errs
}

// validateOverhead checks spec.overhead as the limits of a container.
func validateOverhead(overhead v1.ResourceList, path *field.Path) field.ErrorList {
	if overhead == nil {
		return nil
	}
	return validateResources(&v1.ResourceRequirements{Limits: overhead}, containerResources, nil, path.Child("overhead"))
}

// sortErrors orders errors found walking a map by field, for the first
// one to be the same from run to run.
func sortErrors(errs field.ErrorList) {
	if len(errs) < 2 {
		return
	}
	slices.SortStableFunc(errs, func(a, b *field.Error) int { return strings.Compare(a.Field, b.Field) })
}
