package gen

import (
	v1 "k8s.io/api/core/v1"
)

// genPreemptor creates the pending pod to schedule, sized so that it usually
// does not fit anywhere as the cluster stands, with constraints above
// Resources. In Everything it is sometimes already nominated to a node, on
// which lower-priority pods may be terminating.
func (g *generator) genPreemptor() {
	ns := "default"
	if g.atLeast(Everything) && g.chance(0.3) {
		ns = pick(g, g.namespaces...)
	}
	labels := map[string]string{labelApp: pick(g, apps...)}
	if g.chance(0.4) {
		labels[labelTier] = pick(g, tiers...)
	}
	if g.chance(0.4) {
		labels[labelHash] = pick(g, hashes...)
	}
	p := g.newPod("preemptor", ns, labels, g.resolve(g.preemptorClass))
	p.Annotations = map[string]string{PreemptorAnnotation: "true"}
	p.CreationTimestamp = minutesAgo(1)
	var request res
	if g.plan != nil {
		g.plan.label(labels)
		request = g.filtersPreemptorRequest()
	} else if g.profile == Storage && g.chance(0.5) {
		// Small enough to fit on many nodes: the volume plugins decide.
		request = res{cpu: int64(g.between(1, 2)) * cpuUnit, mem: memUnit}
	} else {
		request = g.preemptorRequest()
	}
	g.shape(p, request, g.chance(0.25))
	if g.atLeast(Constraints) {
		g.preemptorConstraints(p)
	}
	if g.plan != nil {
		g.planPreemptorConstraints(p)
	}
	p.Spec.Tolerations = append(p.Spec.Tolerations, defaultTolerations()...)
	p.Status = v1.PodStatus{Phase: v1.PodPending, QOSClass: qosClass(p)}

	if g.atLeast(Everything) && g.chance(0.15) {
		ns := pick(g, g.nodes...)
		nominate(p, ns.name)
		// Lower-priority pods on the nominated node still terminating after
		// an earlier preemption.
		if g.chance(0.6) {
			for _, q := range ns.pods {
				if *q.Spec.Priority < g.preemptorPrio && q.DeletionTimestamp == nil && g.chance(0.5) {
					g.terminate(q, g.chance(0.7))
				}
			}
		}
	}
	g.s.Preemptor = p
}

// nominate records a nominated node on a pending pod, with the condition a
// failed scheduling attempt leaves.
func nominate(p *v1.Pod, node string) {
	p.Status.NominatedNodeName = node
	p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{
		Type:               v1.PodScheduled,
		Status:             v1.ConditionFalse,
		Reason:             v1.PodReasonUnschedulable,
		Message:            "0/1 nodes are available: preemption in progress.",
		LastTransitionTime: p.CreationTimestamp,
	})
}

// preemptorRequest sizes the preemptor against the room left on the nodes.
// A target node with lower-priority pods is picked, and the request is
//   - most often exactly the target's free room plus the requests of a few
//     of its lower-priority pods (sometimes one cpu unit more), so that
//     evicting those pods makes an exact fit;
//   - or more cpu than any node has free, but no more than the target's
//     allocatable;
//   - or more memory than any node has free, likewise bounded;
//   - or small, so that it probably fits.
//
// The cpu is then raised above every node's free cpu when needed, which may
// exceed the allocatable of every node (preemption cannot help then).
func (g *generator) preemptorRequest() res {
	var maxFree res
	var targets []*nodeState
	hasEph, hasGPU := false, false
	for _, ns := range g.nodes {
		maxFree = maxFree.max(ns.free())
		if len(g.lowerPods(ns)) > 0 {
			targets = append(targets, ns)
		}
		hasEph = hasEph || ns.alloc.eph > 0
		hasGPU = hasGPU || ns.alloc.gpu > 0
	}
	if len(targets) == 0 {
		targets = g.nodes
	}
	// upTo returns a whole number of units in [lo, hi], or lo when hi < lo.
	upTo := func(lo, hi, unit int64) int64 {
		return lo + int64(g.between(0, int((hi-lo)/unit)))*unit
	}
	var want res
	switch x := g.r.IntN(100); {
	case x < 55:
		// Several tries at a target and victims whose requests add up to
		// more cpu than any node has free.
		for try := 0; try < 4 && want.cpu <= maxFree.cpu; try++ {
			t := pick(g, targets...)
			lower := g.lowerPods(t)
			g.r.Shuffle(len(lower), func(i, j int) { lower[i], lower[j] = lower[j], lower[i] })
			want = t.free()
			if len(lower) > 0 {
				for _, q := range lower[:g.between(1, min(3, len(lower)))] {
					want = want.add(podRequests(q))
				}
			}
			want.eph, want.gpu = 0, 0
			want.mem -= int64(g.between(0, 2)) * memUnit
			if g.chance(0.25) {
				want.cpu += cpuUnit
			}
		}
	case x < 77:
		t := g.roomiest(targets, func(n *nodeState) bool { return n.alloc.cpu > maxFree.cpu })
		want.cpu = upTo(maxFree.cpu+cpuUnit, t.alloc.cpu, cpuUnit)
		want.mem = upTo(memUnit, t.alloc.mem/2, memUnit)
	case x < 86:
		t := g.roomiest(targets, func(n *nodeState) bool { return n.alloc.mem > maxFree.mem })
		want.cpu = upTo(cpuUnit, t.alloc.cpu/2, cpuUnit)
		want.mem = upTo(maxFree.mem+memUnit, t.alloc.mem, memUnit)
	default:
		want.cpu = int64(g.between(1, 5)) * cpuUnit
		want.mem = int64(g.between(1, 4)) * memUnit
	}
	if want.cpu <= maxFree.cpu && g.chance(0.5) {
		want.cpu = maxFree.cpu + cpuUnit
	}
	want.cpu = max(want.cpu, cpuUnit)
	want.mem = max(want.mem, memUnit)
	if hasEph && g.chance(0.15) {
		want.eph = int64(g.between(1, 4)) * ephUnit
	}
	if hasGPU && g.chance(0.12) {
		want.gpu = int64(g.between(1, 2))
	}
	return want
}

// roomiest picks a node of nodes for which ok holds, or any when none does.
func (g *generator) roomiest(nodes []*nodeState, ok func(*nodeState) bool) *nodeState {
	var good []*nodeState
	for _, n := range nodes {
		if ok(n) {
			good = append(good, n)
		}
	}
	if len(good) == 0 {
		return pick(g, nodes...)
	}
	return pick(g, good...)
}

// lowerPods are the running pods on ns below the preemptor's priority that
// are not being deleted: the ones preemption may evict.
func (g *generator) lowerPods(ns *nodeState) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range ns.pods {
		if *p.Spec.Priority < g.preemptorPrio && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// genPendingPods adds, in Everything, pending pods nominated to nodes (some
// above or at the preemptor's priority, some below) and sometimes a pending
// pod without a nomination.
func (g *generator) genPendingPods() {
	if !g.atLeast(Everything) {
		return
	}
	if g.chance(0.45) {
		for range g.between(1, 2) {
			var class classChoice
			if g.chance(0.5) {
				class = g.podClass(true)
			} else {
				class = g.podClass(false)
			}
			p := g.pendingPod(class)
			nominate(p, pick(g, g.nodes...).name)
		}
	}
	if g.chance(0.2) {
		g.pendingPod(g.podClass(false))
	}
}

// pendingPod creates a pending pod of the given class.
func (g *generator) pendingPod(class classChoice) *v1.Pod {
	p := g.newPod(g.nextName("pending"), g.podNamespace(), g.podLabels(), class)
	p.CreationTimestamp = minutesAgo(g.between(1, 30))
	g.shape(p, res{cpu: int64(g.between(1, 10)) * cpuUnit, mem: int64(g.between(1, 8)) * memUnit}, true)
	p.Spec.Tolerations = defaultTolerations()
	p.Status = v1.PodStatus{Phase: v1.PodPending, QOSClass: qosClass(p)}
	g.pending = append(g.pending, p)
	return p
}
