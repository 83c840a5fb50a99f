package gen

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Dependent is Everything with a preemptor that depends on pods below its
// priority, the clusters where fit is not monotone in the pods a dry run
// removes: the preemptor requires (by zone or by host) pods of one app
// that run mostly below its priority, and a few pods below its priority
// keep it away with their anti-affinity. Upstream's dry run removes every
// lower-priority pod first, the app's pods with them, and drops nodes
// where evicting a few pods would make room.
//
// Dependent is not one of Profiles(): TestPoliciesNeverWorse runs it. Its
// random stream is seeded as if it were the eighth profile.
const Dependent Profile = "dependent"

// Dependent's levels: Everything's features, and a stream of its own.
const (
	dependentLevel  = 2
	dependentStream = 7
)

// labelRole marks the preemptor alone, for the anti-affinity that keeps
// it away.
const labelRole = "role"

// plantDependence makes the preemptor depend on pods below its priority:
// pods of its namespace are relabelled to one app (a third of those below
// its priority, a few of those above), the preemptor requires that app's
// pods in its zone or on its host, and a fifth of the other pods below its
// priority in its namespace keep it away from their host with a required
// anti-affinity to its role. It runs before the budgets are made, which
// then see the new labels.
func (g *generator) plantDependence() {
	p := g.s.Preemptor
	app := pick(g, apps...)
	key := v1.LabelTopologyZone
	if g.chance(0.3) {
		key = v1.LabelHostname
	}
	var lower []*v1.Pod
	for _, q := range g.bound {
		if q.Namespace != p.Namespace || q.Status.Phase != v1.PodRunning || q.DeletionTimestamp != nil {
			continue
		}
		switch {
		case *q.Spec.Priority >= g.preemptorPrio:
			if g.chance(0.15) {
				q.Labels[labelApp] = app
			}
		case g.chance(0.35):
			q.Labels[labelApp] = app
		default:
			lower = append(lower, q)
		}
	}
	p.Labels[labelRole] = "frontend"
	g.affinity(p).PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: app}},
	}}}
	for _, q := range lower {
		if g.chance(0.2) {
			g.affinity(q).PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelRole: "frontend"}},
			}}}
		}
	}
}
