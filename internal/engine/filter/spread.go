package filter

import (
	"math"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// domainCount is the number of matching pods in one topology domain.
type domainCount struct {
	domain string
	id     int32
	count  int
}

// spreadState is PodTopologySpread's PreFilter state.
//
// Upstream tracks the two smallest domains ("critical paths") and updates
// them incrementally. As long as a dry run only changes the domain of one
// node, its smallest value is always the true minimum over all domains,
// which is what this state computes by default: the base counts sorted
// once, with the few domains an overlay touched looked up directly.
//
// When a dry run changes several domains (a pod group evicted whole spans
// nodes), upstream's two paths can lose track of the minimum: raising both
// path domains above a third one leaves the third unseen. An overlay marked
// with State.ModelCriticalPaths then replays upstream's paths update by
// update instead (see criticalPaths).
type spreadState struct {
	constraints []SpreadConstraint
	// doms[i] are the snapshot's domains of constraint i's topology key.
	doms []*snapshot.Domains
	// counts[i] holds, by domain id, the matching pods of each domain of
	// constraint i; present[i] whether the domain has a node taking part
	// (upstream's map of counts has an entry for it), numDomains[i] how
	// many do.
	counts     [][]int
	present    [][]bool
	numDomains []int
	// sorted[i] are the present domains of constraint i in ascending count.
	sorted [][]domainCount
	// included[n*len(constraints)+i] reports whether node n (by index)
	// takes part in constraint i; false for a node missing any topology key.
	included []bool
	// requiredAffinity is the incoming pod's required node affinity.
	requiredAffinity nodeaffinity.RequiredNodeAffinity
	// namespace is the incoming pod's; memo bit i reports whether a label
	// set is in it and selected by constraint i.
	namespace string
	// emptyMatchesAll: PreFilter counts every pod of the namespace for a
	// constraint with an empty selector (Options.SpreadEmptySelectorMatchesAll).
	emptyMatchesAll bool
	memo            labelMemo
	// self[i] reports whether constraint i selects the incoming pod.
	self []bool
}

// spreadOverlay holds, per constraint, count changes by domain, and, when
// it models upstream's critical paths, their current values.
type spreadOverlay struct {
	delta []spreadDelta
	// modelPaths makes minMatch read paths; paths is nil until the first
	// update, which copies the PreFilter paths.
	modelPaths bool
	paths      []criticalPaths
}

// spreadDelta is a change to the count of a domain of a constraint.
type spreadDelta struct {
	constraint int
	domain     int32
	delta      int
}

// criticalPath is a domain and its count of matching pods.
type criticalPath struct {
	domain string
	count  int
}

// criticalPaths are upstream's two critical paths of a constraint:
// paths[0] holds the minimum as long as updates are the ones upstream's
// CAVEAT allows (one node changing); paths[1] is at least paths[0].
type criticalPaths [2]criticalPath

func newCriticalPaths() criticalPaths {
	return criticalPaths{{count: math.MaxInt32}, {count: math.MaxInt32}}
}

// update is upstream's criticalPaths.update, to the letter: domain's count
// is now count.
func (p *criticalPaths) update(domain string, count int) {
	i := -1
	if domain == p[0].domain {
		i = 0
	} else if domain == p[1].domain {
		i = 1
	}
	if i >= 0 {
		p[i].count = count
		if p[0].count > p[1].count {
			p[0], p[1] = p[1], p[0]
		}
		return
	}
	if count < p[0].count {
		p[1] = p[0]
		p[0] = criticalPath{domain, count}
	} else if count < p[1].count {
		p[1] = criticalPath{domain, count}
	}
}

// newSpreadState is PodTopologySpread's PreFilter. It returns nil when the
// pod has no DoNotSchedule constraints (the plugin is skipped): neither of
// its own nor, when it has no constraints at all, among the defaults (the
// profile's with defaultingType List; the system's filter nothing), which
// take the pod's default selector and do not apply when it is empty.
func newSpreadState(snap *snapshot.Snapshot, pod *snapshot.Pod, obj *v1.Pod, defaults []v1.TopologySpreadConstraint, emptyMatchesAll bool, workers int, memoBuf *[]uint32) (*spreadState, error) {
	cons, err := PodSpreadConstraints(snap, obj, defaults, v1.DoNotSchedule)
	if err != nil || len(cons) == 0 {
		return nil, err
	}
	s := &spreadState{
		constraints:      cons,
		doms:             make([]*snapshot.Domains, len(cons)),
		counts:           make([][]int, len(cons)),
		present:          make([][]bool, len(cons)),
		numDomains:       make([]int, len(cons)),
		sorted:           make([][]domainCount, len(cons)),
		included:         make([]bool, len(snap.Nodes)*len(cons)),
		requiredAffinity: nodeaffinity.GetRequiredNodeAffinity(obj),
		namespace:        pod.Namespace(),
		emptyMatchesAll:  emptyMatchesAll,
		self:             make([]bool, len(cons)),
	}
	preds := make([]func(*snapshot.LabelSet) bool, len(cons))
	for i := range cons {
		s.doms[i] = snap.Domains(cons[i].TopologyKey)
		s.counts[i] = make([]int, len(s.doms[i].Values))
		s.present[i] = make([]bool, len(s.doms[i].Values))
		sel := cons[i].Selector
		s.self[i] = sel.Matches(pod.Labels())
		preds[i] = func(set *snapshot.LabelSet) bool {
			return set.Namespace == s.namespace && sel.Matches(set.Labels)
		}
	}
	s.memo = newLabelMemo(memoBuf, snap, workers, preds)
	// Counted in ranges of nodes on several goroutines, then summed.
	nodes := snap.Nodes
	local := make([][][]int, rangeWorkers(workers, len(nodes), podsMatchingPerRange))
	forNodeRanges(len(nodes), len(local), func(w, lo, hi int) {
		counts := s.counts // the first range counts into the state itself
		if w > 0 {
			counts = make([][]int, len(cons))
			for i := range counts {
				counts[i] = make([]int, len(s.counts[i]))
			}
		}
	nodes:
		for _, n := range nodes[lo:hi] {
			for i := range cons {
				if s.doms[i].OfNode[n.Index] < 0 {
					continue nodes
				}
			}
			for i := range cons {
				if !cons[i].Includes(obj, n.Obj, s.requiredAffinity) {
					continue
				}
				s.included[n.Index*len(cons)+i] = true
				counts[i][s.doms[i].OfNode[n.Index]] += s.countMatching(i, n.Pods)
			}
		}
		local[w] = counts
	})
	for _, counts := range local[1:] {
		for i := range cons {
			for d, c := range counts[i] {
				s.counts[i][d] += c
			}
		}
	}
	for _, n := range nodes {
		for i := range cons {
			if s.included[n.Index*len(cons)+i] {
				s.present[i][s.doms[i].OfNode[n.Index]] = true
			}
		}
	}
	for i := range cons {
		var list []domainCount
		for d, c := range s.counts[i] {
			if s.present[i][d] {
				list = append(list, domainCount{s.doms[i].Values[d], int32(d), c})
			}
		}
		s.numDomains[i] = len(list)
		slices.SortFunc(list, func(a, b domainCount) int {
			if a.count != b.count {
				return a.count - b.count
			}
			if a.domain < b.domain {
				return -1
			}
			if a.domain > b.domain {
				return 1
			}
			return 0
		})
		s.sorted[i] = list
	}
	return s, nil
}

// countMatching is CountMatching for constraint i, read from the memo.
func (s *spreadState) countMatching(i int, pods []*snapshot.Pod) int {
	c := &s.constraints[i]
	if c.Selector.Empty() && !s.emptyMatchesAll {
		return 0
	}
	n := 0
	for _, p := range pods {
		if p.Terminating() {
			continue
		}
		if s.selects(i, p) {
			n++
		}
	}
	return n
}

// selects reports whether constraint i selects p: same namespace as the
// incoming pod, labels selected (terminating or not).
func (s *spreadState) selects(i int, p *snapshot.Pod) bool {
	if bits, ok := s.memo.lookup(p); ok {
		return bits&(1<<i) != 0
	}
	return p.Namespace() == s.namespace && s.constraints[i].Selector.Matches(p.Labels())
}

// basePaths returns the critical paths of every constraint as upstream's
// PreFilter leaves them. Upstream builds them by updating them with every
// domain in map order, and with ties that order decides which domains hold
// the paths; here it is ascending count, then domain name (one of
// upstream's possible outcomes), which leaves the first two sorted domains.
func (s *spreadState) basePaths() []criticalPaths {
	paths := make([]criticalPaths, len(s.constraints))
	for i := range paths {
		paths[i] = newCriticalPaths()
		for _, dc := range s.sorted[i][:min(2, len(s.sorted[i]))] {
			paths[i].update(dc.domain, dc.count)
		}
	}
	return paths
}

// update is PodTopologySpread's AddPod/RemovePod. Unlike PreFilter it does
// not skip terminating pods or empty selectors: removing a terminating
// victim lowers a count it never raised. This is upstream's behaviour and
// is kept on purpose.
func (s *spreadState) update(o *spreadOverlay, p *snapshot.Pod, node *snapshot.Node, sign int) {
	if node.Index < 0 || node.Index*len(s.constraints) >= len(s.included) {
		return // not one of the snapshot's nodes: it takes part in nothing
	}
	inc := s.included[node.Index*len(s.constraints):][:len(s.constraints)]
	for i := range s.constraints {
		if !inc[i] || !s.selects(i, p) {
			continue
		}
		d := s.doms[i].OfNode[node.Index]
		delta := o.add(i, d, sign)
		if o.modelPaths {
			if o.paths == nil {
				o.paths = s.basePaths()
			}
			o.paths[i].update(s.doms[i].Values[d], s.counts[i][d]+delta)
		}
	}
}

// add changes the count of domain d of constraint i by v and returns the
// change now.
func (o *spreadOverlay) add(i int, d int32, v int) int {
	for k := range o.delta {
		if e := &o.delta[k]; e.constraint == i && e.domain == d {
			e.delta += v
			return e.delta
		}
	}
	o.delta = append(o.delta, spreadDelta{i, d, v})
	return v
}

// get returns the change of the count of domain d of constraint i, and
// whether the overlay touched it.
func (o *spreadOverlay) get(i int, d int32) (int, bool) {
	for k := range o.delta {
		if e := &o.delta[k]; e.constraint == i && e.domain == d {
			return e.delta, true
		}
	}
	return 0, false
}

// count returns the current number of matching pods in domain d.
func (s *spreadState) count(o *spreadOverlay, i int, d int32) int {
	delta, _ := o.get(i, d)
	return s.counts[i][d] + delta
}

// minMatch returns the smallest count over the domains of constraint i, or
// 0 when there are fewer domains than minDomains.
func (s *spreadState) minMatch(o *spreadOverlay, i int) int {
	c := &s.constraints[i]
	if s.numDomains[i] < int(c.MinDomains) {
		return 0
	}
	if len(s.sorted[i]) == 0 {
		return math.MaxInt32 // upstream's empty critical path
	}
	if o.modelPaths && o.paths != nil {
		return o.paths[i][0].count
	}
	best, touched := math.MaxInt, false
	for _, e := range o.delta {
		if e.constraint == i {
			best, touched = min(best, s.counts[i][e.domain]+e.delta), true
		}
	}
	if !touched {
		return s.sorted[i][0].count
	}
	for _, dc := range s.sorted[i] {
		if _, touched := o.get(i, dc.id); !touched {
			best = min(best, dc.count)
			break
		}
	}
	return best
}

// filter is PodTopologySpread's Filter.
func (s *spreadState) filter(o *spreadOverlay, node *snapshot.Node) Status {
	for i := range s.constraints {
		c := &s.constraints[i]
		d := s.doms[i].Of(node)
		if d < 0 {
			return statusSpreadLabel
		}
		self := 0
		if s.self[i] {
			self = 1
		}
		if s.count(o, i, d)+self-s.minMatch(o, i) > int(c.MaxSkew) {
			return statusSpread
		}
	}
	return Status{}
}
