package preemption

import (
	"math"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/pkg/filter"
	"github.com/reprieve/reprieve/pkg/snapshot"
)

// Placement is where a victim could run right after the eviction: the
// cluster as it would be (every victim of the candidate removed from its
// node, the preemptor placed on the candidate's node), the victim tried
// alone, as a new pending pod of its priority, with every filter on every
// node but the one it was evicted from.
type Placement struct {
	// Node is the first node, in snapshot order, where it would fit; nil
	// when there is none.
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

// placer tries victims elsewhere; it keeps each victim's cycle, which
// does not depend on the candidate, for the whole evaluation.
type placer struct {
	d      *dryRun
	cycles map[*snapshot.Pod]*filter.Cycle
	errs   map[*snapshot.Pod]string
	// feasible holds, for a victim whose cycle is resources-only, the
	// indexes of the nodes it fits on as the snapshot is: on a node whose
	// pods a candidate does not change, that is the answer.
	feasible map[*snapshot.Pod][]int
}

func newPlacer(d *dryRun) *placer {
	return &placer{d: d, cycles: map[*snapshot.Pod]*filter.Cycle{}, errs: map[*snapshot.Pod]string{},
		feasible: map[*snapshot.Pod][]int{}}
}

// placeVictims tries every victim of cand, setting its Placements (without
// reasons; see explain) and Unplaceable, and dropping a cached score,
// which reads the latter.
func (pl *placer) placeVictims(cand *Candidate) {
	out := make([]Placement, len(cand.Victims))
	n := 0
	changed := pl.changedNodes(cand)
	for i, v := range cand.Victims {
		out[i].Node = pl.place(cand, changed, v.Pod)
		if out[i].Node == nil {
			n++
		}
	}
	cand.Placements, cand.Unplaceable, cand.scored = out, n, false
}

// explain fills the reasons of the victims of cand that fit nowhere else.
func (pl *placer) explain(cand *Candidate) {
	for i := range cand.Placements {
		if p := &cand.Placements[i]; p.Node == nil && p.Reason == "" {
			p.Reason = pl.reason(cand, cand.Victims[i].Pod)
		}
	}
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
	return pl.d.c.Snapshot().Node(p.Obj.Spec.NodeName)
}

// cycle is the filter cycle of victim as a new pending pod: not bound,
// without the status of a running pod.
func (pl *placer) cycle(victim *snapshot.Pod) (*filter.Cycle, string) {
	if c, ok := pl.cycles[victim]; ok {
		return c, pl.errs[victim]
	}
	snap := pl.d.c.Snapshot()
	obj := victim.Obj.DeepCopy()
	obj.Spec.NodeName = ""
	obj.Status = v1.PodStatus{Phase: v1.PodPending}
	var c *filter.Cycle
	msg := ""
	if p, err := snap.NewPod(obj); err != nil {
		msg = err.Error()
	} else {
		c = filter.NewCycle(snap, p, filter.Options{Parallelism: 1})
		if s := c.PreFilterStatus(); !s.IsSuccess() {
			msg = filter.FitErrorMessage(len(snap.Nodes), s, nil)
		}
	}
	pl.cycles[victim], pl.errs[victim] = c, msg
	return c, msg
}

// feasibleAsIs returns the victim's cached feasible nodes as the snapshot
// is; ok is false when its filters read more than a node's own pods.
func (pl *placer) feasibleAsIs(c *filter.Cycle, victim *snapshot.Pod) (nodes []int, ok bool) {
	if !c.ResourcesOnly() {
		return nil, false
	}
	if f, ok := pl.feasible[victim]; ok {
		return f, true
	}
	state := c.StateOf()
	f := []int{}
	for i, m := range pl.d.c.Snapshot().Nodes {
		nv := c.NodeViewOf(m)
		if c.FilterWithNominatedPods(&state, &nv, false).IsSuccess() {
			f = append(f, i)
		}
	}
	pl.feasible[victim] = f
	return f, true
}

// filterOn filters the victim's cycle c on m with cand applied: a fresh
// overlay on a node cand changes, else shared (nil: a fresh one).
func (pl *placer) filterOn(c *filter.Cycle, cand *Candidate, m *snapshot.Node, changed bool, shared *filter.State) filter.Status {
	nv := c.NodeViewOf(m)
	st := shared
	if changed || st == nil {
		fresh := c.StateOf()
		for _, v := range cand.Victims {
			if n := pl.nodeOf(v.Pod); n != nil {
				c.RemovePod(&fresh, &nv, v.Pod, n)
			}
		}
		c.AddPod(&fresh, &nv, pl.d.c.Pod(), cand.Node)
		st = &fresh
	}
	return c.FilterWithNominatedPods(st, &nv, false)
}

// place returns the first node, in snapshot order and not its own, where
// victim fits with cand applied; nil when there is none.
func (pl *placer) place(cand *Candidate, changed []*snapshot.Node, victim *snapshot.Pod) *snapshot.Node {
	c, msg := pl.cycle(victim)
	if msg != "" {
		return nil
	}
	snap := pl.d.c.Snapshot()
	own := pl.nodeOf(victim)
	if f, ok := pl.feasibleAsIs(c, victim); ok {
		// Only the nodes cand changes need filtering again.
		best := -1
		for _, i := range f {
			if m := snap.Nodes[i]; m != own && !slices.Contains(changed, m) {
				best = i
				break
			}
		}
		for _, m := range changed {
			if m == own || (best >= 0 && m.Index > best) {
				continue
			}
			if pl.filterOn(c, cand, m, true, nil).IsSuccess() {
				best = m.Index
			}
		}
		if best < 0 {
			return nil
		}
		return snap.Nodes[best]
	}
	shared := pl.sharedState(c, cand)
	for _, m := range snap.Nodes {
		if m != own && pl.filterOn(c, cand, m, slices.Contains(changed, m), &shared).IsSuccess() {
			return m
		}
	}
	return nil
}

// sharedState is the victim's plugin state with cand applied, for the
// nodes cand does not change.
func (pl *placer) sharedState(c *filter.Cycle, cand *Candidate) filter.State {
	st := c.StateOf()
	for _, v := range cand.Victims {
		if n := pl.nodeOf(v.Pod); n != nil {
			c.RemovePod(&st, nil, v.Pod, n)
		}
	}
	c.AddPod(&st, nil, pl.d.c.Pod(), cand.Node)
	return st
}

// reason is why victim fits nowhere with cand applied, as FailedScheduling
// would say it, its own node counted as MsgPreemptedFrom.
func (pl *placer) reason(cand *Candidate, victim *snapshot.Pod) string {
	c, msg := pl.cycle(victim)
	if msg != "" {
		return msg
	}
	snap := pl.d.c.Snapshot()
	own := pl.nodeOf(victim)
	changed := pl.changedNodes(cand)
	shared := pl.sharedState(c, cand)
	statuses := make([]filter.Status, 0, len(snap.Nodes))
	for _, m := range snap.Nodes {
		if m == own {
			statuses = append(statuses, filter.Status{Code: filter.Unschedulable, Reasons: []string{MsgPreemptedFrom}})
			continue
		}
		statuses = append(statuses, pl.filterOn(c, cand, m, slices.Contains(changed, m), &shared))
	}
	return filter.FitErrorMessage(len(snap.Nodes), filter.Status{}, statuses)
}

// reschedule is Reschedulable on one node: minimal is Minimal's set there
// and base upstream's. When some of minimal's victims fit nowhere else, a
// second search collects the maxAlternatives best sets (upstream's among
// them unless better ones fill the list) and the one with the fewest such
// victims wins, then the best under upstream's criteria. The choice is
// never claimed proven when it is not Minimal's own.
func (d *dryRun) reschedule(w *worker, pl *placer, node *snapshot.Node, base, minimal *Candidate) *Candidate {
	pl.placeVictims(minimal)
	if minimal.Unplaceable == 0 {
		return minimal
	}
	s := d.newSearch(w, node, base)
	if s == nil {
		return minimal
	}
	minSet := s.setOf(minimal)
	minCost := s.costOf(minSet)
	s.keep = maxAlternatives
	s.bestCost = setCost{violations: math.MaxInt}
	// Interchangeable pods on resources may differ in where they can go.
	clear(s.same)
	s.dfs(0)
	best, bestCost := minimal, minCost
	consider := func(cand *Candidate, cost setCost) {
		pl.placeVictims(cand)
		if cand.Unplaceable < best.Unplaceable || (cand.Unplaceable == best.Unplaceable && cost.less(bestCost)) {
			best, bestCost = cand, cost
		}
	}
	// Upstream's set always competes, so that the choice is never worse
	// than it on the node.
	baseSet := s.best
	if !slices.Equal(baseSet, minSet) {
		consider(base, s.costOf(baseSet))
	}
	for _, a := range s.alts {
		if slices.Equal(a.set, minSet) || slices.Equal(a.set, baseSet) {
			continue
		}
		cand := w.candidate(node, s.units, a.set, 0, nil)
		cand.NumPDBViolations, cand.Broken = s.violations(a.set, cand)
		consider(cand, a.cost)
	}
	return best
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
