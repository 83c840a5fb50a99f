package gen

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Workload is the profile of gang workloads: besides everything of
// Everything, pods belong to scheduling.k8s.io PodGroups (v1beta1), some
// nested under CompositePodGroups (v1alpha3) up to three levels deep, each
// group with disruption mode All or Single and a priority that may differ
// from its pods'. Groups have 2–8 scheduled pods spread over several nodes;
// some members are pending, finished or being deleted; a few pods name a
// PodGroup that does not exist and a few groups name a parent that does
// not. Disruption budgets mostly cover group members. The preemptor is a
// plain pod.
//
// Workload is not one of Profiles(): its scenarios are meant for the
// GenericWorkload and CompositePodGroup feature gates, which the
// differential test turns on in both engines (TestDifferentialWorkload).
// Its random stream is seeded as if it were the fifth profile.
const Workload Profile = "workload"

// workloadLevel is Workload's level: above Everything, whose features it
// has.
const workloadLevel = 4

// Label keys of workload pods.
const (
	labelWorkload = "workload" // the workload's name, on all its pods
)

// workloadGroup is a generated group while its hierarchy is built.
type workloadGroup struct {
	pg     *schedulingv1beta1.PodGroup
	cpg    *schedulingv1alpha3.CompositePodGroup
	leaves []*schedulingv1beta1.PodGroup
}

// slot is room on a node for one bound pod.
type slot struct {
	ns        *nodeState
	total     res
	protected bool
}

// genWorkloadPods fills the nodes as genBoundPods does, but turns groups of
// the pods' slots, across nodes, into workloads: pod groups whose pods share
// a priority class, a workload label and an app label.
func (g *generator) genWorkloadPods() {
	var slots []slot
	for _, ns := range g.nodes {
		k := g.between(1, 10)
		if ns.maxPods <= 5 {
			k = g.between(1, int(ns.maxPods))
		}
		protected := g.chance(0.1)
		cpu := g.split(int64(g.utilization()*float64(ns.alloc.cpu/cpuUnit)), k)
		mem := g.split(int64(g.utilization()*float64(ns.alloc.mem/memUnit)), k)
		for i := range k {
			slots = append(slots, slot{ns: ns, total: res{cpu: cpu[i] * cpuUnit, mem: mem[i] * memUnit}, protected: protected})
		}
	}
	g.r.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })

	for w := 1; len(slots) >= 2 && w <= 4; w++ {
		if w > 1 && !g.chance(0.7) {
			break
		}
		size := min(g.between(2, 8), len(slots))
		// Prefer distinct nodes, so that the group spans several.
		var taken []slot
		used := map[*nodeState]bool{}
		for _, pass := range []bool{true, false} {
			for i := 0; i < len(slots) && len(taken) < size; i++ {
				if pass && used[slots[i].ns] {
					continue
				}
				used[slots[i].ns] = true
				taken = append(taken, slots[i])
				slots = slices.Delete(slots, i, i+1)
				i--
			}
		}
		g.genWorkload(fmt.Sprintf("w%d", w), taken)
	}
	for _, sl := range slots {
		p := g.addBoundPod(sl.ns, sl.total, g.podClass(sl.protected))
		if g.chance(0.04) {
			// A pod naming a PodGroup that does not exist.
			name := "ghost"
			p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
		}
	}
	// Pods being deleted, some because an earlier preemption evicted them.
	for _, p := range g.bound {
		if p.Status.Phase == v1.PodRunning && p.DeletionTimestamp == nil && g.chance(0.03) {
			g.terminate(p, g.chance(0.4))
		}
	}
}

// genWorkload creates workload name with one pod per slot: a PodGroup, a
// CompositePodGroup of PodGroups, or a CompositePodGroup nesting another.
func (g *generator) genWorkload(name string, slots []slot) {
	ns := g.podNamespace()
	podClass := g.podClass(false)
	groupClass := func() classChoice {
		switch x := g.r.IntN(100); {
		case x < 65:
			return podClass
		case x < 95:
			return g.resolve(pick(g, g.classes...))
		default:
			return g.resolve(nil)
		}
	}
	app := pick(g, apps...)
	created := minutesAgo(g.between(60, 40*24*60))

	// The hierarchy: its leaf PodGroups get the pods.
	var leaves []*schedulingv1beta1.PodGroup
	nLeaves := 1
	switch x := g.r.IntN(100); {
	case x < 45 || len(slots) < 2:
		leaves = append(leaves, g.podGroup(ns, name, nil, groupClass(), created))
	case x < 80:
		root := g.compositePodGroup(ns, name, nil, groupClass(), created)
		nLeaves = min(g.between(2, 3), len(slots))
		for i := range nLeaves {
			leaves = append(leaves, g.podGroup(ns, fmt.Sprintf("%s-%d", name, i), &root.Name, groupClass(), created))
		}
	default:
		root := g.compositePodGroup(ns, name, nil, groupClass(), created)
		mid := g.compositePodGroup(ns, name+"-mid", &root.Name, groupClass(), created)
		nLeaves = min(g.between(1, 3), len(slots))
		for i := range nLeaves {
			parent := &mid.Name
			if i > 0 && g.chance(0.3) {
				parent = &root.Name
			}
			leaves = append(leaves, g.podGroup(ns, fmt.Sprintf("%s-%d", name, i), parent, groupClass(), created))
		}
	}

	start := g.startTime()
	for i, sl := range slots {
		leaf := leaves[i%len(leaves)]
		labels := map[string]string{labelApp: app, labelWorkload: name}
		if g.chance(0.3) {
			labels[labelTier] = pick(g, tiers...)
		}
		p := g.newPod(g.nextName(name), ns, labels, podClass)
		pgName := leaf.Name
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &pgName}
		g.shape(p, sl.total, true)
		g.existingPodConstraints(p, sl.ns)
		p.Spec.Tolerations = append(p.Spec.Tolerations, defaultTolerations()...)
		g.bind(p, sl.ns)
		if p.Status.StartTime != nil {
			// Gang members start together, or nearly.
			st := start
			if g.chance(0.4) {
				st = metav1.NewTime(start.Add(time.Duration(g.between(1, 90)) * time.Second))
			}
			p.Status.StartTime = &st
			p.CreationTimestamp = metav1.NewTime(st.Add(-time.Duration(g.between(0, 30)) * time.Second))
		}
		sl.ns.pods = append(sl.ns.pods, p)
		sl.ns.used = sl.ns.used.add(podRequests(p))
		g.bound = append(g.bound, p)
		if g.chance(0.05) {
			g.addFinishedMember(sl.ns, p)
		}
	}
	if g.chance(0.15) {
		// A member not scheduled yet: it does not count.
		p := g.pendingPod(podClass)
		p.Labels = map[string]string{labelApp: app, labelWorkload: name}
		pgName := leaves[0].Name
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &pgName}
	}
}

// addFinishedMember binds a finished copy of member p to ns: a member that
// no longer counts.
func (g *generator) addFinishedMember(ns *nodeState, p *v1.Pod) {
	q := g.newPod(g.nextName("done-"+p.Labels[labelWorkload]), p.Namespace, p.Labels, classChoice{name: p.Spec.PriorityClassName, value: *p.Spec.Priority, policy: *p.Spec.PreemptionPolicy})
	q.Spec.SchedulingGroup = p.Spec.SchedulingGroup.DeepCopy()
	q.Spec.RestartPolicy = v1.RestartPolicyNever
	g.shape(q, res{cpu: int64(g.between(1, 20)) * cpuUnit, mem: int64(g.between(1, 16)) * memUnit}, false)
	q.Spec.Tolerations = defaultTolerations()
	q.Spec.NodeName = ns.name
	st := g.startTime()
	q.CreationTimestamp = st
	q.Status = v1.PodStatus{Phase: pick(g, v1.PodSucceeded, v1.PodFailed), StartTime: &st, HostIP: ns.ip, HostIPs: []v1.HostIP{{IP: ns.ip}}, QOSClass: qosClass(q)}
	g.bound = append(g.bound, q)
}

// disruptionMode is All with probability all, else Single; rarely unset
// (a hand-written object; the API server defaults it to Single).
func (g *generator) disruptionMode(all float64) (single, allMode bool) {
	switch {
	case g.chance(all):
		return false, true
	case g.chance(0.1):
		return false, false
	}
	return true, false
}

// podGroup creates a PodGroup as the API server stores it: admission
// resolved its priority, the disruption mode defaulted.
func (g *generator) podGroup(ns, name string, parent *string, class classChoice, created metav1.Time) *schedulingv1beta1.PodGroup {
	prio := class.value
	pg := &schedulingv1beta1.PodGroup{
		TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1beta1", Kind: "PodGroup"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Namespace:         ns,
			UID:               types.UID("uid-pg-" + ns + "-" + name),
			CreationTimestamp: created,
		},
		Spec: schedulingv1beta1.PodGroupSpec{
			ParentCompositePodGroupName: parent,
			PriorityClassName:           class.name,
			Priority:                    &prio,
		},
	}
	if g.chance(0.6) {
		pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: int32(g.between(1, 2))}
	} else {
		pg.Spec.SchedulingPolicy.Basic = &schedulingv1beta1.BasicSchedulingPolicy{}
	}
	if g.chance(0.7) {
		pg.Spec.WorkloadRef = &schedulingv1beta1.WorkloadReference{WorkloadName: "wl-" + name, TemplateName: "workers"}
	}
	single, all := g.disruptionMode(0.55)
	switch {
	case all:
		pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
	case single:
		pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
	}
	if parent != nil && g.chance(0.04) {
		// The parent was never created.
		missing := *parent + "-gone"
		pg.Spec.ParentCompositePodGroupName = &missing
	}
	g.s.PodGroups = append(g.s.PodGroups, pg)
	return pg
}

// compositePodGroup creates a CompositePodGroup as the API server stores it.
func (g *generator) compositePodGroup(ns, name string, parent *string, class classChoice, created metav1.Time) *schedulingv1alpha3.CompositePodGroup {
	prio := class.value
	cpg := &schedulingv1alpha3.CompositePodGroup{
		TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1alpha3", Kind: "CompositePodGroup"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Namespace:         ns,
			UID:               types.UID("uid-cpg-" + ns + "-" + name),
			CreationTimestamp: created,
		},
		Spec: schedulingv1alpha3.CompositePodGroupSpec{
			ParentCompositePodGroupName: parent,
			WorkloadRef:                 &schedulingv1alpha3.WorkloadReference{WorkloadName: "wl-" + name, TemplateName: "composite"},
			PriorityClassName:           class.name,
			Priority:                    &prio,
		},
	}
	if g.chance(0.5) {
		cpg.Spec.SchedulingPolicy.Gang = &schedulingv1alpha3.CompositeGangSchedulingPolicy{MinGroupCount: 1}
	} else {
		cpg.Spec.SchedulingPolicy.Basic = &schedulingv1alpha3.CompositeBasicSchedulingPolicy{}
	}
	single, all := g.disruptionMode(0.5)
	switch {
	case all:
		cpg.Spec.DisruptionMode = &schedulingv1alpha3.CompositeDisruptionMode{All: &schedulingv1alpha3.AllCompositeDisruptionMode{}}
	case single:
		cpg.Spec.DisruptionMode = &schedulingv1alpha3.CompositeDisruptionMode{Single: &schedulingv1alpha3.SingleCompositeDisruptionMode{}}
	}
	g.s.CompositePodGroups = append(g.s.CompositePodGroups, cpg)
	return cpg
}

// genWorkloadPDBs adds 1–3 disruption budgets (most scenarios): most over
// the pods of one workload, some over an app (group members and other pods
// alike), some aimed at one lower-priority pod as genPDBs does.
func (g *generator) genWorkloadPDBs() {
	if !g.chance(0.75) {
		return
	}
	var workloads []*v1.Pod // one member of each workload
	seen := map[string]bool{}
	var lower []*v1.Pod
	for _, p := range g.bound {
		if p.Status.Phase != v1.PodRunning {
			continue
		}
		if w := p.Labels[labelWorkload]; w != "" && !seen[w] {
			seen[w] = true
			workloads = append(workloads, p)
		}
		if *p.Spec.Priority < g.preemptorPrio {
			lower = append(lower, p)
		}
	}
	for i := range g.between(1, 3) {
		var ns string
		var sel *metav1.LabelSelector
		switch x := g.r.IntN(100); {
		case x < 55 && len(workloads) > 0:
			m := pick(g, workloads...)
			ns = m.Namespace
			sel = &metav1.LabelSelector{MatchLabels: map[string]string{labelWorkload: m.Labels[labelWorkload]}}
		case x < 80 && len(workloads) > 0:
			m := pick(g, workloads...)
			ns = m.Namespace
			sel = &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: m.Labels[labelApp]}}
		case len(lower) > 0:
			t := pick(g, lower...)
			ns = t.Namespace
			sel = g.selectorFor(t, nil, false)
		default:
			ns = "default"
			sel = &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: pick(g, apps...)}}
		}
		g.s.PDBs = append(g.s.PDBs, g.pdb(fmt.Sprintf("pdb-%d", i+1), ns, sel))
	}
}
