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
}

func newPlacer(d *dryRun) *placer {
	return &placer{d: d, cycles: map[*snapshot.Pod]*filter.Cycle{}, errs: map[*snapshot.Pod]string{}}
}

// placeVictims tries every victim of cand, setting its Placements and
// Unplaceable (and dropping a cached score, which reads the latter).
func (pl *placer) placeVictims(cand *Candidate) {
	out := make([]Placement, len(cand.Victims))
	n := 0
	for i, v := range cand.Victims {
		out[i] = pl.place(cand, v.Pod)
		if out[i].Node == nil {
			n++
		}
	}
	cand.Placements, cand.Unplaceable, cand.scored = out, n, false
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

// place tries victim on every node but its own, the candidate applied.
func (pl *placer) place(cand *Candidate, victim *snapshot.Pod) Placement {
	c, msg := pl.cycle(victim)
	if msg != "" {
		return Placement{Reason: msg}
	}
	snap := pl.d.c.Snapshot()
	preemptor := pl.d.c.Pod()
	nodeOf := func(p *snapshot.Pod) *snapshot.Node { return snap.Node(p.Obj.Spec.NodeName) }
	apply := func(st *filter.State, nv *filter.NodeView) {
		for _, v := range cand.Victims {
			if n := nodeOf(v.Pod); n != nil {
				c.RemovePod(st, nv, v.Pod, n)
			}
		}
		c.AddPod(st, nv, preemptor, cand.Node)
	}
	// Nodes whose pods change need a view with the change; the others
	// share one overlay of the plugin state.
	changed := func(m *snapshot.Node) bool {
		if m == cand.Node {
			return true
		}
		return slices.ContainsFunc(cand.Victims, func(v *Victim) bool { return nodeOf(v.Pod) == m })
	}
	shared := c.StateOf()
	apply(&shared, nil)
	own := nodeOf(victim)
	statuses := make([]filter.Status, 0, len(snap.Nodes))
	for _, m := range snap.Nodes {
		if m == own {
			statuses = append(statuses, filter.Status{Code: filter.Unschedulable, Reasons: []string{MsgPreemptedFrom}})
			continue
		}
		nv := c.NodeViewOf(m)
		st := &shared
		if changed(m) {
			fresh := c.StateOf()
			apply(&fresh, &nv)
			st = &fresh
		}
		s := c.FilterWithNominatedPods(st, &nv, false)
		if s.IsSuccess() {
			return Placement{Node: m}
		}
		statuses = append(statuses, s)
	}
	return Placement{Reason: filter.FitErrorMessage(len(snap.Nodes), filter.Status{}, statuses)}
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
