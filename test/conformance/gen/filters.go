package gen

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nearApp is the app label of the pods that the Filters preemptor's zone
// affinity asks for. Such pods run in one zone only (filterPlan.nearZone), so
// that the nodes of every other zone fail the affinity.
const nearApp = "d"

// filterPlan is what the Filters profile decides once the nodes exist and
// before any pod does, so that the pods around the preemptor can be made the
// cause of its constraints' violations.
type filterPlan struct {
	// app is the preemptor's app label; its spread constraints and
	// self-affinity select it, and existing pods' anti-affinity rejects it.
	app string
	// avoid is the app the preemptor's required anti-affinity selects.
	avoid string
	// hash is the preemptor's pod-template-hash label ("" for none), which
	// matchLabelKeys merge into its selectors.
	hash string
	// nearZone is the only zone with nearApp pods ("" when no node has a
	// zone).
	nearZone string
	// port is the host port the preemptor may ask for and pods around it
	// hold, or nil.
	port *hostPort
}

// planFilters makes the Filters plan.
func (g *generator) planFilters() {
	pl := &filterPlan{app: pick(g, apps...)}
	for pl.avoid = pick(g, apps...); pl.avoid == pl.app; {
		pl.avoid = pick(g, apps...)
	}
	if g.chance(0.5) {
		pl.hash = pick(g, hashes...)
	}
	var zones []string
	for _, ns := range g.nodes {
		if ns.zone != "" && !slices.Contains(zones, ns.zone) {
			zones = append(zones, ns.zone)
		}
	}
	if len(zones) > 0 {
		pl.nearZone = pick(g, zones...)
	}
	if g.chance(0.5) {
		hp := hostPort{ip: pick(g, "", "", "0.0.0.0", "127.0.0.1"), port: pick(g, hostPortVocab...), proto: v1.ProtocolTCP}
		if g.chance(0.2) {
			hp.proto = v1.ProtocolUDP
		}
		pl.port = &hp
	}
	g.plan = pl
}

// label gives the preemptor's labels the planned app and hash.
func (pl *filterPlan) label(labels map[string]string) {
	labels[labelApp] = pl.app
	if pl.hash != "" {
		labels[labelHash] = pl.hash
	} else {
		delete(labels, labelHash)
	}
}

// planLabels relabels a pod about to be bound to ns: often the preemptor's
// app (what its spread constraints count), the app its anti-affinity
// avoids, or, in the near zone, the app its zone affinity needs.
//
// Pods the preemptor may not evict are labelled so less often, since they
// make a node's violation unresolvable; the near-zone pods, which the
// preemptor needs rather than avoids, are usually made such pods.
func (g *generator) planLabels(p *v1.Pod, ns *nodeState) {
	lower := *p.Spec.Priority < g.preemptorPrio
	switch x := g.r.IntN(100); {
	case x < 30 && (lower || x < 15):
		p.Labels[labelApp] = g.plan.app
		if g.plan.hash != "" && g.chance(0.6) {
			p.Labels[labelHash] = g.plan.hash
		}
	case x >= 30 && x < 50 && (lower || x < 40):
		p.Labels[labelApp] = g.plan.avoid
	case x >= 50 && x < 70 && ns.zone != "" && ns.zone == g.plan.nearZone:
		p.Labels[labelApp] = nearApp
		if lower && g.chance(0.7) {
			class := g.podClass(true)
			p.Spec.PriorityClassName, p.Spec.Priority, p.Spec.PreemptionPolicy = class.name, &class.value, &class.policy
		}
	}
}

// planPodConstraints gives a pod about to be bound to ns, sometimes, a
// required anti-affinity that rejects the preemptor and the preemptor's host
// port.
func (g *generator) planPodConstraints(p *v1.Pod, ns *nodeState) {
	// As in planLabels, mostly pods the preemptor may evict.
	share := 1.0
	if *p.Spec.Priority >= g.preemptorPrio {
		share = 0.3
	}
	if g.chance(0.12 * share) {
		term := v1.PodAffinityTerm{
			TopologyKey:   v1.LabelHostname,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: g.plan.app}},
		}
		if g.chance(0.15) {
			// Zone-wide: preemption cannot evict the pod from the other
			// nodes of its zone.
			term.TopologyKey = v1.LabelTopologyZone
		}
		if g.chance(0.4) {
			// The preemptor may be in another namespace.
			term.NamespaceSelector = &metav1.LabelSelector{}
		}
		addAntiAffinity(p, term)
	}
	if g.plan.port != nil && g.chance(0.3*share) {
		hp := *g.plan.port
		hp.ip = pick(g, hp.ip, "", ns.ip)
		if !slices.ContainsFunc(ns.ports, hp.conflicts) && g.bindPort(p, hp) {
			ns.ports = append(ns.ports, hp)
		}
	}
}

// bindPort adds hp to p's first container unless it conflicts with a port p
// already has; it reports whether it did.
func (g *generator) bindPort(p *v1.Pod, hp hostPort) bool {
	if slices.ContainsFunc(podHostPorts(p), hp.conflicts) {
		return false
	}
	c := &p.Spec.Containers[0]
	c.Ports = append(c.Ports, v1.ContainerPort{ContainerPort: hp.port, HostPort: hp.port, HostIP: hp.ip, Protocol: hp.proto})
	return true
}

func addAntiAffinity(p *v1.Pod, term v1.PodAffinityTerm) {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	a := p.Spec.Affinity
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
}

func addAffinity(p *v1.Pod, term v1.PodAffinityTerm) {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	a := p.Spec.Affinity
	if a.PodAffinity == nil {
		a.PodAffinity = &v1.PodAffinity{}
	}
	a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
}

// terminateSpreadPods marks some running pods of the preemptor's app as
// being deleted: its spread selectors match them.
func (g *generator) terminateSpreadPods() {
	for _, p := range g.bound {
		if p.Status.Phase == v1.PodRunning && p.DeletionTimestamp == nil && p.Labels[labelApp] == g.plan.app && g.chance(0.15) {
			g.terminate(p, g.chance(0.5))
		}
	}
}

// filtersPreemptorRequest is usually a small request that fits on most
// nodes, sometimes the other profiles' request.
func (g *generator) filtersPreemptorRequest() res {
	if g.chance(0.15) {
		return g.preemptorRequest()
	}
	return res{cpu: int64(g.between(1, 3)) * cpuUnit, mem: int64(g.between(1, 2)) * memUnit}
}

// planPreemptorConstraints adds the planned constraints to the preemptor:
// required anti-affinity to the avoided app, required affinity (to the
// near-zone app or to itself), topology spread constraints over its own app,
// and the planned host port.
func (g *generator) planPreemptorConstraints(p *v1.Pod) {
	if g.chance(0.45) {
		term := v1.PodAffinityTerm{
			TopologyKey:   v1.LabelHostname,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: g.plan.avoid}},
		}
		if g.chance(0.15) {
			term.TopologyKey = v1.LabelTopologyZone
		}
		g.scopeTerm(&term, p.Namespace)
		addAntiAffinity(p, term)
	}
	if g.chance(0.35) {
		var term v1.PodAffinityTerm
		if g.plan.nearZone != "" && g.chance(0.65) {
			term = v1.PodAffinityTerm{
				TopologyKey:   v1.LabelTopologyZone,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: nearApp}},
			}
			// The near pods are in any namespace.
			switch x := g.r.IntN(100); {
			case x < 50:
				term.NamespaceSelector = &metav1.LabelSelector{}
			case x < 70:
				term.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
			}
		} else {
			// Self-affinity: the dry run removes every lower-priority pod
			// first, so this often fails where the matching pods are all
			// evictable.
			term = v1.PodAffinityTerm{
				TopologyKey:   pick(g, v1.LabelHostname, v1.LabelTopologyZone),
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: g.plan.app}},
			}
			if g.chance(0.25) {
				term.MatchLabelKeys = []string{labelHash}
				mergeLabelKeys(term.LabelSelector, term.MatchLabelKeys, metav1.LabelSelectorOpIn, p.Labels)
			}
			g.scopeTerm(&term, p.Namespace)
		}
		addAffinity(p, term)
	}
	if g.chance(0.65) {
		g.planSpread(p)
	}
	if g.plan.port != nil && g.chance(0.7) {
		g.bindPort(p, *g.plan.port)
	}
}

// scopeTerm sometimes widens a term beyond the pod's own namespace.
func (g *generator) scopeTerm(term *v1.PodAffinityTerm, own string) {
	switch x := g.r.IntN(100); {
	case x < 20:
		term.NamespaceSelector = &metav1.LabelSelector{}
	case x < 35:
		term.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	case x < 45:
		term.Namespaces = []string{own, pick(g, g.namespaces...)}
		if term.Namespaces[0] == term.Namespaces[1] {
			term.Namespaces = term.Namespaces[:1]
		}
	}
}

// planSpread adds 1–2 topology spread constraints over the preemptor's app,
// mostly DoNotSchedule, skipping a topology key and action the pod already
// has (the API server rejects duplicates).
func (g *generator) planSpread(p *v1.Pod) {
	keys := []string{v1.LabelHostname, v1.LabelTopologyZone}
	g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	if g.chance(0.6) {
		keys = keys[:1]
	}
	for _, key := range keys {
		c := v1.TopologySpreadConstraint{
			MaxSkew:           int32(pick(g, 1, 1, 1, 2)),
			TopologyKey:       key,
			WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: g.plan.app}},
		}
		if g.chance(0.15) {
			c.WhenUnsatisfiable = v1.ScheduleAnyway
		}
		if slices.ContainsFunc(p.Spec.TopologySpreadConstraints, func(o v1.TopologySpreadConstraint) bool {
			return o.TopologyKey == c.TopologyKey && o.WhenUnsatisfiable == c.WhenUnsatisfiable
		}) {
			continue
		}
		if c.WhenUnsatisfiable == v1.DoNotSchedule && g.chance(0.3) {
			md := int32(g.between(2, 5))
			c.MinDomains = &md
		}
		if g.chance(0.3) {
			pol := pick(g, v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore)
			c.NodeAffinityPolicy = &pol
		}
		if g.chance(0.3) {
			pol := pick(g, v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore)
			c.NodeTaintsPolicy = &pol
		}
		if g.chance(0.3) {
			c.MatchLabelKeys = []string{labelHash}
			mergeLabelKeys(c.LabelSelector, c.MatchLabelKeys, metav1.LabelSelectorOpIn, p.Labels)
		}
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, c)
	}
}

// filterPendingPods adds, often, 1–3 pending pods nominated to nodes, above
// or below the preemptor's priority, labelled like the pods the preemptor's
// constraints select and sometimes with anti-affinity to it, affinity to
// their own app, or its host port.
func (g *generator) filterPendingPods() {
	if !g.chance(0.6) {
		return
	}
	for range g.between(1, 3) {
		p := g.pendingPod(g.podClass(g.chance(0.5)))
		switch x := g.r.IntN(100); {
		case x < 45:
			p.Labels[labelApp] = g.plan.app
		case x < 75:
			p.Labels[labelApp] = g.plan.avoid
		}
		if g.chance(0.35) {
			addAntiAffinity(p, v1.PodAffinityTerm{
				TopologyKey:   pick(g, v1.LabelHostname, v1.LabelTopologyZone),
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: g.plan.app}},
			})
		}
		if own, ok := p.Labels[labelApp]; ok && g.chance(0.2) {
			addAffinity(p, v1.PodAffinityTerm{
				TopologyKey:   v1.LabelTopologyZone,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: own}},
			})
		}
		if g.plan.port != nil && g.chance(0.35) {
			g.bindPort(p, *g.plan.port)
		}
		nominate(p, pick(g, g.nodes...).name)
	}
}
