package gen

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// feature is one thing a scenario can exercise, and the simplest profile
// expected to produce it.
type feature struct {
	name    string
	profile Profile
}

// features lists every feature Features can report, in report order.
var features = []feature{
	// Nodes.
	{"node/ephemeral-storage", Resources},
	{"node/extended-resource", Resources},
	{"node/small-pods-allocatable", Resources},
	{"node/pods-allocatable-full", Resources},
	{"node/no-lower-priority-pods", Resources},
	{"node/missing-zone", Constraints},
	{"node/taint-NoSchedule", Constraints},
	{"node/taint-NoExecute", Constraints},
	{"node/taint-PreferNoSchedule", Constraints},
	{"node/unschedulable", Everything},
	// Priorities.
	{"priority/negative", Resources},
	{"priority/equal-classes", Resources},
	{"priority/global-default", Resources},
	{"priority/no-class", Resources},
	{"priority/higher-than-preemptor", Resources},
	{"priority/equal-to-preemptor", Resources},
	{"priority/system-cluster-critical", Everything},
	{"priorityclass/preemption-never", Everything},
	// Pod shapes and states.
	{"pod/best-effort", Resources},
	{"pod/limits", Resources},
	{"pod/multi-container", Resources},
	{"pod/ephemeral-storage", Resources},
	{"pod/extended-resource", Resources},
	{"pod/identical-start-time", Resources},
	{"pod/identical-start-time-same-priority", Resources},
	{"pod/no-start-time", Resources},
	{"pod/init-container", Everything},
	{"pod/init-container-larger", Everything},
	{"pod/sidecar", Everything},
	{"pod/sidecar-hostPort", Everything},
	{"pod/overhead", Everything},
	{"pod/pod-level-resources", Everything},
	{"pod/succeeded", Everything},
	{"pod/failed", Everything},
	{"namespaces/multiple", Everything},
	{"terminating/preempted", Everything},
	{"terminating/other", Everything},
	{"terminating/lower-on-preemptor-nominated-node", Everything},
	{"pending/nominated-higher-or-equal", Everything},
	{"pending/nominated-lower", Everything},
	{"pending/not-nominated", Everything},
	// Existing pods' constraints.
	{"pod/hostPort", Constraints},
	{"pod/podAffinity", Constraints},
	{"pod/podAntiAffinity", Constraints},
	{"pod/nodeSelector-or-affinity", Constraints},
	// The preemptor.
	{"preemptor/cpu-exceeds-free-everywhere", Resources},
	{"preemptor/cpu-fits-somewhere", Resources},
	{"preemptor/resources-fit-nowhere", Resources},
	{"preemptor/resources-fit-somewhere", Resources},
	{"preemptor/preemption-never", Everything},
	{"preemptor/nominated", Everything},
	{"preemptor/toleration-Equal", Constraints},
	{"preemptor/toleration-Exists", Constraints},
	{"preemptor/toleration-empty-effect", Constraints},
	{"preemptor/toleration-wildcard", Constraints},
	{"preemptor/toleration-unschedulable", Everything},
	{"preemptor/nodeSelector", Constraints},
	{"preemptor/nodeAffinity-In", Constraints},
	{"preemptor/nodeAffinity-NotIn", Constraints},
	{"preemptor/nodeAffinity-Exists", Constraints},
	{"preemptor/nodeAffinity-DoesNotExist", Constraints},
	{"preemptor/nodeAffinity-Gt", Constraints},
	{"preemptor/nodeAffinity-Lt", Constraints},
	{"preemptor/nodeAffinity-matchFields", Constraints},
	{"preemptor/nodeAffinity-multiple-terms", Constraints},
	{"preemptor/hostPort", Constraints},
	{"preemptor/hostPort-conflict", Constraints},
	{"preemptor/podAffinity", Constraints},
	{"preemptor/podAffinity-self", Constraints},
	{"preemptor/podAntiAffinity", Constraints},
	{"preemptor/podAntiAffinity-self", Constraints},
	{"preemptor/spread-DoNotSchedule", Constraints},
	{"preemptor/spread-ScheduleAnyway", Constraints},
	{"spread/topology-hostname", Constraints},
	{"spread/topology-zone", Constraints},
	{"spread/minDomains", Constraints},
	{"spread/nodeAffinityPolicy", Constraints},
	{"spread/nodeTaintsPolicy", Constraints},
	{"spread/matchLabelKeys", Constraints},
	// Host ports and pod affinity terms of any pod.
	{"hostPort/UDP", Constraints},
	{"hostPort/specific-ip", Constraints},
	{"podAffinity/topology-hostname", Constraints},
	{"podAffinity/topology-zone", Constraints},
	{"podAffinity/matchExpressions", Constraints},
	{"podAffinity/namespaces", Constraints},
	{"podAffinity/namespaceSelector-empty", Constraints},
	{"podAffinity/namespaceSelector-labels", Constraints},
	{"podAffinity/matchLabelKeys", Constraints},
	// Disruption budgets.
	{"pdb", Everything},
	{"pdb/disruptions-allowed-0", Everything},
	{"pdb/disruptions-allowed-positive", Everything},
	{"pdb/disrupted-pods", Everything},
	{"pdb/empty-selector", Everything},
	{"pdb/overlapping", Everything},
	{"pdb/other-namespace", Everything},
	// Default spreading: Services and controllers over the pods.
	{"defaultspread/preemptor-selected", Resources},
	{"defaultspread/preemptor-service", Resources},
	{"defaultspread/preemptor-services-merged", Resources},
	{"defaultspread/preemptor-ReplicaSet", Resources},
	{"defaultspread/preemptor-StatefulSet", Resources},
	{"defaultspread/preemptor-ReplicationController", Resources},
	{"defaultspread/service-without-selector", Resources},
	{"defaultspread/controller-not-matching", Resources},
	{"defaultspread/controller-gone", Resources},
	{"defaultspread/owner-not-followed", Resources},
	// Pods around the preemptor that cause its constraints' violations
	// (common in Filters, occasional in the others).
	{"preemptor/resources-fit-most-nodes", Resources},
	{"preemptor/podAffinity-zone-local", Constraints},
	{"lower/matched-by-anti-affinity", Constraints},
	{"lower/anti-affinity-to-preemptor", Constraints},
	{"lower/hostPort-conflict", Constraints},
	{"lower/matched-by-spread", Constraints},
	{"spread/terminating-matching-pod", Everything},
	{"pending/nominated-podAffinity", Filters},
	{"pending/nominated-podAntiAffinity", Filters},
	{"pending/nominated-hostPort", Filters},
	// Pod groups (Workload).
	{"group/podgroup", Workload},
	{"group/compositepodgroup", Workload},
	{"group/nested-composite", Workload},
	{"group/disruption-all", Workload},
	{"group/disruption-single", Workload},
	{"group/disruption-unset", Workload},
	{"group/composite-disruption-all", Workload},
	{"group/spans-nodes", Workload},
	{"group/priority-differs-from-pods", Workload},
	{"group/priority-below-preemptor-pods-not", Workload},
	{"group/priority-not-below-preemptor-pods-below", Workload},
	{"group/missing-podgroup", Workload},
	{"group/missing-parent", Workload},
	{"group/pending-member", Workload},
	{"group/finished-member", Workload},
	{"group/terminating-member", Workload},
	{"group/member-without-start-time", Workload},
	{"group/pdb-over-members", Workload},
	// Volumes (Storage).
	{"volume/bound-zonal", Storage},
	{"volume/bound-missing-pv", Storage},
	{"volume/multi-zone-label", Storage},
	{"volume/local-wffc", Storage},
	{"volume/prebound-pv", Storage},
	{"volume/provisioned-wffc", Storage},
	{"volume/allowed-topologies", Storage},
	{"volume/storage-capacity", Storage},
	{"volume/selected-node", Storage},
	{"volume/unbound-immediate", Storage},
	{"volume/missing-claim", Storage},
	{"volume/lost-claim", Storage},
	{"volume/deleting-claim", Storage},
	{"volume/rwop-in-use", Storage},
	{"volume/rwop-same-name-other-namespace", Storage},
	{"volume/rwop-nominated-pod", Storage},
	{"volume/inline-disk-shared", Storage},
	{"volume/ephemeral-owned", Storage},
	{"volume/ephemeral-missing", Storage},
	{"volume/ephemeral-not-owned", Storage},
	{"volume/attach-limit", Storage},
	{"volume/volume-attachment", Storage},
	{"volume/stale-volume-attachment", Storage},
	{"volume/csi-migration", Storage},
	{"volume/driver-must-be-installed", Storage},
	{"volume/node-without-csinode", Storage},
}

// AllFeatures returns the names of the features scenarios of profile p are
// expected to exercise (given enough seeds), in report order.
func AllFeatures(p Profile) []string {
	var out []string
	for _, f := range features {
		if p.includes(f.profile) {
			out = append(out, f.name)
		}
	}
	return out
}

// allFeatureNames returns the names of every feature of every profile.
func allFeatureNames() []string {
	out := make([]string, 0, len(features))
	for _, f := range features {
		out = append(out, f.name)
	}
	return out
}

// Features returns the names of the features the scenario exercises, in
// report order. It inspects the objects, so it works on parsed and
// hand-written scenarios too.
func (s *Scenario) Features() []string {
	has := map[string]bool{}
	set := func(name string, cond bool) {
		if cond {
			has[name] = true
		}
	}
	pre := s.Preemptor
	prePrio := priority(pre)
	nsLabels := map[string]map[string]string{}
	for _, ns := range s.Namespaces {
		nsLabels[ns.Name] = ns.Labels
	}

	// Existing pods: per-node usage, start times, states.
	used := map[string]res{}
	count := map[string]int64{}
	lowerOn := map[string]bool{}
	var activePorts []hostPort
	// Start times seen, and start times seen per node and priority: equal
	// ones are what victim ordering must break ties on.
	type tieKey struct {
		node string
		t    string
		prio int32
	}
	starts, ties := map[string]bool{}, map[tieKey]bool{}
	namespaces := map[string]bool{}
	for _, p := range s.Pods {
		namespaces[p.Namespace] = true
		r := podRequests(p)
		set("priority/negative", priority(p) < 0)
		set("priority/no-class", p.Spec.PriorityClassName == "")
		set("priority/system-cluster-critical", p.Spec.PriorityClassName == systemClusterCritical)
		set("pod/limits", hasLimits(p))
		set("pod/multi-container", len(p.Spec.Containers) > 1)
		set("pod/ephemeral-storage", r.eph > 0)
		set("pod/extended-resource", r.gpu > 0)
		shapeFeatures(p, set)
		for _, hp := range podHostPorts(p) {
			set("hostPort/UDP", hp.proto == v1.ProtocolUDP)
			set("hostPort/specific-ip", !wildcardIP(hp.ip))
		}
		affinityFeatures(p, set)
		if p == pre {
			continue
		}
		finished := p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
		set("pod/succeeded", p.Spec.NodeName != "" && p.Status.Phase == v1.PodSucceeded)
		set("pod/failed", p.Spec.NodeName != "" && p.Status.Phase == v1.PodFailed)
		if p.Spec.NodeName == "" {
			if finished {
				continue
			}
			nominated := p.Status.NominatedNodeName != ""
			set("pending/nominated-higher-or-equal", nominated && priority(p) >= prePrio)
			set("pending/nominated-lower", nominated && priority(p) < prePrio)
			set("pending/not-nominated", !nominated)
			continue
		}
		if finished {
			continue
		}
		node := p.Spec.NodeName
		used[node] = used[node].add(r)
		count[node]++
		lowerOn[node] = lowerOn[node] || priority(p) < prePrio
		activePorts = append(activePorts, podHostPorts(p)...)
		set("pod/best-effort", r.isZero())
		set("pod/no-start-time", p.Status.StartTime == nil)
		set("priority/higher-than-preemptor", priority(p) > prePrio)
		set("priority/equal-to-preemptor", priority(p) == prePrio)
		if p.Status.StartTime != nil {
			t := p.Status.StartTime.UTC().String()
			k := tieKey{node: node, t: t, prio: priority(p)}
			set("pod/identical-start-time", starts[t])
			set("pod/identical-start-time-same-priority", ties[k])
			starts[t], ties[k] = true, true
		}
		if p.DeletionTimestamp != nil {
			preempted := slices.ContainsFunc(p.Status.Conditions, func(c v1.PodCondition) bool {
				return c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonPreemptionByScheduler
			})
			set("terminating/preempted", preempted)
			set("terminating/other", !preempted)
			set("terminating/lower-on-preemptor-nominated-node", node == pre.Status.NominatedNodeName && priority(p) < prePrio)
		}
		set("pod/hostPort", len(podHostPorts(p)) > 0)
		if a := p.Spec.Affinity; a != nil {
			set("pod/podAffinity", a.PodAffinity != nil && len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0)
			set("pod/podAntiAffinity", a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0)
			set("pod/nodeSelector-or-affinity", a.NodeAffinity != nil)
		}
		set("pod/nodeSelector-or-affinity", len(p.Spec.NodeSelector) > 0)
	}
	set("namespaces/multiple", len(namespaces) > 1)

	// Nodes.
	preReq := podRequests(pre)
	cpuFits, resourcesFit := false, false
	fitNodes := 0
	for _, n := range s.Nodes {
		alloc, maxPods := nodeAllocatable(n)
		set("node/ephemeral-storage", alloc.eph > 0)
		set("node/extended-resource", alloc.gpu > 0)
		set("node/small-pods-allocatable", maxPods <= 5)
		set("node/pods-allocatable-full", count[n.Name] >= maxPods)
		set("node/no-lower-priority-pods", count[n.Name] > 0 && !lowerOn[n.Name])
		set("node/missing-zone", n.Labels[v1.LabelTopologyZone] == "")
		set("node/unschedulable", n.Spec.Unschedulable)
		for _, t := range n.Spec.Taints {
			set("node/taint-"+string(t.Effect), t.Key != taintUnschedulable)
		}
		free := alloc.sub(used[n.Name])
		cpuFits = cpuFits || preReq.cpu <= free.cpu
		fits := !n.Spec.Unschedulable && preReq.fitsIn(free) && count[n.Name] < maxPods
		resourcesFit = resourcesFit || fits
		if fits {
			fitNodes++
		}
	}
	set("preemptor/cpu-exceeds-free-everywhere", !cpuFits)
	set("preemptor/cpu-fits-somewhere", cpuFits)
	set("preemptor/resources-fit-most-nodes", 2*fitNodes > len(s.Nodes))
	set("preemptor/resources-fit-nowhere", !resourcesFit)
	set("preemptor/resources-fit-somewhere", resourcesFit)

	// Classes.
	values := map[int32]bool{}
	for _, pc := range s.PriorityClasses {
		set("priority/equal-classes", values[pc.Value])
		values[pc.Value] = true
		set("priority/global-default", pc.GlobalDefault)
		set("priorityclass/preemption-never", pc.PreemptionPolicy != nil && *pc.PreemptionPolicy == v1.PreemptNever)
	}

	// The preemptor.
	set("preemptor/preemption-never", pre.Spec.PreemptionPolicy != nil && *pre.Spec.PreemptionPolicy == v1.PreemptNever)
	set("preemptor/nominated", pre.Status.NominatedNodeName != "")
	for _, t := range pre.Spec.Tolerations {
		if t.Key == v1.TaintNodeNotReady || t.Key == v1.TaintNodeUnreachable {
			continue
		}
		set("preemptor/toleration-wildcard", t.Key == "")
		set("preemptor/toleration-unschedulable", t.Key == taintUnschedulable)
		set("preemptor/toleration-Equal", t.Operator == v1.TolerationOpEqual)
		set("preemptor/toleration-Exists", t.Key != "" && t.Operator == v1.TolerationOpExists)
		set("preemptor/toleration-empty-effect", t.Key != "" && t.Effect == "")
	}
	set("preemptor/nodeSelector", len(pre.Spec.NodeSelector) > 0)
	if a := pre.Spec.Affinity; a != nil {
		if na := a.NodeAffinity; na != nil && na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
			set("preemptor/nodeAffinity-multiple-terms", len(terms) > 1)
			for _, t := range terms {
				for _, e := range t.MatchExpressions {
					set("preemptor/nodeAffinity-"+string(e.Operator), true)
				}
				set("preemptor/nodeAffinity-matchFields", len(t.MatchFields) > 0)
			}
		}
		if pa := a.PodAffinity; pa != nil {
			set("preemptor/podAffinity", len(pa.RequiredDuringSchedulingIgnoredDuringExecution) > 0)
			for _, t := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				set("preemptor/podAffinity-self", termMatches(t, pre.Namespace, pre, nsLabels))
			}
		}
		if pa := a.PodAntiAffinity; pa != nil {
			set("preemptor/podAntiAffinity", len(pa.RequiredDuringSchedulingIgnoredDuringExecution) > 0)
			for _, t := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
				set("preemptor/podAntiAffinity-self", termMatches(t, pre.Namespace, pre, nsLabels))
			}
		}
	}
	preemptorPorts := podHostPorts(pre)
	set("preemptor/hostPort", len(preemptorPorts) > 0)
	for _, hp := range preemptorPorts {
		set("preemptor/hostPort-conflict", slices.ContainsFunc(activePorts, hp.conflicts))
	}
	for _, c := range pre.Spec.TopologySpreadConstraints {
		set("preemptor/spread-"+string(c.WhenUnsatisfiable), true)
		set("spread/topology-hostname", c.TopologyKey == v1.LabelHostname)
		set("spread/topology-zone", c.TopologyKey == v1.LabelTopologyZone)
		set("spread/minDomains", c.MinDomains != nil)
		set("spread/nodeAffinityPolicy", c.NodeAffinityPolicy != nil)
		set("spread/nodeTaintsPolicy", c.NodeTaintsPolicy != nil)
		set("spread/matchLabelKeys", len(c.MatchLabelKeys) > 0)
	}

	causeFeatures(s, nsLabels, set)
	groupFeatures(s, set)
	storageFeatures(s, set)

	// Disruption budgets.
	covered := map[string]int{}
	for _, pdb := range s.PDBs {
		set("pdb", true)
		set("pdb/disruptions-allowed-0", pdb.Status.DisruptionsAllowed == 0)
		set("pdb/disruptions-allowed-positive", pdb.Status.DisruptionsAllowed > 0)
		set("pdb/disrupted-pods", len(pdb.Status.DisruptedPods) > 0)
		set("pdb/empty-selector", pdb.Spec.Selector != nil && len(pdb.Spec.Selector.MatchLabels)+len(pdb.Spec.Selector.MatchExpressions) == 0)
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || pdb.Spec.Selector == nil {
			continue
		}
		own, other := false, false
		for _, p := range s.Pods {
			if p == pre || p.Spec.NodeName == "" || !sel.Matches(labels.Set(p.Labels)) {
				continue
			}
			if p.Namespace == pdb.Namespace {
				own = true
				covered[p.Namespace+"/"+p.Name]++
				set("pdb/overlapping", covered[p.Namespace+"/"+p.Name] > 1)
			} else {
				other = true
			}
		}
		set("pdb/other-namespace", other && !own)
	}

	s.selectorFeatures(set)

	var out []string
	for _, f := range features {
		if has[f.name] {
			out = append(out, f.name)
			delete(has, f.name)
		}
	}
	if len(has) > 0 {
		panic("gen: feature detected but not listed")
	}
	return out
}

func priority(p *v1.Pod) int32 {
	if p.Spec.Priority == nil {
		return 0
	}
	return *p.Spec.Priority
}

func hasLimits(p *v1.Pod) bool {
	for _, c := range p.Spec.Containers {
		if _, ok := c.Resources.Limits[v1.ResourceCPU]; ok {
			return true
		}
		if _, ok := c.Resources.Limits[v1.ResourceMemory]; ok {
			return true
		}
	}
	return false
}

// shapeFeatures reports init containers, sidecars, overhead and pod-level
// resources.
func shapeFeatures(p *v1.Pod, set func(string, bool)) {
	var ctrCPU int64
	for _, c := range p.Spec.Containers {
		ctrCPU += fromList(c.Resources.Requests).cpu
	}
	for i := range p.Spec.InitContainers {
		c := &p.Spec.InitContainers[i]
		if isSidecar(c) {
			set("pod/sidecar", true)
			set("pod/sidecar-hostPort", slices.ContainsFunc(c.Ports, func(cp v1.ContainerPort) bool { return cp.HostPort > 0 }))
			continue
		}
		set("pod/init-container", true)
		set("pod/init-container-larger", fromList(c.Resources.Requests).cpu > ctrCPU)
	}
	set("pod/overhead", len(p.Spec.Overhead) > 0)
	set("pod/pod-level-resources", p.Spec.Resources != nil && len(p.Spec.Resources.Requests) > 0)
}

// affinityFeatures reports the shapes of p's required pod (anti-)affinity
// terms.
func affinityFeatures(p *v1.Pod, set func(string, bool)) {
	a := p.Spec.Affinity
	if a == nil {
		return
	}
	var terms []v1.PodAffinityTerm
	if a.PodAffinity != nil {
		terms = append(terms, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
	}
	if a.PodAntiAffinity != nil {
		terms = append(terms, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
	}
	for _, t := range terms {
		set("podAffinity/topology-hostname", t.TopologyKey == v1.LabelHostname)
		set("podAffinity/topology-zone", t.TopologyKey == v1.LabelTopologyZone)
		set("podAffinity/matchExpressions", t.LabelSelector != nil && len(t.LabelSelector.MatchExpressions) > 0)
		set("podAffinity/namespaces", len(t.Namespaces) > 0)
		if ns := t.NamespaceSelector; ns != nil {
			empty := len(ns.MatchLabels)+len(ns.MatchExpressions) == 0
			set("podAffinity/namespaceSelector-empty", empty)
			set("podAffinity/namespaceSelector-labels", !empty)
		}
		set("podAffinity/matchLabelKeys", len(t.MatchLabelKeys)+len(t.MismatchLabelKeys) > 0)
	}
}

// termMatches reports whether a pod affinity term of a pod in ownerNS
// selects pod q.
func termMatches(t v1.PodAffinityTerm, ownerNS string, q *v1.Pod, nsLabels map[string]map[string]string) bool {
	inScope := len(t.Namespaces) == 0 && t.NamespaceSelector == nil && q.Namespace == ownerNS
	inScope = inScope || slices.Contains(t.Namespaces, q.Namespace)
	if t.NamespaceSelector != nil {
		if sel, err := metav1.LabelSelectorAsSelector(t.NamespaceSelector); err == nil && sel.Matches(labels.Set(nsLabels[q.Namespace])) {
			inScope = true
		}
	}
	if !inScope {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
	return err == nil && sel.Matches(labels.Set(q.Labels))
}

// causeFeatures reports pods around the preemptor that cause its constraints'
// violations: lower-priority running pods its required anti-affinity or
// DoNotSchedule spread constraints select, whose required anti-affinity
// selects it, or that hold one of its host ports; terminating pods its spread
// constraints select; affinity to pods that run in some zones only; and
// pending nominated pods with pod (anti-)affinity or host ports.
func causeFeatures(s *Scenario, nsLabels map[string]map[string]string, set func(string, bool)) {
	pre := s.Preemptor
	prePrio := priority(pre)
	var antiTerms, affTerms []v1.PodAffinityTerm
	if a := pre.Spec.Affinity; a != nil {
		if a.PodAntiAffinity != nil {
			antiTerms = a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		}
		if a.PodAffinity != nil {
			affTerms = a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		}
	}
	var spread []labels.Selector
	for _, c := range pre.Spec.TopologySpreadConstraints {
		if sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector); err == nil && c.WhenUnsatisfiable == v1.DoNotSchedule {
			spread = append(spread, sel)
		}
	}
	prePorts := podHostPorts(pre)
	nodeZone := map[string]string{}
	zones := map[string]bool{}
	for _, n := range s.Nodes {
		if z := n.Labels[v1.LabelTopologyZone]; z != "" {
			nodeZone[n.Name] = z
			zones[z] = true
		}
	}
	// zonesWith[i] are the zones holding a running pod that affinity term i
	// selects.
	zonesWith := make([]map[string]bool, len(affTerms))
	for i := range zonesWith {
		zonesWith[i] = map[string]bool{}
	}
	for _, p := range s.Pods {
		if p == pre || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		if p.Spec.NodeName == "" {
			if p.Status.NominatedNodeName != "" {
				a := p.Spec.Affinity
				set("pending/nominated-podAffinity", a != nil && a.PodAffinity != nil && len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0)
				set("pending/nominated-podAntiAffinity", a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0)
				set("pending/nominated-hostPort", len(podHostPorts(p)) > 0)
			}
			continue
		}
		matchesSpread := p.Namespace == pre.Namespace && slices.ContainsFunc(spread, func(sel labels.Selector) bool {
			return sel.Matches(labels.Set(p.Labels))
		})
		if p.DeletionTimestamp != nil {
			set("spread/terminating-matching-pod", matchesSpread)
			continue
		}
		for i, t := range affTerms {
			if z := nodeZone[p.Spec.NodeName]; z != "" && termMatches(t, pre.Namespace, p, nsLabels) {
				zonesWith[i][z] = true
			}
		}
		if priority(p) >= prePrio {
			continue
		}
		set("lower/matched-by-spread", matchesSpread)
		set("lower/matched-by-anti-affinity", slices.ContainsFunc(antiTerms, func(t v1.PodAffinityTerm) bool {
			return termMatches(t, pre.Namespace, p, nsLabels)
		}))
		if a := p.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
			set("lower/anti-affinity-to-preemptor", slices.ContainsFunc(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, func(t v1.PodAffinityTerm) bool {
				return termMatches(t, p.Namespace, pre, nsLabels)
			}))
		}
		for _, hp := range podHostPorts(p) {
			set("lower/hostPort-conflict", slices.ContainsFunc(prePorts, hp.conflicts))
		}
	}
	for i, t := range affTerms {
		set("preemptor/podAffinity-zone-local", t.TopologyKey == v1.LabelTopologyZone && len(zonesWith[i]) > 0 && len(zonesWith[i]) < len(zones))
	}
}

// groupFeatures reports the shapes of pod groups and of their pods.
func groupFeatures(s *Scenario, set func(string, bool)) {
	prePrio := priority(s.Preemptor)
	pgs := map[string]int32{}
	pgParent := map[string]string{}
	for _, pg := range s.PodGroups {
		key := pg.Namespace + "/" + pg.Name
		set("group/podgroup", true)
		dm := pg.Spec.DisruptionMode
		set("group/disruption-all", dm != nil && dm.All != nil)
		set("group/disruption-single", dm != nil && dm.Single != nil)
		set("group/disruption-unset", dm == nil)
		if pg.Spec.Priority != nil {
			pgs[key] = *pg.Spec.Priority
		}
		if p := pg.Spec.ParentCompositePodGroupName; p != nil {
			pgParent[key] = pg.Namespace + "/" + *p
		}
	}
	cpgs := map[string]bool{}
	for _, cpg := range s.CompositePodGroups {
		cpgs[cpg.Namespace+"/"+cpg.Name] = true
	}
	for _, cpg := range s.CompositePodGroups {
		set("group/compositepodgroup", true)
		dm := cpg.Spec.DisruptionMode
		set("group/composite-disruption-all", dm != nil && dm.All != nil)
		if p := cpg.Spec.ParentCompositePodGroupName; p != nil {
			set("group/nested-composite", true)
			set("group/missing-parent", !cpgs[cpg.Namespace+"/"+*p])
		}
	}
	for _, parent := range pgParent {
		set("group/missing-parent", !cpgs[parent])
	}
	nodes := map[string]map[string]bool{}
	for _, p := range s.Pods {
		sg := p.Spec.SchedulingGroup
		if sg == nil || sg.PodGroupName == nil {
			continue
		}
		key := p.Namespace + "/" + *sg.PodGroupName
		gp, exists := pgs[key]
		set("group/missing-podgroup", !exists)
		finished := p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
		set("group/pending-member", p.Spec.NodeName == "")
		set("group/finished-member", p.Spec.NodeName != "" && finished)
		if p.Spec.NodeName == "" || finished {
			continue
		}
		set("group/terminating-member", p.DeletionTimestamp != nil)
		set("group/member-without-start-time", p.Status.StartTime == nil)
		if exists {
			set("group/priority-differs-from-pods", gp != priority(p))
			set("group/priority-below-preemptor-pods-not", gp < prePrio && priority(p) >= prePrio)
			set("group/priority-not-below-preemptor-pods-below", gp >= prePrio && priority(p) < prePrio)
		}
		root := key
		if parent, ok := pgParent[key]; ok {
			root = parent
		}
		if nodes[root] == nil {
			nodes[root] = map[string]bool{}
		}
		nodes[root][p.Spec.NodeName] = true
		set("group/spans-nodes", len(nodes[root]) > 1)
	}
	for _, pdb := range s.PDBs {
		if sel := pdb.Spec.Selector; sel != nil && sel.MatchLabels[labelWorkload] != "" {
			set("group/pdb-over-members", true)
		}
	}
}

// selectorFeatures reports the default-spreading features: what selects the
// preemptor (as upstream's DefaultSelector finds it), and the references
// upstream does not follow.
func (s *Scenario) selectorFeatures(set func(string, bool)) {
	pre := s.Preemptor
	services := 0
	for _, svc := range s.Selectors.Services {
		set("defaultspread/service-without-selector", svc.Spec.Selector == nil)
		if svc.Namespace == pre.Namespace && svc.Spec.Selector != nil && labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pre.Labels)) {
			services++
		}
	}
	set("defaultspread/preemptor-service", services > 0)
	set("defaultspread/preemptor-services-merged", services > 1)
	selected := services > 0
	exists := map[string]labels.Selector{}
	for _, rs := range s.Selectors.ReplicaSets {
		sel, _ := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		exists["apps/v1/ReplicaSet/"+rs.Namespace+"/"+rs.Name] = sel
	}
	for _, ss := range s.Selectors.StatefulSets {
		sel, _ := metav1.LabelSelectorAsSelector(ss.Spec.Selector)
		exists["apps/v1/StatefulSet/"+ss.Namespace+"/"+ss.Name] = sel
	}
	for _, rc := range s.Selectors.ReplicationControllers {
		exists["v1/ReplicationController/"+rc.Namespace+"/"+rc.Name] = labels.SelectorFromSet(rc.Spec.Selector)
	}
	for _, p := range s.Pods {
		for _, ref := range p.OwnerReferences {
			if ref.Kind == "Pod" {
				continue
			}
			controller := ref.Controller != nil && *ref.Controller
			sel, ok := exists[ref.APIVersion+"/"+ref.Kind+"/"+p.Namespace+"/"+ref.Name]
			set("defaultspread/owner-not-followed", !controller || !ok && (ref.APIVersion != "apps/v1" && ref.APIVersion != "v1" || ref.Kind == "ReplicaSet" && ref.APIVersion == "v1"))
			set("defaultspread/controller-gone", controller && !ok && ref.APIVersion == "apps/v1")
			set("defaultspread/controller-not-matching", controller && ok && !sel.Matches(labels.Set(p.Labels)))
			if p == pre && controller && ok {
				selected = true
				set("defaultspread/preemptor-"+ref.Kind, true)
			}
		}
	}
	set("defaultspread/preemptor-selected", selected && len(pre.Spec.TopologySpreadConstraints) == 0)
}
