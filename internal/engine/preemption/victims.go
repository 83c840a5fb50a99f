package preemption

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Victim is a pod the dry run considers evicting, with the start time the
// importance order uses.
type Victim struct {
	// Pod is the pod; it runs on the candidate's node or, for a member of a
	// pod group evicted whole, on any node the group spans.
	Pod *snapshot.Pod
	// Start is the pod's start time in Unix nanoseconds. A pod that has not
	// started counts as starting at the evaluation time, later pods on the
	// node a nanosecond later each, as upstream's time.Now() fallback does.
	Start int64
	// Priority is the pod's priority (kept here so that sorting does not
	// chase the pointer).
	Priority int32
	// Started reports whether the pod has a start time (Start is then that
	// time). (Priority and Started share a word: a victim takes 24 bytes,
	// not 32.)
	Started bool
}

// moreImportant is upstream's MoreImportantPod, the victim order for
// single pods: higher priority first, then the earlier start.
func moreImportant(prioA, prioB int32, startA, startB int64) bool {
	if prioA != prioB {
		return prioA > prioB
	}
	return startA < startB
}

// sortRanked sorts ranked pods, given in Node.Pods order, as upstream sorts
// their victims (see unitList.sortUnits); the snapshot sorts them the same
// way when it builds the nodes' importance orders.
func sortRanked(pods []snapshot.RankedPod) { snapshot.SortByImportance(pods) }

// budget is a PodDisruptionBudget prepared for the victim walk.
type budget struct {
	pdb      *policyv1.PodDisruptionBudget
	selector labels.Selector // nil when the PDB matches nothing
	// unlabeled reports whether the budget may cover a pod without labels
	// (Semantics.PDBEmptySelectorMatchesAll); v1.37 skips such pods.
	unlabeled bool
}

// prepareBudgets prepares pdbs for matching. An invalid or nil selector
// matches nothing; an empty one ({}) matches nothing either, or, with
// emptyMatchesAll, every pod of the budget's namespace, unlabeled ones
// included (upstream 1.38).
func prepareBudgets(pdbs []*policyv1.PodDisruptionBudget, emptyMatchesAll bool) []budget {
	out := make([]budget, len(pdbs))
	for i, pdb := range pdbs {
		out[i].pdb = pdb
		out[i].unlabeled = emptyMatchesAll
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err == nil && (emptyMatchesAll || !sel.Empty()) {
			out[i].selector = sel
		}
	}
	return out
}

// selects reports whether the budget's selector selects p: same namespace
// and labels matched.
func (b *budget) selects(p *snapshot.Pod) bool {
	if b.selector == nil || b.pdb.Namespace != p.Namespace() {
		return false
	}
	if len(p.Labels()) == 0 && !b.unlabeled {
		return false
	}
	return b.selector.Matches(p.Labels())
}

// matches reports whether evicting p charges the budget: same namespace,
// selector matched, and p not already among its disrupted pods.
func (b *budget) matches(p *snapshot.Pod) bool {
	if !b.selects(p) {
		return false
	}
	_, disrupted := b.pdb.Status.DisruptedPods[p.Name()]
	return !disrupted
}

// chargeBudgets charges pod against the budgets and returns the first budget
// it breaks, or nil.
func chargeBudgets(pod *snapshot.Pod, budgets []budget, allowed []int32) *policyv1.PodDisruptionBudget {
	for i := range budgets {
		b := &budgets[i]
		if !b.matches(pod) {
			continue
		}
		allowed[i]--
		if allowed[i] < 0 {
			return b.pdb
		}
	}
	return nil
}
