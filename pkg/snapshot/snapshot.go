// Package snapshot holds the cluster state the preemption engine decides on:
// nodes with the pods bound to them, pending and nominated pods, disruption
// budgets, priority classes and namespaces, built once from plain Kubernetes
// objects. Everything derived per pod or per node (priorities, requests,
// ports, affinity terms, per-node sums) is computed at build time, so an
// evaluation never deep-copies the cluster: a dry run on a node works on a
// small overlay of that node's numbers.
package snapshot

import (
	"cmp"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/node/topology"
)

// Built-in priority classes that every cluster has, with their values.
const (
	SystemClusterCritical      = "system-cluster-critical"
	SystemNodeCritical         = "system-node-critical"
	systemClusterCriticalValue = 2000000000
	systemNodeCriticalValue    = 2000001000
)

// Objects are the Kubernetes objects a snapshot is built from.
type Objects struct {
	Nodes           []*v1.Node
	Pods            []*v1.Pod
	PDBs            []*policyv1.PodDisruptionBudget
	PriorityClasses []*schedulingv1.PriorityClass
	Namespaces      []*v1.Namespace
}

// Node is a node of the snapshot with the pods bound to it.
type Node struct {
	// Obj is the node as loaded.
	Obj *v1.Node
	// Name is the node's name.
	Name string
	// Zone is the node's zone key (region and zone labels), used to order
	// nodes the way the scheduler's node tree does.
	Zone string
	// Allocatable is status.allocatable.
	Allocatable Resources
	// Pods are the pods bound to the node that have not finished, in load
	// order. The order matters: upstream sorts victims with an unstable sort.
	Pods []*Pod
	// Requested is the sum of the requests of Pods.
	Requested Resources
	// UsedPorts are the host ports bound by Pods.
	UsedPorts PortSet
	// PodsWithRequiredAntiAffinity are the pods of Pods that have required
	// anti-affinity terms, in the same order.
	PodsWithRequiredAntiAffinity []*Pod
	// Index is the node's position in Snapshot.Nodes.
	Index int
}

// Snapshot is an immutable view of a cluster.
type Snapshot struct {
	// Nodes in the order the scheduler lists them: round-robin over zones in
	// order of first appearance, nodes of a zone in load order.
	Nodes []*Node
	// Pods are all pods in load order, bound and pending, finished ones included.
	Pods []*Pod
	// PDBs sorted by namespace and name.
	PDBs []*policyv1.PodDisruptionBudget
	// PriorityClasses in load order.
	PriorityClasses []*schedulingv1.PriorityClass

	nodesByName   map[string]*Node
	podsByKey     map[string]*Pod
	nominated     map[string][]*Pod
	namespaces    map[string]*v1.Namespace
	classesByName map[string]*schedulingv1.PriorityClass
	defaultClass  *schedulingv1.PriorityClass
}

// ObjectError is a problem with one object of the input, naming the object
// and the field at fault.
type ObjectError struct {
	// Kind, Namespace and Name identify the object.
	Kind, Namespace, Name string
	// Field is the JSON path of the offending field, e.g. "spec.nodeName".
	Field string
	// Detail says what is wrong.
	Detail string
	// Obj is the offending object, so that a loader can say where it came from.
	Obj any
}

func (e *ObjectError) Error() string {
	id := e.Name
	if e.Namespace != "" {
		id = e.Namespace + "/" + e.Name
	}
	if id == "" {
		id = "(unnamed)"
	}
	if e.Field == "" {
		return fmt.Sprintf("%s %s: %s", e.Kind, id, e.Detail)
	}
	return fmt.Sprintf("%s %s: %s: %s", e.Kind, id, e.Field, e.Detail)
}

// New builds a snapshot. It rejects duplicate objects, pods bound to nodes
// that do not exist, pods naming unknown priority classes, and unparsable
// selectors, each with an *ObjectError.
func New(objs Objects) (*Snapshot, error) {
	s := &Snapshot{
		nodesByName:   make(map[string]*Node, len(objs.Nodes)),
		podsByKey:     make(map[string]*Pod, len(objs.Pods)),
		nominated:     map[string][]*Pod{},
		namespaces:    map[string]*v1.Namespace{},
		classesByName: map[string]*schedulingv1.PriorityClass{},
	}
	for _, ns := range objs.Namespaces {
		if _, dup := s.namespaces[ns.Name]; dup {
			return nil, &ObjectError{Kind: "Namespace", Name: ns.Name, Field: "metadata.name", Detail: "duplicate object", Obj: ns}
		}
		s.namespaces[ns.Name] = ns
	}
	for _, pc := range objs.PriorityClasses {
		if _, dup := s.classesByName[pc.Name]; dup {
			return nil, &ObjectError{Kind: "PriorityClass", Name: pc.Name, Field: "metadata.name", Detail: "duplicate object", Obj: pc}
		}
		s.classesByName[pc.Name] = pc
		s.PriorityClasses = append(s.PriorityClasses, pc)
		if pc.GlobalDefault && (s.defaultClass == nil || pc.Value < s.defaultClass.Value) {
			s.defaultClass = pc
		}
	}
	if err := s.addNodes(objs.Nodes); err != nil {
		return nil, err
	}
	if err := s.addPods(objs.Pods); err != nil {
		return nil, err
	}
	if err := s.addPDBs(objs.PDBs); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Snapshot) addNodes(nodes []*v1.Node) error {
	var zones []string
	byZone := map[string][]*Node{}
	for _, n := range nodes {
		if _, dup := s.nodesByName[n.Name]; dup {
			return &ObjectError{Kind: "Node", Name: n.Name, Field: "metadata.name", Detail: "duplicate object", Obj: n}
		}
		node := &Node{Obj: n, Name: n.Name, Zone: topology.GetZoneKey(n), Allocatable: NewResources(n.Status.Allocatable)}
		s.nodesByName[n.Name] = node
		if _, ok := byZone[node.Zone]; !ok {
			zones = append(zones, node.Zone)
		}
		byZone[node.Zone] = append(byZone[node.Zone], node)
	}
	// Interleave zones as the scheduler's node tree does.
	for i := 0; len(s.Nodes) < len(nodes); i++ {
		for _, z := range zones {
			if i < len(byZone[z]) {
				n := byZone[z][i]
				n.Index = len(s.Nodes)
				s.Nodes = append(s.Nodes, n)
			}
		}
	}
	return nil
}

func (s *Snapshot) addPods(pods []*v1.Pod) error {
	for i, obj := range pods {
		key := obj.Namespace + "/" + obj.Name
		if _, dup := s.podsByKey[key]; dup {
			return &ObjectError{Kind: "Pod", Namespace: obj.Namespace, Name: obj.Name, Field: "metadata.name", Detail: "duplicate object", Obj: obj}
		}
		p, err := s.newPod(obj, i)
		if err != nil {
			return err
		}
		s.podsByKey[key] = p
		s.Pods = append(s.Pods, p)
		if p.Finished() {
			continue
		}
		if name := obj.Spec.NodeName; name != "" {
			node, ok := s.nodesByName[name]
			if !ok {
				return &ObjectError{Kind: "Pod", Namespace: obj.Namespace, Name: obj.Name, Field: "spec.nodeName",
					Detail: fmt.Sprintf("node %q does not exist in the snapshot", name), Obj: obj}
			}
			node.addPod(p)
			continue
		}
		if nnn := obj.Status.NominatedNodeName; nnn != "" && obj.DeletionTimestamp == nil {
			s.nominated[nnn] = append(s.nominated[nnn], p)
		}
	}
	return nil
}

func (n *Node) addPod(p *Pod) {
	n.Pods = append(n.Pods, p)
	n.Requested.Add(&p.Requests, 1)
	n.UsedPorts.AddPod(p)
	if len(p.RequiredAntiAffinity) > 0 {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, p)
	}
}

func (s *Snapshot) addPDBs(pdbs []*policyv1.PodDisruptionBudget) error {
	seen := map[string]bool{}
	for _, pdb := range pdbs {
		key := pdb.Namespace + "/" + pdb.Name
		if seen[key] {
			return &ObjectError{Kind: "PodDisruptionBudget", Namespace: pdb.Namespace, Name: pdb.Name, Field: "metadata.name", Detail: "duplicate object", Obj: pdb}
		}
		seen[key] = true
		if _, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err != nil {
			return &ObjectError{Kind: "PodDisruptionBudget", Namespace: pdb.Namespace, Name: pdb.Name, Field: "spec.selector", Detail: err.Error(), Obj: pdb}
		}
		s.PDBs = append(s.PDBs, pdb)
	}
	slices.SortFunc(s.PDBs, func(a, b *policyv1.PodDisruptionBudget) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return nil
}

// ResolvePriority returns pod's priority and preemption policy as the
// Priority admission plugin would set them: spec values when present, else
// those of the named PriorityClass (the built-in system classes are always
// known), else those of the globalDefault class with the lowest value, else
// 0 and PreemptLowerPriority. An unknown class name is an *ObjectError.
func (s *Snapshot) ResolvePriority(pod *v1.Pod) (int32, v1.PreemptionPolicy, error) {
	var prio int32
	policy := v1.PreemptLowerPriority
	switch name := pod.Spec.PriorityClassName; {
	case name != "":
		if pc, ok := s.classesByName[name]; ok {
			prio = pc.Value
			if pc.PreemptionPolicy != nil {
				policy = *pc.PreemptionPolicy
			}
		} else if name == SystemClusterCritical {
			prio = systemClusterCriticalValue
		} else if name == SystemNodeCritical {
			prio = systemNodeCriticalValue
		} else if pod.Spec.Priority == nil {
			return 0, "", &ObjectError{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, Field: "spec.priorityClassName",
				Detail: fmt.Sprintf("PriorityClass %q not found", name), Obj: pod}
		}
	case s.defaultClass != nil:
		prio = s.defaultClass.Value
		if s.defaultClass.PreemptionPolicy != nil {
			policy = *s.defaultClass.PreemptionPolicy
		}
	}
	if pod.Spec.Priority != nil {
		prio = *pod.Spec.Priority
	}
	if pod.Spec.PreemptionPolicy != nil {
		policy = *pod.Spec.PreemptionPolicy
	}
	return prio, policy, nil
}

// NewPod prepares a pod that is not part of the snapshot, such as a
// preemptor read from a file, resolving its priority with the snapshot's
// priority classes.
func (s *Snapshot) NewPod(obj *v1.Pod) (*Pod, error) {
	return s.newPod(obj, -1)
}

func (s *Snapshot) newPod(obj *v1.Pod, seq int) (*Pod, error) {
	prio, policy, err := s.ResolvePriority(obj)
	if err != nil {
		return nil, err
	}
	p, err := newPod(obj, prio, policy, seq)
	if err != nil {
		return nil, &ObjectError{Kind: "Pod", Namespace: obj.Namespace, Name: obj.Name, Detail: err.Error(), Obj: obj}
	}
	return p, nil
}

// Node returns the named node, or nil.
func (s *Snapshot) Node(name string) *Node { return s.nodesByName[name] }

// Pod returns the pod "namespace/name", or nil.
func (s *Snapshot) Pod(key string) *Pod { return s.podsByKey[key] }

// NominatedPods returns the pending pods nominated to the named node, in load order.
func (s *Snapshot) NominatedPods(node string) []*Pod { return s.nominated[node] }

// NamespaceLabels returns the labels of the named namespace, or nil when the
// snapshot does not have it (the scheduler then assumes no labels).
func (s *Snapshot) NamespaceLabels(name string) labels.Set {
	if ns, ok := s.namespaces[name]; ok {
		return labels.Merge(ns.Labels, nil)
	}
	return nil
}

// NamespacesMatching returns the names of the snapshot's namespaces selected by sel.
func (s *Snapshot) NamespacesMatching(sel labels.Selector) []string {
	var out []string
	for name, ns := range s.namespaces {
		if sel.Matches(labels.Set(ns.Labels)) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
