package preemption

import (
	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// overlayFit is the general fit checker: the filter cycle's reversible
// overlay of plugin state and of the candidate node, updated for every
// member of a unit on whichever node it runs, as upstream's cloned
// CycleState and NodeInfo are through the PreFilterExtensions.
type overlayFit struct {
	c     *filter.Cycle
	node  *snapshot.Node
	units *unitList
	st    filter.State
	nv    filter.NodeView
}

var _ fitChecker = (*overlayFit)(nil)

// reset prepares the checker for a walk over units on node.
func (f *overlayFit) reset(c *filter.Cycle, node *snapshot.Node, units *unitList) {
	*f = overlayFit{c: c, node: node, units: units, st: c.StateOf(), nv: c.NodeViewOf(node)}
	if units.memberNodes != nil {
		// Units span nodes: follow topology spread as upstream's state
		// does, critical paths and all.
		f.st.ModelCriticalPaths()
	}
}

func (f *overlayFit) remove(u int) { f.update(u, -1) }
func (f *overlayFit) add(u int)    { f.update(u, 1) }

func (f *overlayFit) update(u, sign int) {
	lo, hi := f.units.bounds(u)
	for m := lo; m < hi; m++ {
		p, node := f.units.members[m].Pod, f.units.nodeOf(m, f.node)
		if sign > 0 {
			f.c.AddPod(&f.st, &f.nv, p, node)
		} else {
			f.c.RemovePod(&f.st, &f.nv, p, node)
		}
	}
}

func (f *overlayFit) fits(why *filter.Status) bool {
	s := f.c.FilterWithNominatedPods(&f.st, &f.nv, true)
	if why != nil {
		*why = s
	}
	return s.IsSuccess()
}

// sumsFit is the fit checker when NodeResourcesFit is the only filter that
// removing pods can change (filter.Cycle.ResourcesOnly, no scalar
// resources): the node's requested sums, with the pods nominated to it
// that the preemptor must yield to counted as running. With resources
// alone upstream's second pass of the filters (without the nominated pods)
// cannot fail when the first passed, so one check suffices. Members on
// other nodes change nothing here.
type sumsFit struct {
	c         *filter.Cycle
	node      *snapshot.Node
	units     *unitList
	req       *snapshot.Resources
	used      snapshot.Usage
	allocated snapshot.Usage
}

var _ fitChecker = (*sumsFit)(nil)

// reset prepares the checker for a walk over units on node.
func (f *sumsFit) reset(c *filter.Cycle, req *snapshot.Resources, node *snapshot.Node, units *unitList) {
	*f = sumsFit{c: c, node: node, units: units, req: req,
		used:      node.Requested.Usage(int64(len(node.Pods))),
		allocated: node.Allocatable.Usage(node.Allocatable.AllowedPods)}
	for _, p := range c.NominatedPods(node) {
		r := &p.Requests
		f.used.Add(r.MilliCPU, r.Memory, r.EphemeralStorage, 1)
	}
}

func (f *sumsFit) remove(u int) { f.update(u, -1) }

var _ removerOfAll = (*sumsFit)(nil)

// removeAll sums what is left after removing every unit over the shorter
// of the node's kept pods and its potential victims (single pods on the
// node read directly).
func (f *sumsFit) removeAll() {
	l := f.units
	if l.kept == nil || len(l.kept) >= len(l.members) {
		if l.spans != nil || l.memberNodes != nil {
			for u := range l.len() {
				f.remove(u)
			}
			return
		}
		for i := range l.members {
			r := &l.members[i]
			f.used.Add(r.MilliCPU, r.Memory, r.EphemeralStorage, -1)
		}
		return
	}
	// f.used is the node's pods and the nominated ones: keep the latter.
	all := f.node.Requested.Usage(int64(len(f.node.Pods)))
	f.used = snapshot.Usage{MilliCPU: f.used.MilliCPU - all.MilliCPU, Memory: f.used.Memory - all.Memory,
		EphemeralStorage: f.used.EphemeralStorage - all.EphemeralStorage, Pods: f.used.Pods - all.Pods}
	for i := range l.kept {
		r := &l.kept[i]
		f.used.Add(r.MilliCPU, r.Memory, r.EphemeralStorage, 1)
	}
}
func (f *sumsFit) add(u int) { f.update(u, 1) }

func (f *sumsFit) update(u int, sign int64) {
	lo, hi := f.units.bounds(u)
	for m := lo; m < hi; m++ {
		if f.units.memberNodes != nil && f.units.memberNodes[m] != f.node {
			continue
		}
		r := &f.units.members[m]
		f.used.Add(r.MilliCPU, r.Memory, r.EphemeralStorage, sign)
	}
}

var _ reprieverOfAll = (*sumsFit)(nil)

// reprieveAll is the walk's reprieve loop on the sums, kept in registers;
// units of one pod on the candidate node (any unit without the
// GenericWorkload gate) read their member's requests directly.
func (f *sumsFit) reprieveAll(order, evicted []int32) []int32 {
	l := f.units
	if l.spans != nil || l.memberNodes != nil {
		for _, u := range order {
			f.add(int(u))
			if !f.used.Fits(f.req, &f.allocated) {
				f.remove(int(u))
				evicted = append(evicted, u)
			}
		}
		return evicted
	}
	used, req, alloc := f.used, f.req, &f.allocated
	members := l.members
	if room, ok := alloc.Headroom(req); ok {
		// Fits, against bounds computed once.
		for _, u := range order {
			r := &members[u]
			next := snapshot.Usage{MilliCPU: used.MilliCPU + r.MilliCPU, Memory: used.Memory + r.Memory,
				EphemeralStorage: used.EphemeralStorage + r.EphemeralStorage, Pods: used.Pods + 1}
			if next.Within(&room) {
				used = next
			} else {
				evicted = append(evicted, u)
			}
		}
		f.used = used
		return evicted
	}
	for _, u := range order {
		r := &members[u]
		used.Add(r.MilliCPU, r.Memory, r.EphemeralStorage, 1)
		if !used.Fits(req, alloc) {
			used.Add(r.MilliCPU, r.Memory, r.EphemeralStorage, -1)
			evicted = append(evicted, u)
		}
	}
	f.used = used
	return evicted
}

func (f *sumsFit) fits(why *filter.Status) bool {
	if f.used.Fits(f.req, &f.allocated) {
		return true
	}
	if why != nil {
		u := &f.used
		nv := filter.NodeView{Node: f.node, NumPods: int(u.Pods), Requested: snapshot.Resources{MilliCPU: u.MilliCPU, Memory: u.Memory, EphemeralStorage: u.EphemeralStorage}}
		*why = f.c.FilterResources(&nv)
	}
	return false
}
