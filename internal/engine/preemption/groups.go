package preemption

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// maxTreeDepth is upstream's WorkloadMaxTreeDepth: how many levels of a
// pod-group hierarchy the scheduler walks, up or down.
const maxTreeDepth = 4

// UnitKind is upstream's entity type of a preemption unit.
type UnitKind int

const (
	// UnitPod is a pod that belongs to no pod group. It is the zero value
	// on purpose: without the GenericWorkload gate every unit is one.
	UnitPod UnitKind = iota
	// UnitPodGroup is a PodGroup evicted whole, or, as upstream types it,
	// a single pod of a pod group that may be disrupted pod by pod.
	UnitPodGroup
	// UnitCompositePodGroup is a CompositePodGroup evicted whole.
	UnitCompositePodGroup
)

// String returns upstream's name of the entity type.
func (k UnitKind) String() string {
	switch k {
	case UnitPod:
		return "pod"
	case UnitPodGroup:
		return "podgroup"
	case UnitCompositePodGroup:
		return "compositepodgroup"
	}
	return fmt.Sprintf("UnitKind(%d)", int(k))
}

// rank is the unit type's weight in MoreImportantUnit.
func (k UnitKind) rank() int {
	switch k {
	case UnitCompositePodGroup:
		return 3
	case UnitPodGroup:
		return 2
	}
	return 1
}

// Unit is a preemption unit, what upstream calls a Victim: a single pod,
// or, with the GenericWorkload gate, a whole pod group — the highest
// ancestor group of a pod whose disruption mode is All, with all of that
// group's scheduled pods on every node. A unit is evicted or reprieved
// whole.
type Unit struct {
	// Kind is upstream's entity type of the unit, which the importance
	// order weighs.
	Kind UnitKind
	// Group is the group evicted whole, nil for a single pod.
	Group *snapshot.Group
	// Members are the unit's pods with their nodes: one for a single pod.
	Members []*Victim
	// Priority is the unit's priority: a pod's own priority without the
	// GenericWorkload gate, else the priority of the root group of the
	// pod's hierarchy (the pod's own when it has no group object).
	Priority int32
	// Start is the earliest start time of the members, in Unix
	// nanoseconds (see Victim.Start).
	Start int64
	// Nodes are the nodes the members run on, in snapshot order.
	Nodes []*snapshot.Node
}

// IsGroup reports whether the unit affects a pod group (upstream's
// Victim.IsGroup): a group evicted whole, or a pod of a pod group.
func (u *Unit) IsGroup() bool { return u.Kind != UnitPod }

// hierarchy answers upstream's pod-group questions over a snapshot under
// the given features: a pod's effective priority (GetPodPriority), its
// highest ancestor with disruption mode All (getHighestAllAncestor) and a
// group's scheduled pods (searchCrossNodesVictimPods).
type hierarchy struct {
	snap      *snapshot.Snapshot
	composite bool
}

// traverseUp is upstream's TraverseHierarchyUp from the PodGroup pgName:
// it visits the group and its ancestors, at most maxTreeDepth of them,
// stopping at a group that does not exist or was already visited.
func (h hierarchy) traverseUp(ns, pgName string, visit func(*snapshot.Group)) {
	kind, name := snapshot.KindPodGroup, pgName
	var visited [maxTreeDepth]*snapshot.Group
	for depth := range maxTreeDepth {
		var g *snapshot.Group
		if kind == snapshot.KindPodGroup {
			g = h.snap.PodGroup(ns, name)
		} else {
			g = h.snap.CompositePodGroup(ns, name)
		}
		if g == nil {
			return
		}
		for _, v := range visited[:depth] {
			if v == g {
				return
			}
		}
		visited[depth] = g
		visit(g)
		if g.Parent == "" {
			return
		}
		kind, name = snapshot.KindCompositePodGroup, g.Parent
	}
}

// priority is upstream's GetPodPriority: the pod's priority, or, for a pod
// of a pod group, the priority of the highest group of its hierarchy that
// exists (only its PodGroup without CompositePodGroup).
func (h hierarchy) priority(p *snapshot.Pod) int32 {
	name := p.PodGroupName()
	if name == "" {
		return p.Priority
	}
	if !h.composite {
		if g := h.snap.PodGroup(p.Namespace(), name); g != nil {
			return g.Priority
		}
		return p.Priority
	}
	var last *snapshot.Group
	h.traverseUp(p.Namespace(), name, func(g *snapshot.Group) { last = g })
	if last != nil {
		return last.Priority
	}
	return p.Priority
}

// highestAll is upstream's getHighestAllAncestor: the highest group of the
// pod's hierarchy whose disruption mode is All, or nil.
func (h hierarchy) highestAll(p *snapshot.Pod) *snapshot.Group {
	name := p.PodGroupName()
	if name == "" {
		return nil
	}
	if !h.composite {
		if g := h.snap.PodGroup(p.Namespace(), name); g != nil && g.DisruptAll {
			return g
		}
		return nil
	}
	var all *snapshot.Group
	h.traverseUp(p.Namespace(), name, func(g *snapshot.Group) {
		if g.DisruptAll {
			all = g
		}
	})
	return all
}

// scheduledPods returns the scheduled pods of the leaf PodGroups under
// group g, as upstream's searchCrossNodesVictimPods collects them: g's own
// without CompositePodGroup, else those of every PodGroup reached walking
// down from g, at most maxTreeDepth levels (deeper groups are skipped, as
// upstream logs and skips them). Upstream walks children and pods in map
// order; here children are in kind and name order and pods in the order
// they were bound.
func (h hierarchy) scheduledPods(g *snapshot.Group) []*snapshot.Pod {
	if !h.composite {
		return h.snap.ScheduledPods(g.Namespace, g.Name)
	}
	var out []*snapshot.Pod
	var walk func(g *snapshot.Group, depth int)
	walk = func(g *snapshot.Group, depth int) {
		if depth >= maxTreeDepth {
			return
		}
		if g.Kind == snapshot.KindCompositePodGroup {
			for _, c := range h.snap.GroupChildren(g.Namespace, g.Name) {
				walk(c, depth+1)
			}
			return
		}
		out = append(out, h.snap.ScheduledPods(g.Namespace, g.Name)...)
	}
	walk(g, 0)
	return out
}

// groupIndex holds, for one evaluation, what the hierarchy says about every
// scheduled pod of a pod group: computed once before the dry run, read by
// every node's evaluation.
type groupIndex struct {
	h hierarchy
	// pods maps a scheduled pod with a scheduling group to its highest
	// All ancestor (nil if none) and effective priority.
	pods map[*snapshot.Pod]podGroupInfo
	// members are the scheduled pods and their nodes of each group evicted
	// whole; err is set when a member's node is not in the snapshot.
	members map[*snapshot.Group]groupMembers
	// sem are the release's switches the units' order reads.
	sem Semantics
}

type podGroupInfo struct {
	all      *snapshot.Group
	priority int32
}

type groupMembers struct {
	pods  []*snapshot.Pod
	nodes []*snapshot.Node // the node of each pod
	// span are the distinct nodes, in snapshot order.
	span []*snapshot.Node
	err  error
}

func newGroupIndex(snap *snapshot.Snapshot, f Features) *groupIndex {
	idx := &groupIndex{
		h:       hierarchy{snap: snap, composite: f.Composite()},
		pods:    map[*snapshot.Pod]podGroupInfo{},
		members: map[*snapshot.Group]groupMembers{},
		sem:     f.Semantics,
	}
	for _, n := range snap.Nodes {
		for _, p := range n.Pods {
			if !p.HasSchedulingGroup() {
				continue
			}
			info := podGroupInfo{all: idx.h.highestAll(p), priority: idx.h.priority(p)}
			idx.pods[p] = info
			if info.all != nil {
				if _, ok := idx.members[info.all]; !ok {
					idx.members[info.all] = idx.collect(info.all)
				}
			}
		}
	}
	return idx
}

func (idx *groupIndex) collect(g *snapshot.Group) groupMembers {
	var m groupMembers
	m.pods = idx.h.scheduledPods(g)
	m.nodes = make([]*snapshot.Node, len(m.pods))
	seen := map[*snapshot.Node]bool{}
	for i, p := range m.pods {
		n := idx.h.snap.Node(p.NodeName())
		if n == nil {
			m.err = fmt.Errorf("failed to get node info for node %q from snapshot: nodeinfo not found for node name %q", p.NodeName(), p.NodeName())
			return m
		}
		m.nodes[i] = n
		if !seen[n] {
			seen[n] = true
			m.span = append(m.span, n)
		}
	}
	slices.SortFunc(m.span, func(a, b *snapshot.Node) int { return cmp.Compare(a.Index, b.Index) })
	return m
}

// unitsOn is upstream's GetVictimsOnNode with the GenericWorkload gate
// (getCrossNodesVictims over one node): one unit per pod of the node, in
// the node's pod order, except that the pods of a group evicted whole make
// one unit, created at the first of them. Only the units with a priority
// below maxPriority are listed (the others are never victims), but all
// count for the start-time fallback: a pod without a start time counts as
// starting at now, a nanosecond later for each pod considered, as
// upstream's time.Now() does when it builds the units. The list lives in
// w's buffers until the next call.
func (idx *groupIndex) unitsOn(w *worker, node *snapshot.Node, maxPriority int32, now int64) (unitList, error) {
	members, memberNodes, spans := w.members[:0], w.memberNodes[:0], w.spans[:0]
	clear(w.seen)
	tick := int64(0)
	start := func(p *snapshot.Pod) int64 {
		t := now + tick
		if idx.sem.UnstartedVictimsNewest {
			t = math.MaxInt64
		}
		tick++
		if ns, ok := p.StartNanos(); ok {
			return ns
		}
		return t
	}
	add := func(p *snapshot.Pod, n *snapshot.Node, start int64) {
		r := &p.Requests
		members = append(members, snapshot.RankedPod{Pod: p, Priority: p.Priority, Start: start,
			MilliCPU: r.MilliCPU, Memory: r.Memory, EphemeralStorage: r.EphemeralStorage})
		memberNodes = append(memberNodes, n)
	}
	for _, p := range node.Pods {
		info, inGroup := idx.pods[p]
		if inGroup && info.all != nil {
			if w.seen[info.all] {
				continue
			}
			if w.seen == nil {
				w.seen = map[*snapshot.Group]bool{}
			}
			w.seen[info.all] = true
			m := idx.members[info.all]
			if m.err != nil {
				return unitList{}, m.err
			}
			if len(m.pods) > 0 {
				if info.priority >= maxPriority {
					tick += int64(len(m.pods))
					continue
				}
				kind := UnitPodGroup
				if info.all.Kind == snapshot.KindCompositePodGroup {
					kind = UnitCompositePodGroup
				}
				sp := span{lo: int32(len(members)), kind: kind, group: info.all, priority: info.priority, nodes: m.span}
				for i, q := range m.pods {
					st := start(q)
					add(q, m.nodes[i], st)
					if i == 0 || st < sp.start {
						sp.start = st
					}
				}
				sp.hi = int32(len(members))
				spans = append(spans, sp)
				continue
			}
			// No scheduled pods found under the group (upstream: "should
			// never happen"): the pod is a unit of its own.
		}
		prio := p.Priority
		kind := UnitPod
		if p.HasSchedulingGroup() {
			kind = UnitPodGroup
			prio = info.priority
		}
		if prio >= maxPriority {
			tick++
			continue
		}
		st := start(p)
		spans = append(spans, span{lo: int32(len(members)), hi: int32(len(members)) + 1, kind: kind, priority: prio, start: st})
		add(p, node, st)
	}
	w.members, w.memberNodes, w.spans = members, memberNodes, spans
	return unitList{members: members, memberNodes: memberNodes, spans: spans, uidTieBreak: idx.sem.VictimUIDTieBreak}, nil
}
