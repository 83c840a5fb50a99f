package gen

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// systemClusterCritical is the built-in class; the API server creates it, so
// scenarios use it without listing it.
const (
	systemClusterCritical      = "system-cluster-critical"
	systemClusterCriticalValue = 2000000000
)

// genPriorityClasses creates 3–5 classes: always one negative value, often
// two classes with the same value, sometimes a globalDefault class and (in
// Everything) sometimes a class with preemptionPolicy Never.
func (g *generator) genPriorityClasses() {
	n := g.between(3, 5)
	values := []int32{pick(g, int32(-1000), -100, -10, -1)}
	pool := []int32{0, 10, 100, 500, 1000, 5000, 10000, 100000}
	g.r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	values = append(values, pool[:n-1]...)
	if g.chance(0.5) {
		// Equal priorities through two classes.
		values[n-1] = values[g.r.IntN(n-1)]
	}
	slices.Sort(values)

	policies := make([]v1.PreemptionPolicy, n)
	for i := range policies {
		policies[i] = v1.PreemptLowerPriority
	}
	never := -1
	if g.atLeast(Everything) && g.chance(0.4) {
		// A non-lowest class that may not preempt.
		never = g.between(1, n-1)
		policies[never] = v1.PreemptNever
	}
	def := -1
	if g.chance(0.25) {
		def = g.between(1, n-1)
	}

	used := map[string]bool{}
	for i, v := range values {
		name := className(v)
		if policies[i] == v1.PreemptNever {
			name += "-nopreempt"
		}
		for used[name] {
			name += "-alt"
		}
		used[name] = true
		policy := policies[i]
		pc := &schedulingv1.PriorityClass{
			TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
			ObjectMeta: metav1.ObjectMeta{
				Name:              name,
				UID:               types.UID("uid-pc-" + name),
				CreationTimestamp: minutesAgo(365*24*60 + i),
			},
			Value:            v,
			GlobalDefault:    i == def,
			Description:      fmt.Sprintf("priority %d", v),
			PreemptionPolicy: &policy,
		}
		g.classes = append(g.classes, pc)
		if i == def {
			g.defaultClass = pc
		}
		if i == never {
			g.neverClass = pc
		}
	}
	g.s.PriorityClasses = slices.Clone(g.classes)
}

func className(v int32) string {
	if v < 0 {
		return fmt.Sprintf("p-neg%d", -v)
	}
	return fmt.Sprintf("p%d", v)
}

// classChoice is what admission writes into a pod for a class (or for no
// class).
type classChoice struct {
	name   string
	value  int32
	policy v1.PreemptionPolicy
}

// resolve returns what admission sets for pc; nil means the pod named no
// class: the global default if there is one, else priority 0.
func (g *generator) resolve(pc *schedulingv1.PriorityClass) classChoice {
	if pc == nil {
		pc = g.defaultClass
	}
	if pc == nil {
		return classChoice{value: 0, policy: v1.PreemptLowerPriority}
	}
	return classChoice{name: pc.Name, value: pc.Value, policy: *pc.PreemptionPolicy}
}

// choosePreemptorClass picks a class above the lowest one, so that there are
// usually pods the preemptor may evict; in Everything sometimes the class
// with preemptionPolicy Never.
func (g *generator) choosePreemptorClass() {
	var candidates []*schedulingv1.PriorityClass
	for _, pc := range g.classes {
		if pc.Value > g.classes[0].Value && *pc.PreemptionPolicy != v1.PreemptNever {
			candidates = append(candidates, pc)
		}
	}
	switch {
	case g.neverClass != nil && g.chance(0.12):
		g.preemptorClass = g.neverClass
	case len(candidates) == 0 || g.chance(0.05):
		g.preemptorClass = nil
	case g.profile == Filters:
		// Mostly above the pods whose constraints it runs into, so that
		// preemption can resolve them.
		g.preemptorClass = pick(g, candidates[len(candidates)/2:]...)
	default:
		g.preemptorClass = pick(g, candidates...)
	}
	g.preemptorPrio = g.resolve(g.preemptorClass).value
}

// podClass picks the class of an existing pod. A protected node gets only
// pods at or above the preemptor's priority; elsewhere most pods are below
// it.
func (g *generator) podClass(protected bool) classChoice {
	var lower, higherEq []*schedulingv1.PriorityClass
	for _, pc := range g.classes {
		if pc.Value < g.preemptorPrio {
			lower = append(lower, pc)
		} else {
			higherEq = append(higherEq, pc)
		}
	}
	systemCritical := classChoice{name: systemClusterCritical, value: systemClusterCriticalValue, policy: v1.PreemptLowerPriority}
	if protected {
		if g.atLeast(Everything) && g.chance(0.05) {
			return systemCritical
		}
		if len(higherEq) > 0 {
			return g.resolve(pick(g, higherEq...))
		}
	}
	x := g.r.Float64()
	switch {
	case x < 0.62 && len(lower) > 0:
		return g.resolve(pick(g, lower...))
	case x < 0.94:
		return g.resolve(pick(g, g.classes...))
	case x < 0.99 || !g.atLeast(Everything):
		return g.resolve(nil)
	default:
		return systemCritical
	}
}

// genNamespaces creates "default" and, above Resources, labelled team
// namespaces for namespace selectors (Everything puts pods in them).
func (g *generator) genNamespaces() {
	add := func(name string, lbls map[string]string, age int) {
		l := map[string]string{"kubernetes.io/metadata.name": name}
		for k, v := range lbls {
			l[k] = v
		}
		g.namespaces = append(g.namespaces, name)
		g.s.Namespaces = append(g.s.Namespaces, &v1.Namespace{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{
				Name:              name,
				UID:               types.UID("uid-ns-" + name),
				Labels:            l,
				CreationTimestamp: minutesAgo(age),
			},
			Spec:   v1.NamespaceSpec{Finalizers: []v1.FinalizerName{v1.FinalizerKubernetes}},
			Status: v1.NamespaceStatus{Phase: v1.NamespaceActive},
		})
	}
	add("default", map[string]string{"env": "prod"}, 400*24*60)
	if !g.atLeast(Constraints) {
		return
	}
	add("team-a", map[string]string{"env": "prod", "team": "a"}, 300*24*60)
	if g.atLeast(Everything) && g.chance(0.5) {
		add("team-b", map[string]string{"env": "dev", "team": "b"}, 200*24*60)
	}
}

// podNamespace is where a new pod goes: always default below Everything.
func (g *generator) podNamespace() string {
	if !g.atLeast(Everything) || g.chance(0.5) {
		return "default"
	}
	return pick(g, g.namespaces...)
}
