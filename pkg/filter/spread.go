package filter

import (
	"math"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/reprieve/reprieve/pkg/snapshot"
)

// spreadConstraint is a DoNotSchedule topology spread constraint with
// upstream's defaults applied and matchLabelKeys merged into the selector.
type spreadConstraint struct {
	maxSkew            int32
	topologyKey        string
	selector           labels.Selector
	minDomains         int32
	nodeAffinityPolicy v1.NodeInclusionPolicy
	nodeTaintsPolicy   v1.NodeInclusionPolicy
}

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
	constraints []spreadConstraint
	// counts[i] maps each domain of constraint i to its matching pods.
	counts []map[string]int
	// sorted[i] are the domains of constraint i in ascending count.
	sorted [][]domainCount
	// included[n][i] reports whether node n (by index) takes part in
	// constraint i; nil for a node missing any topology key.
	included [][]bool
	// requiredAffinity is the incoming pod's required node affinity.
	requiredAffinity nodeaffinity.RequiredNodeAffinity
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
func newSpreadState(snap *snapshot.Snapshot, pod *snapshot.Pod) (*spreadState, error) {
	var cons []spreadConstraint
	for _, c := range pod.Obj.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable != v1.DoNotSchedule {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, err
		}
		if len(c.MatchLabelKeys) > 0 {
			matchLabels := labels.Set{}
			for _, k := range c.MatchLabelKeys {
				if v, ok := pod.Obj.Labels[k]; ok {
					matchLabels[k] = v
				}
			}
			if len(matchLabels) > 0 {
				sel = mergeLabelSetWithSelector(matchLabels, sel)
			}
		}
		sc := spreadConstraint{
			maxSkew:            c.MaxSkew,
			topologyKey:        c.TopologyKey,
			selector:           sel,
			minDomains:         1,
			nodeAffinityPolicy: v1.NodeInclusionPolicyHonor,
			nodeTaintsPolicy:   v1.NodeInclusionPolicyIgnore,
		}
		if c.MinDomains != nil {
			sc.minDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			sc.nodeAffinityPolicy = *c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != nil {
			sc.nodeTaintsPolicy = *c.NodeTaintsPolicy
		}
		cons = append(cons, sc)
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
	}
	for i := range cons {
		s.counts[i] = map[string]int{}
	}
	for _, n := range snap.Nodes {
		if !nodeHasKeys(n.Obj.Labels, cons) {
			continue
		}
		inc := make([]bool, len(cons))
		s.included[n.Index] = inc
		for i := range cons {
			if !s.includes(&cons[i], pod.Obj, n.Obj) {
				continue
			}
			inc[i] = true
			s.counts[i][n.Obj.Labels[cons[i].topologyKey]] += countMatching(n.Pods, cons[i].selector, pod.Namespace())
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

// mergeLabelSetWithSelector adds matchLabels to a selector as upstream does;
// a selector without requirements (labels.Nothing) is returned unchanged.
func mergeLabelSetWithSelector(matchLabels labels.Set, s labels.Selector) labels.Selector {
	merged := labels.SelectorFromSet(matchLabels)
	reqs, ok := s.Requirements()
	if !ok {
		return s
	}
	for _, r := range reqs {
		merged = merged.Add(r)
	}
	return merged
}

func nodeHasKeys(nodeLabels map[string]string, cons []spreadConstraint) bool {
	for _, c := range cons {
		if _, ok := nodeLabels[c.topologyKey]; !ok {
			return false
		}
	}
	return true
}

// includes applies the constraint's nodeAffinityPolicy and nodeTaintsPolicy.
func (s *spreadState) includes(c *spreadConstraint, pod *v1.Pod, node *v1.Node) bool {
	if c.nodeAffinityPolicy == v1.NodeInclusionPolicyHonor {
		if ok, _ := s.requiredAffinity.Match(node); !ok {
			return false
		}
	}
	if c.nodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
		if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations, doNotScheduleTaint, false); untolerated {
			return false
		}
	}
	return true
}

// countMatching counts the pods a constraint counts at PreFilter: same
// namespace, not terminating, selected. An empty selector counts nothing
// here (while updates still match everything, as upstream).
func countMatching(pods []*snapshot.Pod, sel labels.Selector, ns string) int {
	if sel.Empty() {
		return 0
	}
	n := 0
	for _, p := range pods {
		if p.Obj.DeletionTimestamp != nil || p.Obj.Namespace != ns {
			continue
		}
		if sel.Matches(labels.Set(p.Obj.Labels)) {
			n++
		}
	}
	return n
}

// update is PodTopologySpread's AddPod/RemovePod. Unlike PreFilter it does
// not skip terminating pods or empty selectors: removing a terminating
// victim lowers a count it never raised. This is upstream's behaviour and
// is kept on purpose.
func (s *spreadState) update(o *spreadOverlay, p, incoming *snapshot.Pod, node *snapshot.Node, sign int) {
	if p.Obj.Namespace != incoming.Obj.Namespace {
		return
	}
	inc := s.included[node.Index]
	if inc == nil {
		return
	}
	podLabels := labels.Set(p.Obj.Labels)
	for i := range s.constraints {
		c := &s.constraints[i]
		if !inc[i] || !c.selector.Matches(podLabels) {
			continue
		}
		if o.delta == nil {
			o.delta = make([]map[string]int, len(s.constraints))
		}
		if o.delta[i] == nil {
			o.delta[i] = map[string]int{}
		}
		d := node.Obj.Labels[c.topologyKey]
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
	if len(s.counts[i]) < int(c.minDomains) {
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
		d, ok := node.Obj.Labels[c.topologyKey]
		if !ok {
			return statusSpreadLabel
		}
		self := 0
		if c.selector.Matches(podLabels) {
			self = 1
		}
		if s.count(o, i, d)+self-s.minMatch(o, i) > int(c.maxSkew) {
			return statusSpread
		}
	}
	return Status{}
}
