package scheduler

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/reprieve/reprieve/internal/engine/filter"
)

// NodeAction is a kind of node event, as upstream's framework.ActionType
// for the node resource: a bit each, so that a plugin registers a set.
type NodeAction uint

// The node events upstream's queue tells apart (NodeAdd, NodeDelete and
// the fwk.UpdateNode* action types).
const (
	NodeAdd NodeAction = 1 << iota
	NodeDelete
	NodeUpdateAllocatable
	NodeUpdateLabel
	NodeUpdateTaint
	NodeUpdateCondition
	NodeUpdateAnnotation
	NodeUpdatePreemptionPolicy
)

// Label is the event label of a node event in upstream's
// scheduler_queue_incoming_pods_total, its ClusterEvent.Label(): the
// resource followed by the action type's name.
func (a NodeAction) Label() string {
	switch a {
	case NodeAdd:
		return "NodeAdd"
	case NodeDelete:
		return "NodeDelete"
	case NodeUpdateAllocatable:
		return "NodeUpdateNodeAllocatable"
	case NodeUpdateLabel:
		return "NodeUpdateNodeLabel"
	case NodeUpdateTaint:
		return "NodeUpdateNodeTaint"
	case NodeUpdateCondition:
		return "NodeUpdateNodeCondition"
	case NodeUpdateAnnotation:
		return "NodeUpdateNodeAnnotation"
	case NodeUpdatePreemptionPolicy:
		return "NodeUpdateNodePreemptionPolicy"
	}
	return ""
}

// NodeUpdateEvents names what a node update changed, as upstream's
// NodeSchedulingPropertiesChange does, in its order: the node becoming
// schedulable (an UpdateNodeTaint, as upstream files it), allocatable,
// labels, taints, conditions (types and statuses), annotations and the
// pod preemption policy. An update that changes none of these is no event.
// (Upstream's NodeDeclaredFeatures change is left out: reprieve does not
// model the plugin.)
func NodeUpdateEvents(old, node *v1.Node) []NodeAction {
	var out []NodeAction
	if old.Spec.Unschedulable != node.Spec.Unschedulable && !node.Spec.Unschedulable {
		out = append(out, NodeUpdateTaint)
	}
	if !equality.Semantic.DeepEqual(old.Status.Allocatable, node.Status.Allocatable) {
		out = append(out, NodeUpdateAllocatable)
	}
	if !equality.Semantic.DeepEqual(old.GetLabels(), node.GetLabels()) {
		out = append(out, NodeUpdateLabel)
	}
	if !equality.Semantic.DeepEqual(old.Spec.Taints, node.Spec.Taints) {
		out = append(out, NodeUpdateTaint)
	}
	if !equality.Semantic.DeepEqual(conditionStatuses(old), conditionStatuses(node)) {
		out = append(out, NodeUpdateCondition)
	}
	if !equality.Semantic.DeepEqual(old.GetAnnotations(), node.GetAnnotations()) {
		out = append(out, NodeUpdateAnnotation)
	}
	if !equality.Semantic.DeepEqual(old.Spec.PodPreemptionPolicy, node.Spec.PodPreemptionPolicy) {
		out = append(out, NodeUpdatePreemptionPolicy)
	}
	return out
}

func conditionStatuses(n *v1.Node) map[v1.NodeConditionType]v1.ConditionStatus {
	out := make(map[v1.NodeConditionType]v1.ConditionStatus, len(n.Status.Conditions))
	for _, c := range n.Status.Conditions {
		out[c.Type] = c.Status
	}
	return out
}

// nodeHint is one plugin's queueing hint for node events: the actions it
// registers for (NodeAdd for a new node) and whether such an event may
// make a pod it rejected schedulable. old is nil for a new node.
type nodeHint struct {
	actions NodeAction
	queue   func(pod *v1.Pod, old, node *v1.Node, env hintEnv) bool
}

// hintEnv is what the hints read besides the pod and the nodes.
type hintEnv struct {
	// added is the profile's NodeAffinity addedAffinity.
	added *nodeaffinity.NodeSelector
	// spreadKeys returns the topology keys of the pod's DoNotSchedule
	// spread constraints as upstream's getConstraints takes them (its own,
	// or the profile's defaults with its default selector); ok is false
	// when they cannot be worked out (upstream then queues the pod).
	spreadKeys func() (keys []string, ok bool)
}

// nodeHints are the default plugins' node-event registrations and hints in
// kube-scheduler v1.37.2 (EventsToRegister with queueing hints, on by
// default). NodeName and NodePorts register node additions without a hint
// (always Queue). A rejecting plugin not listed here (the volume plugins,
// DynamicResources) is taken to say Queue on every node event.
func nodeHints(plugin string) (nodeHint, bool) {
	switch plugin {
	case filter.NodeName, filter.NodePorts:
		return nodeHint{NodeAdd, func(*v1.Pod, *v1.Node, *v1.Node, hintEnv) bool { return true }}, true
	case filter.NodeResourcesFit:
		return nodeHint{NodeAdd | NodeUpdateAllocatable, fitHint}, true
	case filter.NodeAffinity:
		return nodeHint{NodeAdd | NodeUpdateLabel, nodeAffinityHint}, true
	case filter.TaintToleration:
		return nodeHint{NodeAdd | NodeUpdateTaint, taintHint}, true
	case filter.NodeUnschedulable:
		return nodeHint{NodeAdd | NodeUpdateTaint, func(_ *v1.Pod, old, node *v1.Node, _ hintEnv) bool {
			return old == nil && !node.Spec.Unschedulable || old != nil && old.Spec.Unschedulable && !node.Spec.Unschedulable
		}}, true
	case filter.InterPodAffinity:
		return nodeHint{NodeAdd | NodeUpdateLabel, interPodAffinityHint}, true
	case filter.PodTopologySpread:
		return nodeHint{NodeAdd | NodeDelete | NodeUpdateLabel | NodeUpdateTaint, spreadHint}, true
	}
	return nodeHint{}, false
}

// worthRequeuing is upstream's isPodWorthRequeuing for a node event: a pod
// no plugin rejected (an error) always moves; otherwise it moves when one
// of its rejecting plugins registers the action and its hint says Queue.
func worthRequeuing(qp *queuedPod, action NodeAction, old, node *v1.Node, env hintEnv) bool {
	if len(qp.rejectors) == 0 {
		return true
	}
	for _, p := range qp.rejectors {
		h, ok := nodeHints(p)
		if !ok {
			return true
		}
		if h.actions&action != 0 && h.queue(qp.Pod, old, node, env) {
			return true
		}
	}
	return false
}

// fitHint is NodeResourcesFit's: the pod fits the node's allocatable (its
// pods ignored) and, for an update, the allocatable of a resource it
// requests (or of pods) grew.
func fitHint(pod *v1.Pod, old, node *v1.Node, _ hintEnv) bool {
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	if !fitsAllocatable(req, node) {
		return false
	}
	if old == nil {
		return true
	}
	if greater(node.Status.Allocatable, old.Status.Allocatable, v1.ResourcePods) {
		return true
	}
	for name, q := range req {
		if !q.IsZero() && greater(node.Status.Allocatable, old.Status.Allocatable, name) {
			return true
		}
	}
	return false
}

func greater(a, b v1.ResourceList, name v1.ResourceName) bool {
	qa, qb := a[name], b[name]
	return qa.Cmp(qb) > 0
}

// fitsAllocatable reports whether the requests fit an empty node: room for
// one pod and every requested amount within allocatable.
func fitsAllocatable(req v1.ResourceList, node *v1.Node) bool {
	alloc := node.Status.Allocatable
	if pods := alloc[v1.ResourcePods]; pods.Cmp(resource.MustParse("1")) < 0 {
		return false
	}
	for name, q := range req {
		if q.IsZero() {
			continue
		}
		if a := alloc[name]; a.Cmp(q) < 0 {
			return false
		}
	}
	return true
}

func nodeAffinityHint(pod *v1.Pod, old, node *v1.Node, env hintEnv) bool {
	if added := env.added; added != nil && !added.Match(node) {
		return false
	}
	req := nodeaffinity.GetRequiredNodeAffinity(pod)
	if ok, err := req.Match(node); err != nil {
		return true
	} else if !ok {
		return false
	}
	if old == nil {
		return true
	}
	was, err := req.Match(old)
	return err != nil || !was
}

func taintHint(pod *v1.Pod, old, node *v1.Node, _ hintEnv) bool {
	logger := klog.Background()
	wasUntolerated := true
	if old != nil {
		_, wasUntolerated = corev1helpers.FindMatchingUntoleratedTaint(logger, old.Spec.Taints, pod.Spec.Tolerations, filter.DoNotScheduleTaint, false)
	}
	_, isUntolerated := corev1helpers.FindMatchingUntoleratedTaint(logger, node.Spec.Taints, pod.Spec.Tolerations, filter.DoNotScheduleTaint, false)
	return wasUntolerated && !isUntolerated
}

// interPodAffinityHint is InterPodAffinity's: for an affinity term, a node
// that gains its topology key or changes its value; for an anti-affinity
// term, any new node, or a node that loses the key or changes its value.
func interPodAffinityHint(pod *v1.Pod, old, node *v1.Node, _ hintEnv) bool {
	a := pod.Spec.Affinity
	if a == nil {
		return false
	}
	if a.PodAffinity != nil {
		for _, t := range a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			nv, nok := node.Labels[t.TopologyKey]
			if old == nil {
				if nok {
					return true
				}
				continue
			}
			ov, ook := old.Labels[t.TopologyKey]
			if !ook && nok || ook && nok && ov != nv {
				return true
			}
		}
	}
	if a.PodAntiAffinity != nil {
		for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			if old == nil {
				return true
			}
			ov, ook := old.Labels[t.TopologyKey]
			nv, nok := node.Labels[t.TopologyKey]
			if ook && !nok || ook && nok && ov != nv {
				return true
			}
		}
	}
	return false
}

// spreadHint is PodTopologySpread's for a node added or updated: a node
// that has every topology key of the pod's DoNotSchedule constraints (and
// did not, or had other values for them or other taints), or one that lost
// them.
func spreadHint(_ *v1.Pod, old, node *v1.Node, env hintEnv) bool {
	keys, ok := env.spreadKeys()
	if !ok {
		return true
	}
	matches := func(n *v1.Node) bool {
		for _, k := range keys {
			if _, ok := n.Labels[k]; !ok {
				return false
			}
		}
		return true
	}
	nm := matches(node)
	if old == nil {
		return nm
	}
	om := matches(old)
	if om != nm {
		return true
	}
	if !nm {
		return false
	}
	for _, k := range keys {
		if old.Labels[k] != node.Labels[k] {
			return true
		}
	}
	return !equality.Semantic.DeepEqual(old.Spec.Taints, node.Spec.Taints)
}
