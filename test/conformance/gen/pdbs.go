package gen

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// genPDBs adds, in Everything, 1–3 disruption budgets. Each is aimed at a
// bound pod (usually one the preemptor could evict) through its app or tier
// label; sometimes two budgets cover the same pod, sometimes a budget has an
// empty selector (every pod of its namespace) or sits in another namespace
// than the pod it was aimed at. The status is what the disruption
// controller would compute, with disruptionsAllowed 0–2 and sometimes a
// pod in disruptedPods.
func (g *generator) genPDBs() {
	if !g.atLeast(Everything) || !g.chance(0.7) {
		return
	}
	var running, lower []*v1.Pod
	for _, p := range g.bound {
		if p.Status.Phase == v1.PodRunning {
			running = append(running, p)
			if *p.Spec.Priority < g.preemptorPrio {
				lower = append(lower, p)
			}
		}
	}
	var prev *v1.Pod
	var prevSel *metav1.LabelSelector
	for i := range g.between(1, 3) {
		var target *v1.Pod
		switch {
		case prev != nil && g.chance(0.35):
			target = prev // overlap with the previous budget
		case len(lower) > 0 && g.chance(0.75):
			target = pick(g, lower...)
		case len(running) > 0:
			target = pick(g, running...)
		}
		ns := "default"
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: pick(g, apps...)}}
		if target != nil {
			ns = target.Namespace
			sel = g.selectorFor(target, prevSel, target == prev)
		}
		if g.chance(0.08) {
			sel = &metav1.LabelSelector{}
		}
		if len(g.namespaces) > 1 && g.chance(0.15) {
			for own := ns; ns == own; {
				ns = pick(g, g.namespaces...)
			}
		}
		g.s.PDBs = append(g.s.PDBs, g.pdb(fmt.Sprintf("pdb-%d", i+1), ns, sel))
		prev, prevSel = target, sel
	}
}

// selectorFor returns a selector matching p by its labels, different from
// avoid when overlap is set.
func (g *generator) selectorFor(p *v1.Pod, avoid *metav1.LabelSelector, overlap bool) *metav1.LabelSelector {
	app, hasApp := p.Labels[labelApp]
	tier, hasTier := p.Labels[labelTier]
	if !hasApp {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"component": p.Labels["component"]}}
	}
	byApp := &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: app}}
	byExpr := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: labelApp, Operator: metav1.LabelSelectorOpIn, Values: []string{app, pick(g, apps...)},
	}}}
	if vs := byExpr.MatchExpressions[0].Values; vs[0] == vs[1] {
		byExpr.MatchExpressions[0].Values = vs[:1]
	}
	if overlap && avoid != nil && len(avoid.MatchLabels) > 0 {
		if hasTier {
			return &metav1.LabelSelector{MatchLabels: map[string]string{labelTier: tier}}
		}
		return byExpr
	}
	switch x := g.r.IntN(100); {
	case x < 60:
		return byApp
	case x < 85 || !hasTier:
		return byExpr
	default:
		return &metav1.LabelSelector{MatchLabels: map[string]string{labelTier: tier}}
	}
}

// pdb builds a budget with the status the disruption controller would
// report for the current pods.
func (g *generator) pdb(name, ns string, sel *metav1.LabelSelector) *policyv1.PodDisruptionBudget {
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		panic(fmt.Sprintf("gen: invalid generated selector %v: %v", sel, err))
	}
	var expected, healthy []*v1.Pod
	for _, p := range g.bound {
		if p.Namespace != ns || p.DeletionTimestamp != nil || !selector.Matches(labels.Set(p.Labels)) {
			continue
		}
		switch p.Status.Phase {
		case v1.PodRunning:
			healthy = append(healthy, p)
			expected = append(expected, p)
		case v1.PodPending:
			expected = append(expected, p)
		}
	}
	allowed := min(int32(pick(g, 0, 0, 1, 1, 2)), int32(len(healthy)))
	desired := int32(len(healthy)) - allowed
	pdb := &policyv1.PodDisruptionBudget{
		TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Namespace:         ns,
			UID:               types.UID("uid-" + ns + "-" + name),
			Generation:        1,
			CreationTimestamp: minutesAgo(g.between(60, 100000)),
		},
		Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel},
		Status: policyv1.PodDisruptionBudgetStatus{
			ObservedGeneration: 1,
			DisruptionsAllowed: allowed,
			CurrentHealthy:     int32(len(healthy)),
			DesiredHealthy:     desired,
			ExpectedPods:       int32(len(expected)),
		},
	}
	if g.chance(0.55) {
		v := intstr.FromInt32(desired)
		pdb.Spec.MinAvailable = &v
	} else {
		v := intstr.FromInt32(allowed + int32(len(expected)-len(healthy)))
		pdb.Spec.MaxUnavailable = &v
	}
	cond := metav1.Condition{
		Type:               policyv1.DisruptionAllowedCondition,
		Status:             metav1.ConditionTrue,
		ObservedGeneration: 1,
		LastTransitionTime: minutesAgo(g.between(1, 600)),
		Reason:             policyv1.SufficientPodsReason,
	}
	if allowed == 0 {
		cond.Status, cond.Reason = metav1.ConditionFalse, policyv1.InsufficientPodsReason
	}
	pdb.Status.Conditions = []metav1.Condition{cond}
	if len(healthy) > 0 && g.chance(0.25) {
		// An eviction the API server approved whose pod is still there,
		// preferably one the preemptor could evict.
		victim := pick(g, healthy...)
		for _, p := range healthy {
			if *p.Spec.Priority < g.preemptorPrio && g.chance(0.5) {
				victim = p
			}
		}
		pdb.Status.DisruptedPods = map[string]metav1.Time{victim.Name: minutesAgo(g.between(0, 1))}
	}
	return pdb
}
