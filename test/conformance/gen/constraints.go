package gen

import (
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hostPort is one host port binding of a pod.
type hostPort struct {
	ip    string // "" and "0.0.0.0" mean every address
	port  int32
	proto v1.Protocol
}

func wildcardIP(ip string) bool { return ip == "" || ip == "0.0.0.0" }

// conflicts reports whether a and b cannot be bound on the same node.
func (a hostPort) conflicts(b hostPort) bool {
	return a.port == b.port && a.proto == b.proto && (a.ip == b.ip || wildcardIP(a.ip) || wildcardIP(b.ip))
}

var hostPortVocab = []int32{8080, 9100, 53}

// podHostPorts lists the host ports of p's containers and sidecars.
func podHostPorts(p *v1.Pod) []hostPort {
	var out []hostPort
	add := func(cs []v1.Container, sidecarsOnly bool) {
		for i := range cs {
			if sidecarsOnly && !isSidecar(&cs[i]) {
				continue
			}
			for _, cp := range cs[i].Ports {
				if cp.HostPort > 0 {
					out = append(out, hostPort{ip: cp.HostIP, port: cp.HostPort, proto: cp.Protocol})
				}
			}
		}
	}
	add(p.Spec.InitContainers, true)
	add(p.Spec.Containers, false)
	return out
}

// addHostPort gives p a host port chosen among ips that conflicts neither
// with p's own ports nor with avoid; it reports the port, or false when three
// tries found none.
func (g *generator) addHostPort(p *v1.Pod, ips []string, avoid []hostPort) (hostPort, bool) {
	for range 3 {
		hp := hostPort{ip: pick(g, ips...), port: pick(g, hostPortVocab...), proto: v1.ProtocolTCP}
		if g.chance(0.25) {
			hp.proto = v1.ProtocolUDP
		}
		if slices.ContainsFunc(avoid, hp.conflicts) || slices.ContainsFunc(podHostPorts(p), hp.conflicts) {
			continue
		}
		cp := v1.ContainerPort{ContainerPort: hp.port, HostPort: hp.port, HostIP: hp.ip, Protocol: hp.proto}
		target := &p.Spec.Containers[0]
		for i := range p.Spec.InitContainers {
			if isSidecar(&p.Spec.InitContainers[i]) && g.chance(0.6) {
				target = &p.Spec.InitContainers[i]
			}
		}
		target.Ports = append(target.Ports, cp)
		return hp, true
	}
	return hostPort{}, false
}

// existingPodConstraints gives a pod about to be bound to ns the
// tolerations it needs to be there and, sometimes, a node selector, host
// port or pod (anti-)affinity.
func (g *generator) existingPodConstraints(p *v1.Pod, ns *nodeState) {
	for _, t := range ns.obj.Spec.Taints {
		var need float64
		switch {
		case t.Key == taintUnschedulable:
			// DaemonSet-like pods tolerate cordoned nodes.
			need = 0.2
		case t.Effect == v1.TaintEffectNoExecute:
			need = 1 // otherwise it would have been evicted
		case t.Effect == v1.TaintEffectNoSchedule:
			need = 0.8 // otherwise the taint came after the pod
		default:
			need = 0.3
		}
		if g.chance(need) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, g.toleration(t, true))
		}
	}
	nodeLabels := ns.obj.Labels
	if g.chance(0.1) {
		key := v1.LabelHostname
		if _, ok := nodeLabels[labelDisk]; ok && g.chance(0.5) {
			key = labelDisk
		}
		p.Spec.NodeSelector = map[string]string{key: nodeLabels[key]}
	}
	if ns.zone != "" && g.chance(0.05) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{ns.zone}}},
			}}},
		}}
	}
	if g.chance(0.12) {
		if hp, ok := g.addHostPort(p, []string{"", "", "0.0.0.0", ns.ip, "127.0.0.1"}, ns.ports); ok {
			ns.ports = append(ns.ports, hp)
		}
	}
	if g.chance(0.08) {
		g.affinity(p).PodAntiAffinity = &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{g.podAffinityTerm(p, g.chance(0.3))},
		}
	}
	if g.chance(0.04) {
		g.affinity(p).PodAffinity = &v1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{g.podAffinityTerm(p, g.chance(0.3))},
		}
	}
}

// affinity returns p's affinity, creating it.
func (g *generator) affinity(p *v1.Pod) *v1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	return p.Spec.Affinity
}

// preemptorConstraints adds, each with some probability, tolerations, a
// node selector, required node affinity, host ports, required pod affinity
// and anti-affinity, and topology spread constraints.
func (g *generator) preemptorConstraints(p *v1.Pod) {
	var present []v1.Taint
	for _, ns := range g.nodes {
		present = append(present, ns.obj.Spec.Taints...)
	}
	if g.chance(0.5) {
		for range g.between(1, 2) {
			t := pick(g, taintPool...)
			if len(present) > 0 && g.chance(0.75) {
				t = pick(g, present...)
			}
			p.Spec.Tolerations = append(p.Spec.Tolerations, g.toleration(t, g.chance(0.85)))
		}
	}
	if g.chance(0.1) {
		p.Spec.NodeSelector = pick(g,
			map[string]string{labelDisk: "ssd"},
			map[string]string{labelPool: "compute"},
			map[string]string{v1.LabelTopologyZone: "zone-a"},
			map[string]string{v1.LabelOSStable: "linux"},
		)
	}
	if g.chance(0.2) {
		terms := []v1.NodeSelectorTerm{g.nodeSelectorTerm()}
		if g.chance(0.25) {
			terms = append(terms, g.nodeSelectorTerm())
		}
		g.affinity(p).NodeAffinity = &v1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms},
		}
	}
	if g.chance(0.2) {
		var ips []string
		for _, ns := range g.nodes {
			ips = append(ips, ns.ip)
		}
		ips = []string{"", "", "0.0.0.0", "127.0.0.1", pick(g, ips...)}
		for range g.between(1, 2) {
			g.addHostPort(p, ips, nil)
		}
	}
	if g.chance(0.2) {
		g.affinity(p).PodAffinity = &v1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{g.podAffinityTerm(p, g.chance(0.3))},
		}
	}
	if g.chance(0.25) {
		terms := []v1.PodAffinityTerm{g.podAffinityTerm(p, g.chance(0.4))}
		if g.chance(0.2) {
			terms = append(terms, g.podAffinityTerm(p, false))
		}
		g.affinity(p).PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}
	}
	if g.chance(0.35) {
		p.Spec.TopologySpreadConstraints = g.spreadConstraints(p)
	}
}

// nodeSelectorTerm returns a term of 1–2 expressions over node labels,
// sometimes with (or only) a matchFields requirement on metadata.name.
func (g *generator) nodeSelectorTerm() v1.NodeSelectorTerm {
	var t v1.NodeSelectorTerm
	if !g.chance(0.05) {
		for range g.between(1, 2) {
			t.MatchExpressions = append(t.MatchExpressions, g.nodeRequirement())
		}
	}
	if len(t.MatchExpressions) == 0 || g.chance(0.1) {
		t.MatchFields = []v1.NodeSelectorRequirement{{
			Key:      metav1.ObjectNameField,
			Operator: pick(g, v1.NodeSelectorOpIn, v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn),
			Values:   []string{pick(g, g.nodes...).name},
		}}
	}
	return t
}

func (g *generator) nodeRequirement() v1.NodeSelectorRequirement {
	in, notIn := v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn
	switch g.r.IntN(10) {
	case 0:
		return v1.NodeSelectorRequirement{Key: labelDisk, Operator: in, Values: pick(g, []string{"ssd"}, []string{"hdd", "ssd"})}
	case 1:
		return v1.NodeSelectorRequirement{Key: labelPool, Operator: notIn, Values: []string{"gpu"}}
	case 2:
		return v1.NodeSelectorRequirement{Key: labelDisk, Operator: v1.NodeSelectorOpExists}
	case 3:
		return v1.NodeSelectorRequirement{Key: labelGen, Operator: v1.NodeSelectorOpDoesNotExist}
	case 4:
		return v1.NodeSelectorRequirement{Key: labelCores, Operator: v1.NodeSelectorOpGt, Values: []string{strconv.Itoa(pick(g, 1, 2, 4))}}
	case 5:
		return v1.NodeSelectorRequirement{Key: labelCores, Operator: v1.NodeSelectorOpLt, Values: []string{strconv.Itoa(pick(g, 4, 8))}}
	case 6:
		return v1.NodeSelectorRequirement{Key: v1.LabelTopologyZone, Operator: in, Values: pick(g, []string{"zone-a"}, []string{"zone-a", "zone-b"})}
	case 7:
		return v1.NodeSelectorRequirement{Key: v1.LabelTopologyZone, Operator: notIn, Values: []string{"zone-c"}}
	case 8:
		return v1.NodeSelectorRequirement{Key: v1.LabelHostname, Operator: notIn, Values: []string{pick(g, g.nodes...).name}}
	default:
		return v1.NodeSelectorRequirement{Key: labelGen, Operator: v1.NodeSelectorOpGt, Values: []string{strconv.Itoa(g.between(1, 4))}}
	}
}

// podAffinityTerm returns a term over the pod label vocabulary. With self,
// the term selects p's own app (self-affinity, or anti-affinity between
// replicas). matchLabelKeys and mismatchLabelKeys are merged into the
// selector the way the API server does on create.
func (g *generator) podAffinityTerm(p *v1.Pod, self bool) v1.PodAffinityTerm {
	term := v1.PodAffinityTerm{TopologyKey: v1.LabelHostname}
	if g.chance(0.4) {
		term.TopologyKey = v1.LabelTopologyZone
	}
	sel := &metav1.LabelSelector{}
	if own, ok := p.Labels[labelApp]; self && ok {
		sel.MatchLabels = map[string]string{labelApp: own}
	} else {
		switch x := g.r.IntN(100); {
		case x < 50:
			sel.MatchLabels = map[string]string{labelApp: pick(g, apps...)}
		case x < 75:
			i := g.r.IntN(len(apps))
			sel.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: labelApp, Operator: metav1.LabelSelectorOpIn, Values: []string{apps[i], apps[(i+1)%len(apps)]}}}
		case x < 85:
			sel.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: labelTier, Operator: metav1.LabelSelectorOpExists}}
		case x < 95:
			sel.MatchExpressions = []metav1.LabelSelectorRequirement{
				{Key: labelApp, Operator: metav1.LabelSelectorOpNotIn, Values: []string{pick(g, apps...)}},
				{Key: labelTier, Operator: metav1.LabelSelectorOpIn, Values: []string{pick(g, tiers...)}},
			}
		default:
			sel.MatchExpressions = []metav1.LabelSelectorRequirement{
				{Key: labelApp, Operator: metav1.LabelSelectorOpIn, Values: []string{pick(g, apps...)}},
				{Key: labelTier, Operator: metav1.LabelSelectorOpDoesNotExist},
			}
		}
	}
	term.LabelSelector = sel
	switch x := g.r.IntN(100); {
	case x < 15:
		ns := slices.Clone(g.namespaces)
		g.r.Shuffle(len(ns), func(i, j int) { ns[i], ns[j] = ns[j], ns[i] })
		term.Namespaces = ns[:g.between(1, len(ns))]
	case x < 25:
		term.NamespaceSelector = &metav1.LabelSelector{}
	case x < 35:
		term.NamespaceSelector = &metav1.LabelSelector{MatchLabels: pick(g,
			map[string]string{"env": "prod"}, map[string]string{"team": "a"}, map[string]string{"env": "dev"})}
	}
	switch x := g.r.IntN(100); {
	case x < 10:
		term.MatchLabelKeys = []string{labelHash}
		mergeLabelKeys(sel, term.MatchLabelKeys, metav1.LabelSelectorOpIn, p.Labels)
	case x < 14:
		term.MismatchLabelKeys = []string{labelHash}
		mergeLabelKeys(sel, term.MismatchLabelKeys, metav1.LabelSelectorOpNotIn, p.Labels)
	}
	return term
}

// mergeLabelKeys does what the API server does with matchLabelKeys and
// mismatchLabelKeys on pod create: for each key the pod has, it adds
// "key op (value)" to the selector.
func mergeLabelKeys(sel *metav1.LabelSelector, keys []string, op metav1.LabelSelectorOperator, podLabels map[string]string) {
	for _, k := range keys {
		if v, ok := podLabels[k]; ok {
			sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: []string{v}})
		}
	}
}

// spreadConstraints returns 1–2 topology spread constraints selecting p's
// own app.
func (g *generator) spreadConstraints(p *v1.Pod) []v1.TopologySpreadConstraint {
	keys := []string{v1.LabelHostname, v1.LabelTopologyZone}
	g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	if g.chance(0.75) {
		keys = keys[:1]
	}
	var out []v1.TopologySpreadConstraint
	for _, key := range keys {
		c := v1.TopologySpreadConstraint{
			MaxSkew:           int32(g.between(1, 3)),
			TopologyKey:       key,
			WhenUnsatisfiable: v1.DoNotSchedule,
		}
		if g.chance(0.25) {
			c.WhenUnsatisfiable = v1.ScheduleAnyway
		}
		app := p.Labels[labelApp]
		if g.chance(0.8) {
			c.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: app}}
		} else {
			c.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: labelApp, Operator: metav1.LabelSelectorOpIn, Values: []string{app, pick(g, apps...)}},
			}}
			if vs := c.LabelSelector.MatchExpressions[0].Values; vs[0] == vs[1] {
				c.LabelSelector.MatchExpressions[0].Values = vs[:1]
			}
		}
		if c.WhenUnsatisfiable == v1.DoNotSchedule && g.chance(0.2) {
			md := int32(g.between(2, 4))
			c.MinDomains = &md
		}
		if g.chance(0.2) {
			pol := pick(g, v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore)
			c.NodeAffinityPolicy = &pol
		}
		if g.chance(0.2) {
			pol := pick(g, v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore)
			c.NodeTaintsPolicy = &pol
		}
		if g.chance(0.15) {
			c.MatchLabelKeys = []string{labelHash}
			mergeLabelKeys(c.LabelSelector, c.MatchLabelKeys, metav1.LabelSelectorOpIn, p.Labels)
		}
		out = append(out, c)
	}
	return out
}
