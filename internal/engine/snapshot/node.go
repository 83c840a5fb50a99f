package snapshot

import (
	"slices"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/node/topology"
)

// Node is a node of the snapshot with the pods bound to it.
type Node struct {
	// The fields that filtering reads for every node come first, so that
	// they share as few cache lines as possible.

	// Name is the node's name.
	Name string
	// Unschedulable and Taints are spec.unschedulable and spec.taints, kept
	// here so that filtering does not read the node object.
	Unschedulable bool
	// HasImages reports whether status.images lists any image.
	HasImages bool
	// Index is the node's position in Snapshot.Nodes.
	Index  int
	Taints []v1.Taint
	// Pods are the pods bound to the node that have not finished. The order
	// matters, since upstream sorts victims with an unstable sort: pods are
	// appended when added and a removed pod's slot takes the last pod, as in
	// upstream's NodeInfo.
	Pods []*Pod
	// Nominated are the pending pods nominated to the node.
	Nominated []*Pod
	// Allocatable is status.allocatable.
	Allocatable Resources
	// Requested is the sum of the requests of Pods.
	Requested Resources

	// Obj is the node as loaded.
	Obj *v1.Node
	// Zone is the node's zone key (region and zone labels), used to order
	// nodes the way the scheduler's node tree does.
	Zone string
	// NonZeroMilliCPU and NonZeroMemory sum the pods' non-zero requests
	// (see Pod.NonZeroMilliCPU), for scoring.
	NonZeroMilliCPU, NonZeroMemory int64
	// UsedPorts are the host ports bound by Pods.
	UsedPorts PortSet
	// PodsWithRequiredAntiAffinity are the pods of Pods that have required
	// anti-affinity terms; PodsWithAffinity those with any pod affinity or
	// anti-affinity.
	PodsWithRequiredAntiAffinity []*Pod
	PodsWithAffinity             []*Pod

	// order caches ImportanceOrder until Pods change; uses counts the
	// calls of CachedImportanceOrder since they changed.
	order atomic.Pointer[ImportanceOrder]
	uses  atomic.Int32
}

// AddNode adds a node. Adding a node that exists is an error.
func (s *Snapshot) AddNode(n *v1.Node) error {
	if err := s.addNode(n); err != nil {
		return err
	}
	s.relist()
	return nil
}

// AddNodes adds nodes as AddNode does, laying the node list out once for
// all of them: adding n nodes one by one lays it out n times, which is
// quadratic. A node that exists already is not added; the first such is
// the error returned, after the others are added.
func (s *Snapshot) AddNodes(nodes []*v1.Node) error {
	var first error
	for _, n := range nodes {
		if err := s.addNode(n); err != nil && first == nil {
			first = err
		}
	}
	s.relist()
	return first
}

// addNode is AddNode without laying the nodes out again, for callers that
// add many and call relist once.
func (s *Snapshot) addNode(n *v1.Node) error {
	if _, dup := s.nodesByName[n.Name]; dup {
		return duplicateObject("Node", "", n.Name, n)
	}
	node := &Node{Name: n.Name}
	node.setObj(n)
	if g, ok := s.ghosts[n.Name]; ok {
		// Pods that arrived before their node.
		delete(s.ghosts, n.Name)
		for _, p := range g.Pods {
			node.addPod(p)
		}
	}
	node.Nominated = s.nominated[n.Name]
	s.nodesByName[n.Name] = node
	if _, ok := s.nodesByZone[node.Zone]; !ok {
		s.zones = append(s.zones, node.Zone)
	}
	s.nodesByZone[node.Zone] = append(s.nodesByZone[node.Zone], node)
	return nil
}

// UpdateNode replaces a node's object, keeping its pods.
func (s *Snapshot) UpdateNode(n *v1.Node) error {
	node, ok := s.nodesByName[n.Name]
	if !ok {
		return s.AddNode(n)
	}
	oldZone := node.Zone
	node.setObj(n)
	s.forgetDomains()
	if zone := node.Zone; zone != oldZone {
		node.Zone = oldZone
		s.unlinkZone(node)
		node.Zone = zone
		if _, ok := s.nodesByZone[zone]; !ok {
			s.zones = append(s.zones, zone)
		}
		s.nodesByZone[zone] = append(s.nodesByZone[zone], node)
		s.relist()
	}
	s.resum(node)
	return nil
}

// setObj takes what the engine reads from the node object.
func (n *Node) setObj(obj *v1.Node) {
	n.Obj = obj
	n.Zone = topology.GetZoneKey(obj)
	n.Allocatable = NewResources(obj.Status.Allocatable)
	n.Unschedulable = obj.Spec.Unschedulable
	n.Taints = obj.Spec.Taints
	n.HasImages = len(obj.Status.Images) > 0
}

// RemoveNode removes a node. Its pods stay in the snapshot, off the node
// list, as they do in the scheduler's cache until they are deleted; a node
// of the same name added later gets them back.
func (s *Snapshot) RemoveNode(name string) {
	node, ok := s.nodesByName[name]
	if !ok {
		return
	}
	delete(s.nodesByName, name)
	s.unlinkZone(node)
	s.relist()
	if len(node.Pods) > 0 {
		g := s.ghost(name)
		for _, p := range node.Pods {
			g.addPod(p)
		}
	}
}

// ghost returns the holder of the pods bound to an unknown node.
func (s *Snapshot) ghost(name string) *Node {
	if s.ghosts == nil {
		s.ghosts = map[string]*Node{}
	}
	g, ok := s.ghosts[name]
	if !ok {
		g = &Node{Name: name, Index: -1}
		s.ghosts[name] = g
	}
	return g
}

func (s *Snapshot) unlinkZone(node *Node) {
	list := s.nodesByZone[node.Zone]
	if i := slices.Index(list, node); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(s.nodesByZone, node.Zone)
		s.zones = slices.DeleteFunc(s.zones, func(z string) bool { return z == node.Zone })
	} else {
		s.nodesByZone[node.Zone] = list
	}
}

// relist lays nodes out as the scheduler's node tree lists them.
func (s *Snapshot) relist() {
	s.forgetDomains()
	s.Nodes = s.Nodes[:0]
	if s.namesShared.Swap(false) {
		// Someone holds the old names: leave them as they are.
		s.nodeNames = make([]string, 0, len(s.nodesByName))
	}
	s.nodeNames = s.nodeNames[:0]
	for i := 0; len(s.Nodes) < len(s.nodesByName); i++ {
		for _, z := range s.zones {
			if list := s.nodesByZone[z]; i < len(list) {
				list[i].Index = len(s.Nodes)
				s.Nodes = append(s.Nodes, list[i])
				s.nodeNames = append(s.nodeNames, list[i].Name)
			}
		}
	}
	s.sums, s.numRequiredAntiAffinity = s.sums[:0], 0
	for _, n := range s.Nodes {
		s.sums = append(s.sums, sumsOf(n))
		s.numRequiredAntiAffinity += len(n.PodsWithRequiredAntiAffinity)
	}
}

// NodeNames returns the names of Nodes, in the same order: reading a name
// there does not load the node. The slice stays as it is when nodes are
// added or removed later; the caller must not modify it.
func (s *Snapshot) NodeNames() []string {
	s.namesShared.Store(true)
	return s.nodeNames
}
