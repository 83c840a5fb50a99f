package preemption

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/reprieve/reprieve/pkg/snapshot"
)

// Victim is a pod the dry run considers evicting, with the start time the
// importance order uses.
type Victim struct {
	// Pod is the pod; it runs on the candidate's node or, for a member of a
	// pod group evicted whole, on any node the group spans.
	Pod *snapshot.Pod
	// Priority is the pod's priority (kept here so that sorting does not
	// chase the pointer).
	Priority int32
	// Start is the pod's start time in Unix nanoseconds. A pod that has not
	// started counts as starting at the evaluation time, later pods on the
	// node a nanosecond later each, as upstream's time.Now() fallback does.
	Start int64
}

// MoreImportantFunc reports whether victim a is more important than b; the
// dry run reprieves more important victims first and evicts the others.
type MoreImportantFunc func(a, b *Victim) bool

// MoreImportant is upstream's default victim order for single pods: higher
// priority first, then the earlier start time.
func MoreImportant(a, b *Victim) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	return a.Start < b.Start
}

// sortVictims sorts as upstream does with sort.Slice, which is not stable.
// slices.SortFunc runs the same pattern-defeating quicksort (both are
// generated from one template in the standard library), so victims of equal
// importance end in the same order; it just avoids sort.Slice's reflection.
// TestSortMatchesSortSlice holds it to that. The template only ever asks
// whether cmp(a, b) < 0, so cmp needs one call of more.
func sortVictims(vs []*Victim, more MoreImportantFunc) {
	slices.SortFunc(vs, func(a, b *Victim) int {
		if more(a, b) {
			return -1
		}
		return 0
	})
}

// sortRanked sorts ranked pods, given in Node.Pods order, as sortVictims
// sorts their victims under MoreImportant: the same comparisons on the
// same sequence give the same permutation.
func sortRanked(pods []snapshot.RankedPod) {
	slices.SortFunc(pods, func(a, b snapshot.RankedPod) int {
		if MoreImportant(&Victim{Priority: a.Priority, Start: a.Start}, &Victim{Priority: b.Priority, Start: b.Start}) {
			return -1
		}
		return 0
	})
}

// budget is a PodDisruptionBudget prepared for the victim walk.
type budget struct {
	pdb      *policyv1.PodDisruptionBudget
	selector labels.Selector // nil when the PDB matches nothing
}

func prepareBudgets(pdbs []*policyv1.PodDisruptionBudget) []budget {
	out := make([]budget, len(pdbs))
	for i, pdb := range pdbs {
		out[i].pdb = pdb
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		// An invalid, nil or empty selector matches nothing.
		if err == nil && !sel.Empty() {
			out[i].selector = sel
		}
	}
	return out
}

// splitByPDB is upstream's FilterVictimsWithPDBViolation for single-pod
// victims: it walks the victims in order, charging each matching budget
// (pods already in a budget's disruptedPods are not charged), and reports a
// victim as violating at the first budget that goes negative. The per-victim
// budgets that broke are returned for explanations.
func splitByPDB(victims []*Victim, budgets []budget) (violating, nonViolating []*Victim, broken map[*Victim][]*policyv1.PodDisruptionBudget) {
	if len(budgets) == 0 {
		return nil, victims, nil
	}
	allowed := make([]int32, len(budgets))
	for i := range budgets {
		allowed[i] = budgets[i].pdb.Status.DisruptionsAllowed
	}
	for _, v := range victims {
		if pdb := chargeBudgets(v.Pod.Obj, budgets, allowed); pdb != nil {
			violating = append(violating, v)
			if broken == nil {
				broken = map[*Victim][]*policyv1.PodDisruptionBudget{}
			}
			broken[v] = append(broken[v], pdb)
		} else {
			nonViolating = append(nonViolating, v)
		}
	}
	return violating, nonViolating, broken
}

// chargeBudgets charges pod against the budgets and returns the first budget
// it breaks, or nil.
func chargeBudgets(pod *v1.Pod, budgets []budget, allowed []int32) *policyv1.PodDisruptionBudget {
	if len(pod.Labels) == 0 {
		return nil
	}
	for i := range budgets {
		b := &budgets[i]
		if b.selector == nil || b.pdb.Namespace != pod.Namespace || !b.selector.Matches(labels.Set(pod.Labels)) {
			continue
		}
		if _, disrupted := b.pdb.Status.DisruptedPods[pod.Name]; disrupted {
			continue
		}
		allowed[i]--
		if allowed[i] < 0 {
			return b.pdb
		}
	}
	return nil
}
