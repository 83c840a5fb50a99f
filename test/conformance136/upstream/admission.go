package upstream

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/types"
)

// systemPriorityClasses are the classes every API server creates at start-up
// (pkg/apis/scheduling SystemPriorityClasses); they exist even when the input
// does not list them.
var systemPriorityClasses = []*schedulingv1.PriorityClass{
	{ObjectMeta: objectMeta("system-node-critical"), Value: 2000001000},
	{ObjectMeta: objectMeta("system-cluster-critical"), Value: 2000000000},
}

// priorityResolver mimics plugin/pkg/admission/priority on pod create.
type priorityResolver struct {
	byName map[string]*schedulingv1.PriorityClass
	// globalDefault is the globalDefault class with the lowest value (the
	// admission plugin's tie-break when several are marked default), or nil.
	globalDefault *schedulingv1.PriorityClass
}

func newPriorityResolver(classes []*schedulingv1.PriorityClass) *priorityResolver {
	r := &priorityResolver{byName: make(map[string]*schedulingv1.PriorityClass)}
	for _, pc := range systemPriorityClasses {
		r.byName[pc.Name] = pc
	}
	for _, pc := range classes {
		r.byName[pc.Name] = pc
		if pc.GlobalDefault && (r.globalDefault == nil || pc.Value < r.globalDefault.Value) {
			r.globalDefault = pc
		}
	}
	return r
}

// resolve sets spec.priority and spec.preemptionPolicy on pod (which must be
// a copy the caller owns) as admission would have:
//  1. priorityClassName names a class: that class; an unknown name is
//     ErrInvalidInput (admission rejects the pod).
//  2. no priorityClassName: the global default class, if any (and
//     priorityClassName is set to its name, as admission does).
//  3. otherwise priority 0 and PreemptLowerPriority.
//
// An explicit spec.priority or spec.preemptionPolicy is kept: the input is
// taken to be already admitted (admission would reject a mismatch). A class
// without preemptionPolicy means PreemptLowerPriority (API defaulting).
func (r *priorityResolver) resolve(pod *v1.Pod) error {
	var pc *schedulingv1.PriorityClass
	if name := pod.Spec.PriorityClassName; name != "" {
		var ok bool
		if pc, ok = r.byName[name]; !ok {
			return fmt.Errorf("%w: pod %s/%s: no PriorityClass with name %q was found", ErrInvalidInput, pod.Namespace, pod.Name, name)
		}
	} else if r.globalDefault != nil {
		pc = r.globalDefault
		pod.Spec.PriorityClassName = pc.Name
	}

	priority := int32(0)
	policy := v1.PreemptLowerPriority
	if pc != nil {
		priority = pc.Value
		if pc.PreemptionPolicy != nil {
			policy = *pc.PreemptionPolicy
		}
	}
	if pod.Spec.Priority == nil {
		pod.Spec.Priority = &priority
	}
	if pod.Spec.PreemptionPolicy == nil {
		pod.Spec.PreemptionPolicy = &policy
	}
	return nil
}

// normalizePod fills what the API server always sets and the scheduler relies
// on: a namespace ("default"), a UID (derived from namespace/name so that
// runs are reproducible; the nominator keys pods by UID) and the scheduler
// name ("default-scheduler").
func normalizePod(pod *v1.Pod) {
	if pod.Namespace == "" {
		pod.Namespace = v1.NamespaceDefault
	}
	if pod.UID == "" {
		pod.UID = types.UID("uid/" + pod.Namespace + "/" + pod.Name)
	}
	if pod.Spec.SchedulerName == "" {
		pod.Spec.SchedulerName = v1.DefaultSchedulerName
	}
}

// resolveGroup is the Priority admission plugin for a PodGroup or
// CompositePodGroup (admitted with the GenericWorkload gate): spec.priority
// from the named class, or the global default class (whose name it
// records), or 0. An explicit spec.priority is kept; an unknown class is
// ErrInvalidInput.
func (r *priorityResolver) resolveGroup(kind, namespace, name string, className *string, priority **int32) error {
	var pc *schedulingv1.PriorityClass
	if *className != "" {
		var ok bool
		if pc, ok = r.byName[*className]; !ok {
			return fmt.Errorf("%w: %s %s/%s: no PriorityClass with name %q was found", ErrInvalidInput, kind, namespace, name, *className)
		}
	} else if r.globalDefault != nil {
		pc = r.globalDefault
		*className = pc.Name
	}
	value := int32(0)
	if pc != nil {
		value = pc.Value
	}
	if *priority == nil {
		*priority = &value
	}
	return nil
}
