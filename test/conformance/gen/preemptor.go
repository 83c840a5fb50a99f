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
	g.shape(p, g.preemptorRequest(), g.chance(0.25))
	if g.atLeast(Constraints) {
		g.preemptorConstraints(p)
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

// preemptorRequest sizes the preemptor against the room left on the nodes:
//   - most often exactly what a node's free room plus a few lower-priority
//     pods' requests add up to (sometimes one unit more), so that evicting
//     those pods makes an exact fit;
//   - or more cpu than any node has free;
//   - or more memory than any node has free;
//   - or small, so that it probably fits.
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
	var want res
	x := g.r.IntN(100)
	if x < 55 && len(targets) == 0 {
		x = 55
	}
	switch {
	case x < 55:
		t := pick(g, targets...)
		lower := g.lowerPods(t)
		g.r.Shuffle(len(lower), func(i, j int) { lower[i], lower[j] = lower[j], lower[i] })
		want = t.free()
		for _, q := range lower[:g.between(1, min(3, len(lower)))] {
			want = want.add(podRequests(q))
		}
		want.eph, want.gpu = 0, 0
		want.mem -= int64(g.between(0, 2)) * memUnit
		if g.chance(0.25) {
			want.cpu += cpuUnit
		}
		if want.cpu <= maxFree.cpu {
			want.cpu = maxFree.cpu + int64(g.between(1, 3))*cpuUnit
		}
	case x < 77:
		want.cpu = maxFree.cpu + int64(g.between(1, 10))*cpuUnit
		want.mem = int64(g.between(1, 16)) * memUnit
	case x < 86:
		want.cpu = int64(g.between(1, 5)) * cpuUnit
		want.mem = maxFree.mem + int64(g.between(1, 8))*memUnit
	default:
		want.cpu = int64(g.between(1, 5)) * cpuUnit
		want.mem = int64(g.between(1, 4)) * memUnit
	}
	want.cpu = max(want.cpu, cpuUnit)
	want.mem = max(want.mem, memUnit)
	if hasEph && g.chance(0.2) {
		want.eph = int64(g.between(1, 4)) * ephUnit
	}
	if hasGPU && g.chance(0.25) {
		want.gpu = int64(g.between(1, 2))
	}
	return want
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
