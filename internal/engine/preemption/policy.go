package preemption

import (
	"cmp"
	"math"
	"slices"

	policyv1 "k8s.io/api/policy/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Policy is how preemption chooses victims (profile.Policy, named here
// for the engine's own use).
type Policy = profile.Policy

// The policies, as the engine names them.
const (
	Upstream      = profile.PolicyUpstream
	Minimal       = profile.PolicyMinimal
	StrictPDB     = profile.PolicyStrictPDB
	Reschedulable = profile.PolicyReschedulable
)

// Features are the feature gates that change preemption (profile.Features).
type Features = profile.Features

// Semantics are the release's switches (profile.Semantics).
type Semantics = profile.Semantics

// The work bounds of a policy other than Upstream, all counts (the engine
// reads no clock), so that where a search stops does not depend on the
// machine.
const (
	// MaxPolicyNodes is the number of potential nodes up to which the
	// policy searches every one of them; beyond, it searches those
	// upstream's dry run visits.
	MaxPolicyNodes = 1000
	// MaxSearchSteps bounds the fit checks of one node's search; a search
	// that reaches it keeps the best set found (at worst upstream's)
	// unproven.
	MaxSearchSteps = 20000
	// MaxBeyondSteps bounds the fit checks of an evaluation's searches on
	// the nodes where upstream's dry run finds no room (Result.Beyond):
	// nodes are searched in the dry run's order, each within
	// MaxSearchSteps and what is left of this bound; a node the bound
	// stops, or reaches spent, is cut off. (The one fit check that says
	// whether a node needs searching at all is made even then.)
	MaxBeyondSteps = 200_000
)

// MsgBreaksBudget is the reason a node is no candidate under StrictPDB.
const MsgBreaksBudget = "every victim set that makes room breaks a PodDisruptionBudget"

// setCost is a victim set's standing under upstream's node-choice criteria,
// lower is better, compared in field order (start: later is better).
type setCost struct {
	violations int
	highest    int32
	sum        int64
	count      int
	start      int64
}

// prefixLess compares the first four keys, which a search can bound.
func (a setCost) prefixLess(b setCost) bool {
	if a.violations != b.violations {
		return a.violations < b.violations
	}
	if a.highest != b.highest {
		return a.highest < b.highest
	}
	if a.sum != b.sum {
		return a.sum < b.sum
	}
	return a.count < b.count
}

func (a setCost) less(b setCost) bool {
	if a.prefixLess(b) || b.prefixLess(a) {
		return a.prefixLess(b)
	}
	return a.start > b.start
}

// search is the branch and bound over one node's units.
type search struct {
	units    *unitList
	budgets  []budget
	order    []int32 // units in importance order
	fit      fitChecker
	monotone bool
	// matches holds, for each member, the budgets its eviction charges.
	matches [][]int
	allowed []int32
	now     int64

	evicted  []int32
	cost     setCost
	best     []int32
	bestCost setCost
	found    bool
	// steps counts the fit checks; limit bounds them, and exhausted
	// reports that the search stopped there.
	steps, limit int
	exhausted    bool

	// The resource relaxation that bounds the search: used is what the
	// node's pods, the nominated ones and the kept units request (the
	// undecided and evicted ones removed); avail is what the preemptor
	// leaves room for; per position i of order, suffix holds what the
	// units order[i:] request in all and largest the most one of them
	// does, and minPrio their lowest member priority.
	used, avail snapshot.Usage
	contrib     []snapshot.Usage
	suffix      []snapshot.Usage
	largest     []snapshot.Usage
	minPrio     []int32
	singles     bool
	same        []bool
	evictedAt   []bool

	// ported marks, when the fit checker keeps the node's host ports, the
	// units that hold some; kept are those of them kept, in order.
	ported []bool
	kept   []int32

	// keep, when positive, makes the search collect the keep best sets
	// it reaches in alts (best first) and prune against the worst of them.
	keep int
	alts []altSet

	buf searchBuffers
}

// altSet is a feasible victim set and its cost.
type altSet struct {
	set  []int32
	cost setCost
}

// improve replaces the candidates of res by the policy's: for each node the
// best victim set the search finds, starting from upstream's own where
// upstream has a candidate. Where it has none because removing every
// lower-priority pod does not make room, and fit is not monotone in the
// pods removed (the preemptor's required pod affinity, or units spanning
// nodes), a subset may still make room: the node is searched from scratch
// (searchBeyond). Elsewhere no subset can make room.
func (d *dryRun) improve(res *Result, policy Policy) {
	w := &d.e.workers[0]
	nodes := res.Visited
	if len(res.PotentialNodes) <= MaxPolicyNodes && len(res.Visited) < len(res.PotentialNodes) {
		// Every potential node, in the dry run's order from its offset.
		n := len(res.PotentialNodes)
		nodes = make([]*snapshot.Node, 0, n)
		for i := range n {
			nodes = append(nodes, res.PotentialNodes[(res.Offset+i)%n])
		}
	}
	upstream := make(map[*snapshot.Node]*Candidate, len(res.Candidates))
	for _, c := range res.Candidates {
		upstream[c.Node] = c
	}
	visited := make(map[*snapshot.Node]bool, len(res.Visited))
	for _, n := range res.Visited {
		visited[n] = true
	}
	var pl *placer
	if policy == Reschedulable {
		pl = newPlacer(d, cmp.Or(d.placementWork, MaxPlacementWork))
		d.placer = pl
		if u := res.Upstream; u != nil {
			// Exact, and the bound every node's choice must meet.
			pl.explain(u)
			pl.best = u.Unplaceable
		}
	}
	beyondLeft := cmp.Or(d.beyondSteps, MaxBeyondSteps)
	var nonViolating, violating []*Candidate
	statuses := res.NodeStatuses
	dropStatus := func(node *snapshot.Node) {
		statuses = slices.DeleteFunc(statuses, func(s NodeStatus) bool { return s.Node == node })
	}
	res.Searched = make([]*snapshot.Node, 0, len(nodes))
	for _, node := range nodes {
		res.Searched = append(res.Searched, node)
		base := upstream[node]
		if base == nil && !visited[node] {
			o := d.selectVictims(w, node)
			if o.cand == nil {
				statuses = append(statuses, NodeStatus{Node: node, Status: o.status})
			}
			base = o.cand
		}
		var cand *Candidate
		var cut bool
		limit := MaxSearchSteps
		if base != nil {
			cand = d.minimize(w, node, base)
			cut = !cand.Proven
		} else {
			// Upstream has no candidate here.
			limit = min(MaxSearchSteps, max(beyondLeft, 0))
			var steps int
			var searched bool
			cand, steps, searched, cut = d.searchBeyond(w, node, limit)
			if !searched {
				continue
			}
			beyondLeft -= steps
			limit = min(MaxSearchSteps, max(beyondLeft, 0))
			res.Beyond = append(res.Beyond, node)
			if cand == nil {
				if cut {
					res.CutOff = append(res.CutOff, node)
				}
				continue
			}
			dropStatus(node)
		}
		if pl != nil {
			var steps int
			var placeCut bool
			cand, steps, placeCut = d.reschedule(w, pl, node, base, cand, limit)
			cut = cut || placeCut
			if base == nil {
				beyondLeft -= steps
			}
		}
		if cut {
			res.CutOff = append(res.CutOff, node)
		}
		if policy == StrictPDB && cand.NumPDBViolations > 0 {
			dropStatus(node)
			statuses = append(statuses, NodeStatus{Node: node, Status: filter.Status{Code: filter.Unschedulable, Reasons: []string{MsgBreaksBudget}}})
			continue
		}
		if cand.NumPDBViolations == 0 {
			nonViolating = append(nonViolating, cand)
		} else {
			violating = append(violating, cand)
		}
	}
	res.NodeStatuses = statuses
	res.Candidates = append(nonViolating, violating...)
}

// minimize searches node for the best victim set, starting from base,
// upstream's candidate there.
func (d *dryRun) minimize(w *worker, node *snapshot.Node, base *Candidate) *Candidate {
	s := d.newSearch(w, node, base, MaxSearchSteps)
	if s == nil {
		return base
	}
	s.dfs(0)
	cand := w.candidate(node, s.units, s.best, 0, nil)
	cand.NumPDBViolations, cand.Broken = s.violations(s.best, cand)
	cand.Proven = !s.exhausted
	return cand
}

// searchBeyond searches node, where upstream's dry run found no room, for
// the best victim set among every subset of its potential victims, within
// limit fit checks. searched is false when there is nothing to search: no
// potential victims, or a fit that is monotone in the pods removed, where
// no subset makes room when removing them all does not, or a rejection,
// with them all removed, by a filter that is. cand is nil when no set was
// found; steps counts the fit checks made, and cut reports that the limit
// stopped the search (a set found then is not proven).
func (d *dryRun) searchBeyond(w *worker, node *snapshot.Node, limit int) (cand *Candidate, steps int, searched, cut bool) {
	s := d.newSearch(w, node, nil, limit)
	if s == nil || s.monotone || len(s.order) == 0 {
		return nil, 0, false, false
	}
	// Every potential victim is removed: a filter that rejects the pod
	// now and is monotone in the pods removed rejects it with any subset
	// removed. (The status lives in w: through the interface it would
	// escape.)
	if !s.fit.fits(&w.why) && !d.notMonotone(&w.why, s.units) {
		return nil, 1, false, false
	}
	s.steps++
	s.dfs(0)
	if !s.found {
		return nil, s.steps, true, s.exhausted
	}
	cand = w.candidate(node, s.units, s.best, 0, nil)
	cand.NumPDBViolations, cand.Broken = s.violations(s.best, cand)
	cand.Proven = !s.exhausted
	return cand, s.steps, true, s.exhausted
}

// newSearch prepares the search of node's victim sets, within limit fit
// checks, with base, upstream's candidate there, as the incumbent (none
// when base is nil); nil when the node's fit checker cannot be prepared.
func (d *dryRun) newSearch(w *worker, node *snapshot.Node, base *Candidate, limit int) *search {
	fit, err := d.prepare(w, node)
	if err != nil {
		return nil
	}
	units := &w.units
	n := units.len()
	removeAll(fit, n)
	order := w.indexes(&w.order, n)
	if !units.sorted {
		units.sortUnits(order)
	}
	// The search and its slices are the worker's, reused node after node.
	s := &w.search
	*s = search{units: units, budgets: d.budgets, order: order, fit: fit, now: d.scoreNow(), limit: limit,
		monotone: d.byResources || (len(d.c.Pod().RequiredAffinity()) == 0 && units.memberNodes == nil),
		buf:      s.buf, evicted: s.evicted[:0], alts: s.alts[:0], kept: s.kept[:0]}
	b := &s.buf
	s.matches = grow(&b.matches, len(units.members))
	s.allowed = grow(&b.allowed, len(d.budgets))
	for i := range d.budgets {
		s.allowed[i] = d.budgets[i].pdb.Status.DisruptionsAllowed
	}
	if len(d.budgets) > 0 {
		flat := b.matched[:0]
		ends := grow(&b.ends, len(units.members))
		for m := range units.members {
			flat = appendMatchingBudgets(flat, units.members[m].Pod, d.budgets)
			ends[m] = len(flat)
		}
		b.matched = flat
		start := 0
		for m := range units.members {
			s.matches[m] = flat[start:ends[m]:ends[m]]
			start = ends[m]
		}
	}
	// Upstream's set is the incumbent; without one, any set beats none.
	if base != nil {
		baseSet := s.setOf(&b.base, base)
		s.best, s.bestCost, s.found = baseSet, s.costOf(baseSet), true
	} else {
		s.best, s.bestCost, s.found = s.best[:0], setCost{violations: math.MaxInt}, false
	}
	s.relax(d, node)
	s.markPorted(d)
	return s
}

// markPorted marks the units holding host ports when the node's fit
// checker keeps them (the preemptor asks for some): the checker's ports
// are a set, as upstream's are, so removing a unit that was just added
// also frees a port an earlier kept unit holds; restorePorts puts those
// back.
func (s *search) markPorted(d *dryRun) {
	s.ported, s.kept = nil, s.kept[:0]
	if d.byResources || len(d.c.Pod().HostPorts()) == 0 {
		return
	}
	s.ported = grow(&s.buf.ported, len(s.order))
	for u := range s.ported {
		lo, hi := s.units.bounds(u)
		for m := lo; m < hi; m++ {
			if len(s.units.members[m].Pod.HostPorts()) > 0 {
				s.ported[u] = true
			}
		}
	}
}

// restorePorts makes the node's host ports again those of the state the
// dry run reaches for the current set (every potential victim removed,
// the kept units added back in order): each kept unit holding ports is
// removed and added again, which leaves every other count as it was.
func (s *search) restorePorts() {
	for _, k := range s.kept {
		s.fit.remove(int(k))
		s.fit.add(int(k))
	}
}

// notMonotone reports whether the rejection why, with every unit
// removed, may come from a filter whose verdict can turn from pass to fail
// as more of units are removed, so that a subset may still make room:
// InterPodAffinity's required affinity of the preemptor (the units may be
// the pods it requires; the plugin checks it before the anti-affinities,
// which are monotone), PodTopologySpread when units span nodes (removing a
// member elsewhere can lower the least crowded domain's count).
func (d *dryRun) notMonotone(why *filter.Status, units *unitList) bool {
	switch why.Plugin {
	case filter.InterPodAffinity:
		return len(d.c.Pod().RequiredAffinity()) > 0 && slices.Contains(why.Reasons, filter.ReasonPodAffinity)
	case filter.PodTopologySpread:
		return units.memberNodes != nil
	}
	return false
}

// setOf lists, in *buf, the units of the candidate's victims, in
// importance order.
func (s *search) setOf(buf *[]int32, c *Candidate) []int32 {
	in := s.buf.in
	if in == nil {
		in = map[*snapshot.Pod]bool{}
		s.buf.in = in
	}
	clear(in)
	for _, v := range c.Victims {
		in[v.Pod] = true
	}
	set := (*buf)[:0]
	for _, u := range s.order {
		lo, _ := s.units.bounds(int(u))
		if in[s.units.members[lo].Pod] {
			set = append(set, u)
		}
	}
	*buf = set
	return set
}

// searchBuffers are the slices of a search, kept by the worker from one
// node's search to the next.
type searchBuffers struct {
	matches                  [][]int
	matched                  []int
	ends                     []int
	allowed, saved, minPrio  []int32
	base, minimal            []int32
	contrib, suffix, largest []snapshot.Usage
	same, evictedAt, ported  []bool
	in                       map[*snapshot.Pod]bool
}

// grow returns *buf resized to n and zeroed, reallocated only when it is
// too small.
func grow[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n, n+n/2)
	}
	s := (*buf)[:n]
	clear(s)
	*buf = s
	return s
}

// relax prepares the resource relaxation of the search and, when the fit is
// checked on resources alone, the units that are interchangeable.
func (s *search) relax(d *dryRun, node *snapshot.Node) {
	n := len(s.order)
	units := s.units
	s.singles = units.spans == nil
	s.used = node.Requested.Usage(int64(len(node.Pods)))
	for _, p := range d.c.NominatedPods(node) {
		r := &p.Requests
		s.used.Add(r.MilliCPU, r.Memory, r.EphemeralStorage, 1)
	}
	s.contrib = grow(&s.buf.contrib, n)
	for u := range n {
		lo, hi := units.bounds(u)
		for m := lo; m < hi; m++ {
			if units.memberNodes == nil || units.memberNodes[m] == node {
				r := &units.members[m]
				s.contrib[u].Add(r.MilliCPU, r.Memory, r.EphemeralStorage, 1)
			}
		}
		c := &s.contrib[u]
		s.used.Add(c.MilliCPU, c.Memory, c.EphemeralStorage, -1)
		s.used.Pods -= c.Pods - 1
	}
	alloc := node.Allocatable.Usage(node.Allocatable.AllowedPods)
	req := &d.req
	unbounded := int64(math.MaxInt64 / 4)
	s.avail = snapshot.Usage{MilliCPU: unbounded, Memory: unbounded, EphemeralStorage: unbounded, Pods: alloc.Pods - 1}
	if req.MilliCPU > 0 {
		s.avail.MilliCPU = alloc.MilliCPU - req.MilliCPU
	}
	if req.Memory > 0 {
		s.avail.Memory = alloc.Memory - req.Memory
	}
	if req.EphemeralStorage > 0 {
		s.avail.EphemeralStorage = alloc.EphemeralStorage - req.EphemeralStorage
	}
	s.suffix = grow(&s.buf.suffix, n+1)
	s.largest = grow(&s.buf.largest, n+1)
	s.minPrio = grow(&s.buf.minPrio, n+1)
	s.minPrio[n] = math.MaxInt32
	for i := n - 1; i >= 0; i-- {
		c := &s.contrib[s.order[i]]
		s.suffix[i] = s.suffix[i+1]
		s.suffix[i].Add(c.MilliCPU, c.Memory, c.EphemeralStorage, 1)
		s.suffix[i].Pods += c.Pods - 1
		l := s.largest[i+1]
		s.largest[i] = snapshot.Usage{MilliCPU: max(l.MilliCPU, c.MilliCPU), Memory: max(l.Memory, c.Memory),
			EphemeralStorage: max(l.EphemeralStorage, c.EphemeralStorage), Pods: max(l.Pods, c.Pods)}
		s.minPrio[i] = s.minPrio[i+1]
		lo, hi := units.bounds(int(s.order[i]))
		for m := lo; m < hi; m++ {
			s.minPrio[i] = min(s.minPrio[i], units.members[m].Priority)
		}
	}
	s.evictedAt = grow(&s.buf.evictedAt, n)
	s.same = grow(&s.buf.same, n)
	if !d.byResources || !s.singles {
		return
	}
	// On resources alone, consecutive pods of one priority with the same
	// requests and budgets are interchangeable: only the youngest of a run
	// need be evicted (which also gives the latest start).
	for i := 1; i < n; i++ {
		a, b := &units.members[s.order[i-1]], &units.members[s.order[i]]
		s.same[i] = a.Priority == b.Priority && a.MilliCPU == b.MilliCPU && a.Memory == b.Memory &&
			a.EphemeralStorage == b.EphemeralStorage && slices.Equal(s.matches[s.order[i-1]], s.matches[s.order[i]])
	}
}

// needed is a lower bound on how many more units must be evicted once the
// units before position i are decided: what the undecided units request,
// kept, must fit, and each frees at most the largest of them; -1 when even
// evicting them all would not do.
func (s *search) needed(i int) int64 {
	need := int64(0)
	for _, k := range [...]struct{ used, suffix, avail, largest int64 }{
		{s.used.MilliCPU, s.suffix[i].MilliCPU, s.avail.MilliCPU, s.largest[i].MilliCPU},
		{s.used.Memory, s.suffix[i].Memory, s.avail.Memory, s.largest[i].Memory},
		{s.used.EphemeralStorage, s.suffix[i].EphemeralStorage, s.avail.EphemeralStorage, s.largest[i].EphemeralStorage},
		{s.used.Pods, s.suffix[i].Pods, s.avail.Pods, s.largest[i].Pods},
	} {
		deficit := k.used + k.suffix - k.avail
		if deficit <= 0 {
			continue
		}
		if k.used-k.avail > 0 || k.largest <= 0 {
			return -1
		}
		need = max(need, (deficit+k.largest-1)/k.largest)
	}
	return need
}

// hopeless reports whether no completion of the current set, with at
// least more evictions among the units from position i, can beat the best.
func (s *search) hopeless(i int, more int64) bool {
	if more < 0 {
		return true
	}
	lb := s.cost
	if more > 0 {
		if len(s.evicted) == 0 {
			lb.highest = s.minPrio[i]
		}
		lb.sum += more * (int64(s.minPrio[i]) + math.MaxInt32 + 1)
		lb.count += int(more)
	}
	if len(s.evicted) > 0 && s.singles {
		// The start criterion is the start of the first victim, fixed:
		// ties cannot win.
		lb.start = s.cost.start
		return !lb.less(s.bestCost)
	}
	return s.bestCost.prefixLess(lb)
}

// appendMatchingBudgets appends to out the budgets that evicting p charges.
func appendMatchingBudgets(out []int, p *snapshot.Pod, budgets []budget) []int {
	for i := range budgets {
		b := &budgets[i]
		if b.matches(p) {
			out = append(out, i)
		}
	}
	return out
}

// dfs decides the units order[i:], keeping each first (the greedy choice),
// then evicting it, and records every better complete set.
func (s *search) dfs(i int) {
	if s.steps >= s.limit {
		s.exhausted = true
		return
	}
	if i == len(s.order) {
		if len(s.evicted) == 0 {
			return
		}
		if !s.monotone {
			s.steps++
			if !s.fit.fits(nil) {
				return
			}
		}
		s.cost.start = s.startOf(s.evicted)
		if s.keep > 0 {
			s.record(s.evicted, s.cost)
			return
		}
		if !s.found || s.cost.less(s.bestCost) {
			s.best, s.bestCost, s.found = append(s.best[:0:0], s.evicted...), s.cost, true
		}
		return
	}
	u := s.order[i]
	c := &s.contrib[u]
	// Keep u: with every undecided unit removed, the preemptor must still
	// fit when the filters are monotone. (Of interchangeable units only the
	// youngest are evicted: once one is, the later ones are too.)
	if !(s.same[i] && s.evictedAt[i-1]) {
		s.used.Add(c.MilliCPU, c.Memory, c.EphemeralStorage, 1)
		s.used.Pods += c.Pods - 1
		if !s.hopeless(i+1, s.needed(i+1)) {
			s.fit.add(int(u))
			s.steps++
			if s.ported != nil && s.ported[u] {
				s.kept = append(s.kept, u)
			}
			if !s.monotone || s.fit.fits(nil) {
				s.dfs(i + 1)
			}
			s.fit.remove(int(u))
			if s.ported != nil && s.ported[u] {
				s.kept = s.kept[:len(s.kept)-1]
				s.restorePorts()
			}
		}
		s.used.Add(c.MilliCPU, c.Memory, c.EphemeralStorage, -1)
		s.used.Pods -= c.Pods - 1
	}
	// Evict u, unless no completion can beat the best.
	saved := s.cost
	s.evict(u)
	if len(s.evicted) == 1 && s.singles {
		s.cost.start = s.units.members[u].Start
	}
	s.evictedAt[i] = true
	if !s.hopeless(i+1, max(s.needed(i+1), 0)) {
		s.dfs(i + 1)
	}
	s.evictedAt[i] = false
	s.unevict(u)
	s.cost = saved
}

// evict adds unit u to the evicted set, charging its members' budgets.
func (s *search) evict(u int32) {
	lo, hi := s.units.bounds(int(u))
	if len(s.evicted) == 0 {
		s.cost.highest = s.units.members[lo].Priority
	}
	s.evicted = append(s.evicted, u)
	for m := lo; m < hi; m++ {
		s.cost.sum += int64(s.units.members[m].Priority) + math.MaxInt32 + 1
		s.cost.count++
		violating := false
		for _, b := range s.matches[m] {
			s.allowed[b]--
			if s.allowed[b] < 0 {
				violating = true
			}
		}
		if violating {
			s.cost.violations++
		}
	}
}

func (s *search) unevict(u int32) {
	lo, hi := s.units.bounds(int(u))
	s.evicted = s.evicted[:len(s.evicted)-1]
	for m := lo; m < hi; m++ {
		for _, b := range s.matches[m] {
			s.allowed[b]++
		}
	}
}

// costOf is the cost of evicting set, in importance order.
func (s *search) costOf(set []int32) setCost {
	saved := append(s.buf.saved[:0], s.allowed...)
	s.buf.saved = saved
	s.cost = setCost{}
	for _, u := range set {
		s.evict(u)
	}
	c := s.cost
	c.start = s.startOf(set)
	for i := len(set) - 1; i >= 0; i-- {
		s.unevict(set[i])
	}
	copy(s.allowed, saved)
	s.cost = setCost{}
	return c
}

// startOf is EarliestStart of the victims of set, as Candidate.Score
// computes it.
func (s *search) startOf(set []int32) int64 {
	lo, _ := s.units.bounds(int(set[0]))
	maxPrio, earliest := s.units.members[lo].Priority, s.units.members[lo].Start
	for _, u := range set {
		lo, hi := s.units.bounds(int(u))
		for m := lo; m < hi; m++ {
			r := &s.units.members[m]
			switch {
			case r.Priority == maxPrio:
				earliest = min(earliest, r.Start)
			case r.Priority > maxPrio:
				maxPrio, earliest = r.Priority, r.Start
			}
		}
	}
	return earliest
}

// violations counts the candidate's victims whose eviction breaks a budget,
// charging them in order, and says which budget each breaks.
func (s *search) violations(set []int32, cand *Candidate) (int, map[*Victim][]*policyv1.PodDisruptionBudget) {
	allowed := append(s.buf.saved[:0], s.allowed...)
	s.buf.saved = allowed
	count := 0
	var broken map[*Victim][]*policyv1.PodDisruptionBudget
	k := 0
	for _, u := range set {
		lo, hi := s.units.bounds(int(u))
		for m := lo; m < hi; m++ {
			v := cand.Victims[k]
			k++
			violating := false
			for _, b := range s.matches[m] {
				allowed[b]--
				if allowed[b] < 0 {
					violating = true
					if broken == nil {
						broken = map[*Victim][]*policyv1.PodDisruptionBudget{}
					}
					broken[v] = append(broken[v], s.budgets[b].pdb)
				}
			}
			if violating {
				count++
			}
		}
	}
	return count, broken
}
