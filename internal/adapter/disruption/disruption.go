// Package disruption computes a PodDisruptionBudget's status as the
// disruption controller of kube-controller-manager v1.37 writes it
// (pkg/controller/disruption: trySync, getExpectedPodCount,
// getExpectedScale, countHealthyPods, updatePdbStatus and failSafe),
// from the pods and the controllers' scales it is given. Preemption reads
// only status.disruptionsAllowed (and disruptedPods); the rest is
// computed for whoever writes the budget back or explains it.
//
// The budget's spec.unhealthyPodEvictionPolicy changes nothing here: the
// controller does not read it (only the eviction API does, and the
// scheduler deletes its victims without it).
package disruption

import (
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// DeletionTimeout is how long after an eviction the controller expects a
// pod listed in status.disruptedPods to be deleted (upstream's
// DeletionTimeout): until then the pod does not count as healthy.
const DeletionTimeout = 2 * time.Minute

// ErrNoController is wrapped by the error of a pod whose controller has no
// scale the controller can find (it is not known, or has no scale, as a
// Job or a DaemonSet): a budget that needs the scale then fails safe, as
// upstream's does.
var ErrNoController = errors.New("found no controllers for pod")

// Scales finds the scale of a pod's controller, as the controller's
// finders do (ReplicationController, Deployment through its ReplicaSet,
// ReplicaSet, StatefulSet).
type Scales interface {
	// Scale returns, for a pod of namespace whose controller reference is
	// ref, the UID of the controller whose replicas count (a Deployment's
	// for a ReplicaSet it owns) and those replicas; ok is false when no
	// such controller is known.
	Scale(namespace string, ref *metav1.OwnerReference) (uid types.UID, replicas int32, ok bool)
}

// Unset reports whether pdb has no status at all: no controller has
// synced it (the API server creates a budget so), and no one wrote one by
// hand. A status written by hand (say, only disruptionsAllowed) is kept
// as the user's word.
func Unset(pdb *policyv1.PodDisruptionBudget) bool {
	return equality.Semantic.DeepEqual(pdb.Status, policyv1.PodDisruptionBudgetStatus{})
}

// Result is a budget's status as one sync of the controller leaves it.
type Result struct {
	// Status is the new status: computed, or the old one failing safe
	// (no disruption allowed, condition DisruptionAllowed False with
	// reason SyncFailed) when Err is set.
	Status policyv1.PodDisruptionBudgetStatus
	// Unmanaged names the selected pods without a controller reference,
	// for which upstream records an UnmanagedPods warning event.
	Unmanaged []string
	// Err is why the status could not be computed, or nil.
	Err error
	// Recheck is when a pod of status.disruptedPods stops counting as
	// about to be deleted, and the budget must be synced again (zero:
	// never).
	Recheck time.Time
}

// Sync computes pdb's status at now from pods (those of its namespace
// that its selector matches count; others are ignored), as the disruption
// controller's sync does. pdb is not changed.
func Sync(pdb *policyv1.PodDisruptionBudget, pods []*v1.Pod, scales Scales, now time.Time) Result {
	selected, err := selectPods(pdb, pods)
	if err != nil {
		return failSafe(pdb, err, now)
	}
	// 1) How many pods are expected, and how many must stay healthy.
	expected, desired, unmanaged, err := expectedCount(pdb, selected, scales)
	if err != nil {
		r := failSafe(pdb, err, now)
		r.Unmanaged = unmanaged
		return r
	}
	// 2) Which evicted pods still count as on their way out, and which
	// pods are healthy.
	disrupted, recheck := disruptedPods(pdb, selected, now)
	healthy := countHealthy(selected, disrupted, now)
	// 3) What that leaves to disrupt.
	allowed := healthy - desired
	if expected <= 0 || allowed <= 0 {
		allowed = 0
	}
	st := policyv1.PodDisruptionBudgetStatus{
		CurrentHealthy: healthy, DesiredHealthy: desired, ExpectedPods: expected, DisruptionsAllowed: allowed,
		DisruptedPods: disrupted, ObservedGeneration: pdb.Generation,
		Conditions: append([]metav1.Condition{}, pdb.Status.Conditions...),
	}
	// As pdbhelper.UpdateDisruptionAllowedCondition sets it.
	cond := metav1.Condition{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse,
		Reason: policyv1.InsufficientPodsReason, ObservedGeneration: st.ObservedGeneration}
	if allowed > 0 {
		cond.Status, cond.Reason = metav1.ConditionTrue, policyv1.SufficientPodsReason
	}
	setCondition(&st.Conditions, cond, now)
	return Result{Status: st, Unmanaged: unmanaged, Recheck: recheck}
}

// selectPods returns the pods of pdb's namespace its selector matches (a
// nil selector matches none, an empty one all, as for the controller's
// lister).
func selectPods(pdb *policyv1.PodDisruptionBudget, pods []*v1.Pod) ([]*v1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return nil, err
	}
	var out []*v1.Pod
	for _, p := range pods {
		if p.Namespace == pdb.Namespace && sel.Matches(labelSet(p.Labels)) {
			out = append(out, p)
		}
	}
	return out, nil
}

// labelSet is a pod's labels as a selector reads them.
type labelSet map[string]string

func (l labelSet) Has(k string) bool   { _, ok := l[k]; return ok }
func (l labelSet) Get(k string) string { return l[k] }
func (l labelSet) Lookup(k string) (string, bool) {
	v, ok := l[k]
	return v, ok
}

// expectedCount is getExpectedPodCount: with maxUnavailable, or a
// percentage minAvailable, the pods expected are the scale of the pods'
// controllers; with an integer minAvailable, the pods selected.
func expectedCount(pdb *policyv1.PodDisruptionBudget, pods []*v1.Pod, scales Scales) (expected, desired int32, unmanaged []string, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		if expected, unmanaged, err = expectedScale(pods, scales); err != nil {
			return 0, 0, unmanaged, err
		}
		maxUnavailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return 0, 0, unmanaged, err
		}
		return expected, max(expected-int32(maxUnavailable), 0), unmanaged, nil
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.Int:
		return int32(len(pods)), pdb.Spec.MinAvailable.IntVal, nil, nil
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == intstr.String:
		if expected, unmanaged, err = expectedScale(pods, scales); err != nil {
			return 0, 0, unmanaged, err
		}
		minAvailable, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		if err != nil {
			return 0, 0, unmanaged, err
		}
		return expected, int32(minAvailable), unmanaged, nil
	}
	return 0, 0, nil, nil
}

// expectedScale is getExpectedScale: the sum of the scales of the pods'
// controllers, each counted once; pods without a controller are
// unmanaged and count nothing; a controller without a scale is an error.
func expectedScale(pods []*v1.Pod, scales Scales) (int32, []string, error) {
	scale := map[types.UID]int32{}
	var unmanaged []string
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			unmanaged = append(unmanaged, p.Name)
			continue
		}
		if _, known := scale[ref.UID]; known {
			continue
		}
		var uid types.UID
		var replicas int32
		ok := false
		if scales != nil {
			uid, replicas, ok = scales.Scale(p.Namespace, ref)
		}
		if !ok {
			return 0, unmanaged, fmt.Errorf("%w %q", ErrNoController, p.Name)
		}
		scale[uid] = replicas
	}
	var n int32
	for _, s := range scale {
		n += s
	}
	return n, unmanaged, nil
}

// disruptedPods is buildDisruptedPodMap: the pods of status.disruptedPods
// not yet deleted whose deletion is still expected, and when the first of
// them stops being expected.
func disruptedPods(pdb *policyv1.PodDisruptionBudget, pods []*v1.Pod, now time.Time) (map[string]metav1.Time, time.Time) {
	out := map[string]metav1.Time{}
	var recheck time.Time
	if pdb.Status.DisruptedPods == nil {
		return out, recheck
	}
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		at, found := pdb.Status.DisruptedPods[p.Name]
		if !found {
			continue
		}
		deadline := at.Add(DeletionTimeout)
		if deadline.Before(now) {
			continue
		}
		if recheck.IsZero() || deadline.Before(recheck) {
			recheck = deadline
		}
		out[p.Name] = at
	}
	return out, recheck
}

// countHealthy is countHealthyPods: the Ready pods neither being deleted
// nor about to be.
func countHealthy(pods []*v1.Pod, disrupted map[string]metav1.Time, now time.Time) int32 {
	var n int32
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if at, found := disrupted[p.Name]; found && at.Add(DeletionTimeout).After(now) {
			continue
		}
		if Ready(p) {
			n++
		}
	}
	return n
}

// Ready reports whether p's Ready condition is True, as the controller
// reads it (apipod.IsPodReady).
func Ready(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// failSafe is the controller's failSafe: the old status with no
// disruption allowed and condition DisruptionAllowed False, reason
// SyncFailed, saying why.
func failSafe(pdb *policyv1.PodDisruptionBudget, err error, now time.Time) Result {
	st := *pdb.Status.DeepCopy()
	st.DisruptionsAllowed = 0
	if st.Conditions == nil {
		st.Conditions = []metav1.Condition{}
	}
	setCondition(&st.Conditions, metav1.Condition{
		Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse,
		Reason: policyv1.SyncFailedReason, Message: err.Error(), ObservedGeneration: st.ObservedGeneration,
	}, now)
	return Result{Status: st, Err: err}
}

// setCondition sets c in conds as apimeta.SetStatusCondition does, with
// now (not the wall clock) as the time of a transition.
func setCondition(conds *[]metav1.Condition, c metav1.Condition, now time.Time) {
	c.LastTransitionTime = metav1.NewTime(now)
	for i := range *conds {
		if old := (*conds)[i]; old.Type == c.Type {
			if old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
			(*conds)[i] = c
			return
		}
	}
	*conds = append(*conds, c)
}
