package preemption

import (
	"math"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Placement is where a victim could run right after the eviction. The
// victims are placed one after another, most important first (in the
// order of Candidate.Victims), as a scheduler would bind them as new
// pending pods of their priority: each on the cluster as it would be by
// then — every victim of the candidate removed from its node, the
// preemptor bound to the candidate's node, each victim placed before it
// taking its room — with every filter, on every node but the one it was
// evicted from. A victim that fits nowhere stays pending (it does not
// preempt in turn) and takes no room.
type Placement struct {
	// Node is the first node, in snapshot order, where it would fit; nil
	// when there is none. (Which feasible node a scheduler picks is up to
	// its score plugins, which are not run: the first one is taken.)
	Node *snapshot.Node
	// Reason is, when Node is nil, why it would stay pending, as
	// FailedScheduling would say it.
	Reason string
}

// MsgPreemptedFrom is the reason a victim's own node is not a place for it.
const MsgPreemptedFrom = "node(s) the pod was preempted from"

// maxAlternatives is how many of the best victim sets of a node
// Reschedulable compares by their victims' placements.
const maxAlternatives = 8

// criterionUnplaceable is Reschedulable's first criterion.
var criterionUnplaceable = criterion{"fewest victims that fit nowhere else", func(s *Score) int64 { return -int64(s.Unplaceable) }}

// criteriaFor returns the node-choice criteria of a policy, in order.
func criteriaFor(p Policy) []criterion {
	if p == Reschedulable {
		return append([]criterion{criterionUnplaceable}, criteria[:]...)
	}
	return criteria[:]
}

// MaxPlacementWork bounds the work of one evaluation's placements, in
// node filterings: filtering a victim on one node counts one, building a
// victim's filter cycle (which reads every node's pods) counts one per
// node of the snapshot, and listing the nodes with room for a new request
// shape one per 16 nodes. The placements of upstream's choice and of the
// policy's final choice are always computed in full and not charged.
// Once the bound is reached, a victim whose placement is still unknown
// counts as unplaceable (so a count is never below the truth) and the
// candidate it belongs to is not proven.
const MaxPlacementWork = 50_000

// maxShapes bounds how many request shapes the placer remembers the roomy
// nodes of.
const maxShapes = 256

// placer tries victims elsewhere; it keeps each victim's cycle, which
// does not depend on the candidate, for the whole evaluation.
//
// Only nodes that a candidate changes (its own and its victims') or that
// have room for the victim's cpu, memory, ephemeral storage and pod slot
// as the snapshot is can take it: NodeResourcesFit reads only the node's
// own pods, and every filter must pass. So a victim is filtered on those
// alone, and its filter cycle, which costs a pass over every pod with
// affinity terms, is only built when there is one.
type placer struct {
	d      *dryRun
	cycles map[*snapshot.Pod]*filter.Cycle
	errs   map[*snapshot.Pod]string
	// feasible holds, for a victim whose cycle is resources-only, the
	// indexes of the roomy nodes it fits on as the snapshot is: on a node
	// whose pods a candidate does not change, that is the answer.
	feasible map[*snapshot.Pod][]int32
	// requests are the victims' requests as pending pods (cpu, memory,
	// ephemeral storage, one pod; zero until computed), by snapshot.Pod.Seq,
	// and roomy the nodes, in snapshot order, with room for each such shape
	// as the snapshot is.
	requests []snapshot.Usage
	roomy    map[snapshot.Usage][]int32
	// exact marks the candidates whose placements are known in full.
	exact map[*Candidate]bool
	// work is spent of MaxPlacementWork (budget, settable by tests);
	// best is the fewest unplaceable victims of a node's choice so far,
	// an upper bound for that node, so that counting stops for a set that
	// already has more.
	work, budget int
	best         int
}

func newPlacer(d *dryRun, budget int) *placer {
	return &placer{d: d, cycles: map[*snapshot.Pod]*filter.Cycle{}, errs: map[*snapshot.Pod]string{},
		feasible: map[*snapshot.Pod][]int32{},
		roomy:    map[snapshot.Usage][]int32{}, exact: map[*Candidate]bool{}, budget: budget, best: math.MaxInt}
}

// placed is a victim bound to a node other than its own.
type placed struct {
	pod  *snapshot.Pod
	node *snapshot.Node
}

// placeVictims places the victims of cand one after another (see
// Placement), setting its Placements (without reasons; see explain) and
// Unplaceable, and dropping a cached score, which reads the latter. With
// bounded, it charges the work bound and stops counting once more than
// limit victims are unplaceable; when the work bound leaves a victim's
// place unknown, it stops there too (where that victim goes decides where
// the next ones can). Victims not placed then count as unplaceable, so
// that the count is never below the truth. It reports whether the work
// bound stopped it. A candidate placed exactly before is not placed again.
func (pl *placer) placeVictims(cand *Candidate, bounded bool, limit int) (cut bool) {
	if pl.exact[cand] {
		return false
	}
	out := make([]Placement, len(cand.Victims))
	n := 0
	exact := true
	changed := pl.changedNodes(cand)
	var before []placed
	for i, v := range cand.Victims {
		if bounded && n > limit {
			n += len(cand.Victims) - i
			exact = false
			break
		}
		node, ok := pl.place(cand, changed, before, v.Pod, bounded)
		if !ok {
			n += len(cand.Victims) - i
			exact, cut = false, true
			break
		}
		out[i].Node = node
		if node == nil {
			n++
			continue
		}
		before = append(before, placed{pod: v.Pod, node: node})
		if !slices.Contains(changed, node) {
			changed = append(changed, node)
		}
	}
	cand.Placements, cand.Unplaceable, cand.scored = out, n, false
	if exact {
		pl.exact[cand] = true
	}
	return cut
}

// explain fills the reasons of the victims of cand that fit nowhere else,
// placing them in full first if they were counted within the work bound.
func (pl *placer) explain(cand *Candidate) {
	pl.placeVictims(cand, false, 0)
	var before []placed
	for i := range cand.Placements {
		p := &cand.Placements[i]
		if p.Node != nil {
			before = append(before, placed{pod: cand.Victims[i].Pod, node: p.Node})
		} else if p.Reason == "" {
			p.Reason = pl.reason(cand, before, cand.Victims[i].Pod)
		}
	}
}

// spend charges units of work when bounded; false when the bound is
// reached.
func (pl *placer) spend(bounded bool, units int) bool {
	if !bounded {
		return true
	}
	if pl.work >= pl.budget {
		return false
	}
	pl.work += units
	return true
}

// changedNodes are the nodes whose pods cand changes: its own and its
// victims'.
func (pl *placer) changedNodes(cand *Candidate) []*snapshot.Node {
	out := []*snapshot.Node{cand.Node}
	for _, v := range cand.Victims {
		if n := pl.nodeOf(v.Pod); n != nil && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func (pl *placer) nodeOf(p *snapshot.Pod) *snapshot.Node {
	return pl.d.c.Snapshot().Node(p.NodeName())
}

// cycle is the filter cycle of victim as a new pending pod: not bound,
// without the status of a running pod.
func (pl *placer) cycle(victim *snapshot.Pod) (*filter.Cycle, string) {
	if c, ok := pl.cycles[victim]; ok {
		return c, pl.errs[victim]
	}
	snap := pl.d.c.Snapshot()
	obj := victim.Obj().DeepCopy()
	obj.Spec.NodeName = ""
	obj.Status = v1.PodStatus{Phase: v1.PodPending}
	var c *filter.Cycle
	msg := ""
	if p, err := snap.NewPod(obj); err != nil {
		msg = err.Error()
	} else {
		c = filter.NewCycle(snap, p, filter.Options{Parallelism: 1, SpreadEmptySelectorMatchesAll: pl.d.sem.SpreadEmptySelectorMatchesAll,
			CSIDriverNotRequired: pl.d.sem.CSIDriverNotRequired})
		if s := c.PreFilterStatus(); !s.IsSuccess() {
			msg = filter.FitErrorMessage(len(snap.Nodes), s, nil)
		}
	}
	pl.cycles[victim], pl.errs[victim] = c, msg
	return c, msg
}

// request is what victim asks of a node as a pending pod, in the terms
// of the roomy check.
func (pl *placer) request(victim *snapshot.Pod) snapshot.Usage {
	i := victim.Seq
	if i >= 0 && i < len(pl.requests) && pl.requests[i].Pods == 1 {
		return pl.requests[i]
	}
	req := snapshot.IncomingPodRequests(victim.Obj())
	r := snapshot.Usage{MilliCPU: max(req.MilliCPU, 0), Memory: max(req.Memory, 0), EphemeralStorage: max(req.EphemeralStorage, 0), Pods: 1}
	if i >= 0 {
		if i >= len(pl.requests) {
			pl.requests = slices.Grow(pl.requests, i+1-len(pl.requests))[:i+1]
		}
		pl.requests[i] = r
	}
	return r
}

// roomyNodes lists, in snapshot order, the nodes with room for shape r as
// the snapshot is; ok is false when the work bound is reached first.
func (pl *placer) roomyNodes(r snapshot.Usage, bounded bool) (nodes []int32, ok bool) {
	if f, ok := pl.roomy[r]; ok {
		return f, true
	}
	snap := pl.d.c.Snapshot()
	if !pl.spend(bounded, len(snap.Nodes)/16+1) {
		return nil, false
	}
	req := snapshot.Resources{MilliCPU: r.MilliCPU, Memory: r.Memory, EphemeralStorage: r.EphemeralStorage}
	f := []int32{}
	for i, m := range snap.Nodes {
		used := m.Requested.Usage(int64(len(m.Pods)))
		alloc := m.Allocatable.Usage(m.Allocatable.AllowedPods)
		if used.Fits(&req, &alloc) {
			f = append(f, int32(i))
		}
	}
	if len(pl.roomy) < maxShapes {
		pl.roomy[r] = f
	}
	return f, true
}

// feasibleAsIs returns the roomy nodes the victim fits on as the snapshot
// is, cached; ok is false when its filters read more than a node's own
// pods, or when the work bound is reached first.
func (pl *placer) feasibleAsIs(c *filter.Cycle, victim *snapshot.Pod, roomy []int32, bounded bool) (nodes []int32, ok bool) {
	if !c.ResourcesOnly() {
		return nil, false
	}
	if f, ok := pl.feasible[victim]; ok {
		return f, true
	}
	if !pl.spend(bounded, len(roomy)) {
		return nil, false
	}
	state := c.StateOf()
	snap := pl.d.c.Snapshot()
	f := []int32{}
	for _, i := range roomy {
		nv := c.NodeViewOf(snap.Nodes[i])
		if c.FilterWithNominatedPods(&state, &nv, false).IsSuccess() {
			f = append(f, i)
		}
	}
	pl.feasible[victim] = f
	return f, true
}

// filterOn filters the victim's cycle c on m with cand and the victims
// placed before applied: a fresh overlay on a node they change, else
// shared (nil: a fresh one).
func (pl *placer) filterOn(c *filter.Cycle, cand *Candidate, before []placed, m *snapshot.Node, changed bool, shared *filter.State) filter.Status {
	nv := c.NodeViewOf(m)
	st := shared
	if changed || st == nil {
		fresh := pl.applied(c, cand, before, &nv)
		st = &fresh
	}
	return c.FilterWithNominatedPods(st, &nv, false)
}

// applied is the victim's plugin state, and *nv when not nil, with cand
// and the victims placed before applied: the candidate's victims removed,
// the preemptor bound to its node, the placed victims bound to theirs.
func (pl *placer) applied(c *filter.Cycle, cand *Candidate, before []placed, nv *filter.NodeView) filter.State {
	st := c.StateOf()
	for _, v := range cand.Victims {
		if n := pl.nodeOf(v.Pod); n != nil {
			c.RemovePod(&st, nv, v.Pod, n)
		}
	}
	c.AddPod(&st, nv, pl.d.c.Pod(), cand.Node)
	for _, p := range before {
		c.AddPod(&st, nv, p.pod, p.node)
	}
	return st
}

// place returns the first node, in snapshot order and not its own, where
// victim fits with cand and the victims placed before applied (changed
// are the nodes they change); nil when there is none. ok is false when
// the work bound was reached before the answer was known (node is nil
// then).
func (pl *placer) place(cand *Candidate, changed []*snapshot.Node, before []placed, victim *snapshot.Pod, bounded bool) (node *snapshot.Node, ok bool) {
	snap := pl.d.c.Snapshot()
	own := pl.nodeOf(victim)
	roomy, ok := pl.roomyNodes(pl.request(victim), bounded)
	if !ok {
		return nil, false
	}
	// The nodes that can take the victim at all: roomy or changed, not
	// its own.
	hope := false
	for _, i := range roomy {
		if m := snap.Nodes[i]; m != own {
			hope = true
			break
		}
	}
	for _, m := range changed {
		hope = hope || m != own
	}
	if !hope {
		return nil, true
	}
	if _, built := pl.cycles[victim]; !built && !pl.spend(bounded, len(snap.Nodes)) {
		return nil, false
	}
	c, msg := pl.cycle(victim)
	if msg != "" {
		return nil, true
	}
	if f, ok := pl.feasibleAsIs(c, victim, roomy, bounded); ok {
		// Only the nodes cand changes need filtering again.
		best := -1
		for _, i := range f {
			if m := snap.Nodes[i]; m != own && !slices.Contains(changed, m) {
				best = int(i)
				break
			}
		}
		for _, m := range changed {
			if m == own || (best >= 0 && m.Index > best) {
				continue
			}
			if !pl.spend(bounded, 1) {
				return nil, false
			}
			if pl.filterOn(c, cand, before, m, true, nil).IsSuccess() {
				best = m.Index
			}
		}
		if best < 0 {
			return nil, true
		}
		return snap.Nodes[best], true
	} else if c.ResourcesOnly() {
		return nil, false
	}
	// The roomy and the changed nodes, in snapshot order.
	shared := pl.applied(c, cand, before, nil)
	try := func(m *snapshot.Node) (fits, ok bool) {
		if m == own {
			return false, true
		}
		if !pl.spend(bounded, 1) {
			return false, false
		}
		return pl.filterOn(c, cand, before, m, slices.Contains(changed, m), &shared).IsSuccess(), true
	}
	order := slices.Clone(changed)
	slices.SortFunc(order, func(a, b *snapshot.Node) int { return a.Index - b.Index })
	k := 0
	for _, i := range roomy {
		m := snap.Nodes[i]
		for ; k < len(order) && order[k].Index < m.Index; k++ {
			if fits, ok := try(order[k]); !ok || fits {
				return pickIf(order[k], fits), ok
			}
		}
		if k < len(order) && order[k] == m {
			k++
		}
		if fits, ok := try(m); !ok || fits {
			return pickIf(m, fits), ok
		}
	}
	for ; k < len(order); k++ {
		if fits, ok := try(order[k]); !ok || fits {
			return pickIf(order[k], fits), ok
		}
	}
	return nil, true
}

// pickIf is m when fits, else nil.
func pickIf(m *snapshot.Node, fits bool) *snapshot.Node {
	if fits {
		return m
	}
	return nil
}

// reason is why victim fits nowhere with cand and the victims placed
// before applied, as FailedScheduling would say it, its own node counted
// as MsgPreemptedFrom.
func (pl *placer) reason(cand *Candidate, before []placed, victim *snapshot.Pod) string {
	c, msg := pl.cycle(victim)
	if msg != "" {
		return msg
	}
	snap := pl.d.c.Snapshot()
	own := pl.nodeOf(victim)
	changed := pl.changedNodes(cand)
	for _, p := range before {
		if !slices.Contains(changed, p.node) {
			changed = append(changed, p.node)
		}
	}
	shared := pl.applied(c, cand, before, nil)
	statuses := make([]filter.Status, 0, len(snap.Nodes))
	for _, m := range snap.Nodes {
		if m == own {
			statuses = append(statuses, filter.Status{Code: filter.Unschedulable, Reasons: []string{MsgPreemptedFrom}})
			continue
		}
		statuses = append(statuses, pl.filterOn(c, cand, before, m, slices.Contains(changed, m), &shared))
	}
	return filter.FitErrorMessage(len(snap.Nodes), filter.Status{}, statuses)
}

// reschedule is Reschedulable on one node: minimal is Minimal's set there
// and base upstream's (nil when upstream has no candidate there). When
// some of minimal's victims fit nowhere else, a second search, within
// limit fit checks, collects the maxAlternatives best sets (upstream's
// among them unless better ones fill the list) and the one with the
// fewest such victims wins, then the best under upstream's criteria. A set
// is only counted until it has more such victims than the best of a node
// so far (it cannot win then). The choice is never claimed proven when it
// is not Minimal's own, nor when the work bound cut a count on the node.
// steps counts the second search's fit checks; cut reports that a work
// bound (of the placements, or limit) stopped a count or the search.
func (d *dryRun) reschedule(w *worker, pl *placer, node *snapshot.Node, base, minimal *Candidate, limit int) (best *Candidate, steps int, cut bool) {
	cut = pl.placeVictims(minimal, true, pl.best)
	if minimal.Unplaceable == 0 {
		return minimal, 0, cut
	}
	best = minimal
	defer func() {
		pl.best = min(pl.best, best.Unplaceable)
		if cut {
			best.Proven = false
		}
	}()
	// Upstream's set, when counted in full, can still do better.
	baseBetter := func() bool { return base != nil && pl.exact[base] && base.Unplaceable < minimal.Unplaceable }
	if cut && pl.work >= pl.budget {
		// No other set can be counted.
		if baseBetter() {
			best = base
		}
		return best, 0, cut
	}
	s := d.newSearch(w, node, base, limit)
	if s == nil {
		if baseBetter() {
			best = base
		}
		return best, 0, cut
	}
	minSet := s.setOf(&s.buf.minimal, minimal)
	minCost := s.costOf(minSet)
	s.keep = maxAlternatives
	s.bestCost = setCost{violations: math.MaxInt}
	if !pl.somePlaceable(node, s.units) {
		// Every victim of every set would stay pending: a set's count is
		// its size, and no set is smaller than the resource bound. When
		// Minimal's set, proven best on upstream's order, is that small,
		// no set beats it.
		if minimal.Proven && int64(len(minimal.Victims)) <= s.needed(0) {
			return minimal, 0, cut
		}
	} else {
		// Interchangeable pods on resources may differ in where they can
		// go.
		clear(s.same)
	}
	s.dfs(0)
	bestCost := minCost
	consider := func(cand *Candidate, cost setCost) {
		if pl.placeVictims(cand, true, min(pl.best, best.Unplaceable)) {
			cut = true
		}
		if cand.Unplaceable < best.Unplaceable || (cand.Unplaceable == best.Unplaceable && cost.less(bestCost)) {
			best, bestCost = cand, cost
		}
	}
	// Upstream's set always competes, so that the choice is never worse
	// than it on the node (also when it is Minimal's, whose count the
	// bound may have cut where upstream's choice is counted in full).
	var baseSet []int32
	if base != nil {
		baseSet = s.best
		if !slices.Equal(baseSet, minSet) || pl.exact[base] {
			consider(base, s.costOf(baseSet))
		}
	}
	for _, a := range s.alts {
		if slices.Equal(a.set, minSet) || (base != nil && slices.Equal(a.set, baseSet)) {
			continue
		}
		cand := w.candidate(node, s.units, a.set, 0, nil)
		cand.NumPDBViolations, cand.Broken = s.violations(a.set, cand)
		consider(cand, a.cost)
	}
	return best, s.steps, cut || s.exhausted
}

// somePlaceable reports whether some potential victim of the units on node
// might fit elsewhere: it is in a unit that spans nodes, or a node other
// than its own has room for it as the snapshot is.
func (pl *placer) somePlaceable(node *snapshot.Node, units *unitList) bool {
	if units.memberNodes != nil || units.spans != nil {
		return true
	}
	snap := pl.d.c.Snapshot()
	for m := range units.members {
		roomy, ok := pl.roomyNodes(pl.request(units.members[m].Pod), false)
		if !ok {
			return true
		}
		for _, i := range roomy {
			if snap.Nodes[i] != node {
				return true
			}
		}
	}
	return false
}

// record keeps set among the keep best sets, best first, and moves the
// pruning bound to the worst of them once there are keep.
func (s *search) record(set []int32, cost setCost) {
	for _, a := range s.alts {
		if slices.Equal(a.set, set) {
			return
		}
	}
	if len(s.alts) == s.keep && !cost.less(s.alts[len(s.alts)-1].cost) {
		return
	}
	i, _ := slices.BinarySearchFunc(s.alts, cost, func(a altSet, c setCost) int {
		if a.cost.less(c) {
			return -1
		}
		return 1
	})
	s.alts = slices.Insert(s.alts, i, altSet{set: slices.Clone(set), cost: cost})
	if len(s.alts) > s.keep {
		s.alts = s.alts[:s.keep]
	}
	if len(s.alts) == s.keep {
		s.bestCost = s.alts[len(s.alts)-1].cost
	}
}
