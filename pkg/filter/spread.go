package filter

import (
	"math"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/reprieve/reprieve/pkg/snapshot"
)

// domainCount is the number of matching pods in one topology domain.
type domainCount struct {
	domain string
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
	// counts[i] maps each domain of constraint i to its matching pods.
	counts []map[string]int
	// sorted[i] are the domains of constraint i in ascending count.
	sorted [][]domainCount
	// included[n][i] reports whether node n (by index) takes part in
	// constraint i; nil for a node missing any topology key.
	included [][]bool
	// requiredAffinity is the incoming pod's required node affinity.
	requiredAffinity nodeaffinity.RequiredNodeAffinity
	// namespace is the incoming pod's; memo bit i reports whether a label
	// set is in it and selected by constraint i.
	namespace string
	memo      labelMemo
}

// spreadOverlay holds, per constraint, count changes by domain, and, when
// it models upstream's critical paths, their current values.
type spreadOverlay struct {
	delta []map[string]int
	// modelPaths makes minMatch read paths; paths is nil until the first
	// update, which copies the PreFilter paths.
	modelPaths bool
	paths      []criticalPaths
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
// pod has no DoNotSchedule constraints (the plugin is skipped).
func newSpreadState(snap *snapshot.Snapshot, pod *snapshot.Pod, workers int, memoBuf *[]uint32) (*spreadState, error) {
	cons, err := SpreadConstraints(pod.Obj.Spec.TopologySpreadConstraints, pod.Obj.Labels, v1.DoNotSchedule)
	if err != nil {
		return nil, err
	}
	// Without constraints of its own the pod gets the default constraints,
	// which for the system defaulting are all ScheduleAnyway: nothing to filter.
	if len(cons) == 0 {
		return nil, nil
	}
	s := &spreadState{
		constraints:      cons,
		counts:           make([]map[string]int, len(cons)),
		sorted:           make([][]domainCount, len(cons)),
		included:         make([][]bool, len(snap.Nodes)),
		requiredAffinity: nodeaffinity.GetRequiredNodeAffinity(pod.Obj),
		namespace:        pod.Namespace(),
	}
	preds := make([]func(*snapshot.LabelSet) bool, len(cons))
	for i := range cons {
		s.counts[i] = map[string]int{}
		sel := cons[i].Selector
		preds[i] = func(set *snapshot.LabelSet) bool {
			return set.Namespace == s.namespace && sel.Matches(set.Labels)
		}
	}
	s.memo = newLabelMemo(memoBuf, snap, workers, preds)
	// Counted in ranges of nodes on several goroutines, then summed.
	nodes := snap.Nodes
	local := make([][]map[string]int, rangeWorkers(workers, len(nodes), podsMatchingPerRange))
	forNodeRanges(len(nodes), len(local), func(w, lo, hi int) {
		counts := s.counts // the first range counts into the state itself
		if w > 0 {
			counts = make([]map[string]int, len(cons))
			for i := range counts {
				counts[i] = map[string]int{}
			}
		}
		for _, n := range nodes[lo:hi] {
			if !NodeHasTopologyKeys(n.Obj.Labels, cons) {
				continue
			}
			inc := make([]bool, len(cons))
			s.included[n.Index] = inc
			for i := range cons {
				if !cons[i].Includes(pod.Obj, n.Obj, s.requiredAffinity) {
					continue
				}
				inc[i] = true
				counts[i][n.Obj.Labels[cons[i].TopologyKey]] += s.countMatching(i, n.Pods)
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
	for i := range cons {
		list := make([]domainCount, 0, len(s.counts[i]))
		for d, c := range s.counts[i] {
			list = append(list, domainCount{d, c})
		}
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
	if c.Selector.Empty() {
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
	return p.Obj.Namespace == s.namespace && s.constraints[i].Selector.Matches(labels.Set(p.Obj.Labels))
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
	inc := s.included[node.Index]
	if inc == nil {
		return
	}
	for i := range s.constraints {
		c := &s.constraints[i]
		if !inc[i] || !s.selects(i, p) {
			continue
		}
		if o.delta == nil {
			o.delta = make([]map[string]int, len(s.constraints))
		}
		if o.delta[i] == nil {
			o.delta[i] = map[string]int{}
		}
		d := node.Obj.Labels[c.TopologyKey]
		o.delta[i][d] += sign
		if o.delta[i][d] == 0 {
			delete(o.delta[i], d)
		}
		if o.modelPaths {
			if o.paths == nil {
				o.paths = s.basePaths()
			}
			o.paths[i].update(d, s.counts[i][d]+o.delta[i][d])
		}
	}
}

// count returns the current number of matching pods in domain d.
func (s *spreadState) count(o *spreadOverlay, i int, d string) int {
	n := s.counts[i][d]
	if o.delta != nil && o.delta[i] != nil {
		n += o.delta[i][d]
	}
	return n
}

// minMatch returns the smallest count over the domains of constraint i, or
// 0 when there are fewer domains than minDomains.
func (s *spreadState) minMatch(o *spreadOverlay, i int) int {
	c := &s.constraints[i]
	if len(s.counts[i]) < int(c.MinDomains) {
		return 0
	}
	if len(s.sorted[i]) == 0 {
		return math.MaxInt32 // upstream's empty critical path
	}
	if o.modelPaths && o.paths != nil {
		return o.paths[i][0].count
	}
	if o.delta == nil || len(o.delta[i]) == 0 {
		return s.sorted[i][0].count
	}
	best := math.MaxInt
	for d, delta := range o.delta[i] {
		best = min(best, s.counts[i][d]+delta)
	}
	for _, dc := range s.sorted[i] {
		if _, touched := o.delta[i][dc.domain]; !touched {
			best = min(best, dc.count)
			break
		}
	}
	return best
}

// filter is PodTopologySpread's Filter.
func (s *spreadState) filter(o *spreadOverlay, pod *snapshot.Pod, node *snapshot.Node) Status {
	podLabels := labels.Set(pod.Obj.Labels)
	for i := range s.constraints {
		c := &s.constraints[i]
		d, ok := node.Obj.Labels[c.TopologyKey]
		if !ok {
			return statusSpreadLabel
		}
		self := 0
		if c.Selector.Matches(podLabels) {
			self = 1
		}
		if s.count(o, i, d)+self-s.minMatch(o, i) > int(c.MaxSkew) {
			return statusSpread
		}
	}
	return Status{}
}
