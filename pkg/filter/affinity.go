package filter

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/reprieve/reprieve/pkg/snapshot"
)

// topologyPair is a topology domain: a node label key and its value.
type topologyPair struct {
	key, value string
}

// pairCounts counts pods per topology domain. As upstream's
// topologyToMatchedTermCount it holds no zero entries, so its length is the
// number of domains with a non-zero count.
type pairCounts map[topologyPair]int64

// affinityState is InterPodAffinity's PreFilter state (without the
// InterPodAffinityHostnameFastPath alpha feature, which is off by default).
type affinityState struct {
	pod      *snapshot.Pod
	nsLabels labels.Set
	// The incoming pod's required terms, namespace selectors resolved.
	affinityTerms, antiAffinityTerms []snapshot.AffinityTerm
	// existingAnti counts existing pods whose anti-affinity the incoming
	// pod would violate; affinity and antiAffinity count existing pods
	// matching the incoming pod's (anti-)affinity terms.
	existingAnti, affinity, antiAffinity pairCounts
	// selfAffinity reports whether the incoming pod matches all of its own
	// affinity terms (the first pod of a self-affine group may schedule).
	selfAffinity bool
}

// affinityOverlay holds changes to the three counts and the resulting
// number of non-zero affinity domains.
type affinityOverlay struct {
	existingAnti, affinity, antiAffinity pairCounts
	affinityLen                          int
	touched                              bool
}

// newAffinityState is InterPodAffinity's PreFilter. It returns nil when the
// plugin is skipped: the pod has no required terms and no existing pod's
// anti-affinity matches it.
func newAffinityState(snap *snapshot.Snapshot, pod *snapshot.Pod, workers int) (*affinityState, error) {
	s := &affinityState{
		pod:               pod,
		nsLabels:          snap.NamespaceLabels(pod.Namespace()),
		affinityTerms:     resolveNamespaces(snap, pod.RequiredAffinity()),
		antiAffinityTerms: resolveNamespaces(snap, pod.RequiredAntiAffinity()),
		existingAnti:      pairCounts{},
		affinity:          pairCounts{},
		antiAffinity:      pairCounts{},
	}
	existingAnti := snap.NumRequiredAntiAffinity() > 0
	ownTerms := len(s.affinityTerms) > 0 || len(s.antiAffinityTerms) > 0
	if existingAnti || ownTerms {
		// Counted in ranges of nodes on several goroutines, then summed.
		nodes := snap.Nodes
		type counts struct{ existingAnti, affinity, antiAffinity pairCounts }
		local := make([]counts, rangeWorkers(workers, len(nodes), podsMatchingPerRange))
		forNodeRanges(len(nodes), len(local), func(w, lo, hi int) {
			c := counts{s.existingAnti, s.affinity, s.antiAffinity}
			if w > 0 {
				c = counts{pairCounts{}, pairCounts{}, pairCounts{}}
			}
			// Matches are counted per node, then added once per term.
			antiMatches := make([]int64, len(s.antiAffinityTerms))
			for _, n := range nodes[lo:hi] {
				for _, e := range n.PodsWithRequiredAntiAffinity {
					for i := range e.RequiredAntiAffinity() {
						t := &e.RequiredAntiAffinity()[i]
						if t.Matches(pod.Obj, s.nsLabels) {
							c.existingAnti.add(n, t.TopologyKey, 1)
						}
					}
				}
				if !ownTerms {
					continue
				}
				var affinityMatches int64
				clear(antiMatches)
				for _, e := range n.Pods {
					if matchesAll(s.affinityTerms, e) {
						affinityMatches++
					}
					for i := range s.antiAffinityTerms {
						if s.antiAffinityTerms[i].Matches(e.Obj, nil) {
							antiMatches[i]++
						}
					}
				}
				if affinityMatches > 0 {
					for i := range s.affinityTerms {
						c.affinity.add(n, s.affinityTerms[i].TopologyKey, affinityMatches)
					}
				}
				for i, m := range antiMatches {
					if m > 0 {
						c.antiAffinity.add(n, s.antiAffinityTerms[i].TopologyKey, m)
					}
				}
			}
			local[w] = c
		})
		for _, c := range local[1:] {
			s.existingAnti.merge(c.existingAnti)
			s.affinity.merge(c.affinity)
			s.antiAffinity.merge(c.antiAffinity)
		}
	}
	if len(s.existingAnti) == 0 && len(pod.RequiredAffinity()) == 0 && len(pod.RequiredAntiAffinity()) == 0 {
		return nil, nil
	}
	s.selfAffinity = matchesAll(s.affinityTerms, pod)
	return s, nil
}

// resolveNamespaces copies terms, replacing a non-empty namespace selector
// by the names of the snapshot's namespaces it selects (as upstream's
// PreFilter does with its namespace lister). An empty selector ({}) is kept:
// it selects every namespace.
func resolveNamespaces(snap *snapshot.Snapshot, terms []snapshot.AffinityTerm) []snapshot.AffinityTerm {
	if len(terms) == 0 {
		return nil
	}
	out := make([]snapshot.AffinityTerm, len(terms))
	for i, t := range terms {
		if !t.NamespaceSelector.Empty() {
			ns := sets.New(sets.List(t.Namespaces)...)
			ns.Insert(snap.NamespacesMatching(t.NamespaceSelector)...)
			t.Namespaces = ns
			t.NamespaceSelector = labels.Nothing()
		}
		out[i] = t
	}
	return out
}

// matchesAll reports whether p matches every term; false for no terms.
func matchesAll(terms []snapshot.AffinityTerm, p *snapshot.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(p.Obj, nil) {
			return false
		}
	}
	return true
}

// merge adds the counts of o.
func (m pairCounts) merge(o pairCounts) {
	for p, v := range o {
		m[p] += v
		if m[p] == 0 {
			delete(m, p)
		}
	}
}

func (m pairCounts) add(n *snapshot.Node, key string, v int64) {
	if val, ok := n.Obj.Labels[key]; ok {
		p := topologyPair{key, val}
		m[p] += v
		if m[p] == 0 {
			delete(m, p)
		}
	}
}

// bump changes the overlay for (key, node's value) by v and returns the
// pair's count before and after, base included.
func bump(base pairCounts, over *pairCounts, n *snapshot.Node, key string, v int64) (before, after int64, ok bool) {
	val, has := n.Obj.Labels[key]
	if !has {
		return 0, 0, false
	}
	if *over == nil {
		*over = pairCounts{}
	}
	p := topologyPair{key, val}
	before = base[p] + (*over)[p]
	(*over)[p] += v
	if (*over)[p] == 0 {
		delete(*over, p)
	}
	return before, before + v, true
}

// update is InterPodAffinity's AddPod/RemovePod for existing pod e on node n.
func (s *affinityState) update(o *affinityOverlay, e *snapshot.Pod, n *snapshot.Node, v int64) {
	if !o.touched {
		o.affinityLen = len(s.affinity)
		o.touched = true
	}
	for i := range e.RequiredAntiAffinity() {
		t := &e.RequiredAntiAffinity()[i]
		if t.Matches(s.pod.Obj, s.nsLabels) {
			bump(s.existingAnti, &o.existingAnti, n, t.TopologyKey, v)
		}
	}
	if matchesAll(s.affinityTerms, e) {
		for i := range s.affinityTerms {
			before, after, ok := bump(s.affinity, &o.affinity, n, s.affinityTerms[i].TopologyKey, v)
			if !ok {
				continue
			}
			if before == 0 && after != 0 {
				o.affinityLen++
			} else if before != 0 && after == 0 {
				o.affinityLen--
			}
		}
	}
	for i := range s.antiAffinityTerms {
		t := &s.antiAffinityTerms[i]
		if t.Matches(e.Obj, nil) {
			bump(s.antiAffinity, &o.antiAffinity, n, t.TopologyKey, v)
		}
	}
}

func get(base, over pairCounts, p topologyPair) int64 {
	return base[p] + over[p]
}

// filter is InterPodAffinity's Filter.
func (s *affinityState) filter(o *affinityOverlay, n *snapshot.Node) Status {
	nodeLabels := n.Obj.Labels
	if len(s.affinityTerms) > 0 {
		podsExist := true
		for i := range s.affinityTerms {
			key := s.affinityTerms[i].TopologyKey
			val, ok := nodeLabels[key]
			if !ok {
				return statusAffinity
			}
			if get(s.affinity, o.affinity, topologyPair{key, val}) <= 0 {
				podsExist = false
			}
		}
		if !podsExist {
			affLen := len(s.affinity)
			if o.touched {
				affLen = o.affinityLen
			}
			if !(affLen == 0 && s.selfAffinity) {
				return statusAffinity
			}
		}
	}
	for i := range s.antiAffinityTerms {
		key := s.antiAffinityTerms[i].TopologyKey
		if val, ok := nodeLabels[key]; ok && get(s.antiAffinity, o.antiAffinity, topologyPair{key, val}) > 0 {
			return statusAntiAffinity
		}
	}
	if len(s.existingAnti) > 0 || len(o.existingAnti) > 0 {
		for k, v := range nodeLabels {
			if get(s.existingAnti, o.existingAnti, topologyPair{k, v}) > 0 {
				return statusExistingAnti
			}
		}
	}
	return Status{}
}
