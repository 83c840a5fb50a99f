package snapshot

// NodeSums are what filtering on resources alone reads of a node, kept for
// all nodes side by side (Snapshot.Sums, by node index): a pass over the
// cluster then streams through one array instead of loading every node.
type NodeSums struct {
	// Allocatable is the node's allocatable (Pods: the pods it allows);
	// Requested what its pods request (Pods: len(Node.Pods)).
	Allocatable, Requested Usage
	// NumRequiredAntiAffinity is len(Node.PodsWithRequiredAntiAffinity).
	NumRequiredAntiAffinity int32
	// Plain reports that the node is schedulable, has no taints and no
	// nominated pods: a pod's fit there depends on these sums alone (and on
	// scalar resources, which NodeSums leaves out).
	Plain bool
}

// Sums returns the sums of Nodes, in the same order. The caller must not
// modify them; they change with the snapshot.
func (s *Snapshot) Sums() []NodeSums { return s.sums }

// sumsOf computes n's sums.
func sumsOf(n *Node) NodeSums {
	return NodeSums{
		Allocatable:             n.Allocatable.Usage(n.Allocatable.AllowedPods),
		Requested:               n.Requested.Usage(int64(len(n.Pods))),
		NumRequiredAntiAffinity: int32(len(n.PodsWithRequiredAntiAffinity)),
		Plain:                   !n.Unschedulable && len(n.Taints) == 0 && len(n.Nominated) == 0,
	}
}

// resum refreshes the sums of n after a change, when n is listed.
func (s *Snapshot) resum(n *Node) {
	if n != nil && n.Index >= 0 && n.Index < len(s.sums) && s.Nodes[n.Index] == n {
		old := &s.sums[n.Index]
		s.numRequiredAntiAffinity -= int(old.NumRequiredAntiAffinity)
		*old = sumsOf(n)
		s.numRequiredAntiAffinity += int(old.NumRequiredAntiAffinity)
	}
}

// NumRequiredAntiAffinity returns how many pods of the listed nodes have
// required pod anti-affinity terms.
func (s *Snapshot) NumRequiredAntiAffinity() int { return s.numRequiredAntiAffinity }
