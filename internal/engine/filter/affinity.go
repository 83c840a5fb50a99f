package filter

import (
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// topologyPair is a topology domain: a node label key and its value.
type topologyPair struct {
	key, value string
}

// domainCounts counts pods per topology domain, upstream's
// topologyToMatchedTermCount, for the few topology keys that have counts:
// per key, a count for each of the snapshot's domains of the key
// (snapshot.Domains), indexed by domain id.
type domainCounts struct {
	keys []keyCounts
	// spare are count slices of earlier cycles, for reuse.
	spare [][]int64
}

// keyCounts are the counts of one key's domains.
type keyCounts struct {
	dom    *snapshot.Domains
	counts []int64
}

// reset empties the counts, keeping their memory for reuse.
func (c *domainCounts) reset() {
	for _, k := range c.keys {
		c.spare = append(c.spare, k.counts)
	}
	c.keys = c.keys[:0]
}

// slot returns the counts of key, adding zero counts for it if needed.
func (c *domainCounts) slot(snap *snapshot.Snapshot, key string) *keyCounts {
	for i := range c.keys {
		if c.keys[i].dom.Key == key {
			return &c.keys[i]
		}
	}
	dom := snap.Domains(key)
	var counts []int64
	for i, sp := range c.spare {
		if cap(sp) >= len(dom.Values) {
			counts = sp[:len(dom.Values)]
			clear(counts)
			c.spare = slices.Delete(c.spare, i, i+1)
			break
		}
	}
	if counts == nil {
		counts = make([]int64, len(dom.Values))
	}
	c.keys = append(c.keys, keyCounts{dom: dom, counts: counts})
	return &c.keys[len(c.keys)-1]
}

// add adds v to the count of n's domain of key, if n has the key.
func (c *domainCounts) add(snap *snapshot.Snapshot, n *snapshot.Node, key string, v int64) {
	k := c.slot(snap, key)
	if d := k.dom.Of(n); d >= 0 {
		k.counts[d] += v
	}
}

// merge adds the counts of o.
func (c *domainCounts) merge(snap *snapshot.Snapshot, o *domainCounts) {
	for _, ok := range o.keys {
		k := c.slot(snap, ok.dom.Key)
		for d, v := range ok.counts {
			k.counts[d] += v
		}
	}
}

// nonZero returns the number of domains with a non-zero count.
func (c *domainCounts) nonZero() int {
	n := 0
	for _, k := range c.keys {
		for _, v := range k.counts {
			if v != 0 {
				n++
			}
		}
	}
	return n
}

// at returns n's domain of key, its count, and whether n has the key.
func (c *domainCounts) at(n *snapshot.Node, key string) (topologyPair, int64, bool) {
	for i := range c.keys {
		k := &c.keys[i]
		if k.dom.Key != key {
			continue
		}
		if d := k.dom.Of(n); d >= 0 {
			return topologyPair{key, k.dom.Values[d]}, k.counts[d], true
		}
		if n.Index >= 0 {
			return topologyPair{}, 0, false // one of the snapshot's nodes, without the key
		}
		break
	}
	val, ok := n.Obj.Labels[key]
	return topologyPair{key, val}, 0, ok
}

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
	existingAnti, affinity, antiAffinity *domainCounts
	// affinityLen is the number of affinity's non-zero domains.
	affinityLen int
	// selfAffinity reports whether the incoming pod matches all of its own
	// affinity terms (the first pod of a self-affine group may schedule).
	selfAffinity bool
	// memo bit 0 reports whether a label set matches all affinityTerms,
	// bit 1+i whether it matches antiAffinityTerms[i].
	memo labelMemo
	// existingMemo reports, by snapshot.AffinityTerm.ID, whether each
	// distinct anti-affinity term of the existing pods selects the
	// incoming pod.
	existingMemo []bool
}

// affinityOverlay holds changes to the three counts and the resulting
// number of non-zero affinity domains.
type affinityOverlay struct {
	existingAnti, affinity, antiAffinity pairOverlay
	affinityLen                          int
	touched                              bool
}

// pairOverlay holds count changes by topology domain. A dry run changes
// the domains of one node or few, so a list searched in order beats a map.
// Entries whose change is back to zero stay.
type pairOverlay []pairDelta

type pairDelta struct {
	pair  topologyPair
	delta int64
}

// get returns the change of p's count.
func (o pairOverlay) get(p topologyPair) int64 {
	for i := range o {
		if o[i].pair == p {
			return o[i].delta
		}
	}
	return 0
}

// add changes p's count by v and returns the change now.
func (o *pairOverlay) add(p topologyPair, v int64) int64 {
	for i := range *o {
		if e := &(*o)[i]; e.pair == p {
			e.delta += v
			return e.delta
		}
	}
	*o = append(*o, pairDelta{p, v})
	return v
}

// keyCount counts the matches of one topology key on a node.
type keyCount struct {
	key   string
	count int64
}

// addKeyCount counts one more match of key in list.
func addKeyCount(list []keyCount, key string) []keyCount {
	for i := range list {
		if list[i].key == key {
			list[i].count++
			return list
		}
	}
	return append(list, keyCount{key, 1})
}

// newAffinityState is InterPodAffinity's PreFilter. It returns nil when the
// plugin is skipped: the pod has no required terms and no existing pod's
// anti-affinity matches it.
func newAffinityState(snap *snapshot.Snapshot, pod *snapshot.Pod, workers int, buf *affinityBuffers) (*affinityState, error) {
	if snap.NumRequiredAntiAffinity() == 0 && len(pod.RequiredAffinity()) == 0 && len(pod.RequiredAntiAffinity()) == 0 {
		return nil, nil // nothing to count, nothing to filter
	}
	s := &affinityState{
		pod:               pod,
		nsLabels:          snap.NamespaceLabels(pod.Namespace()),
		affinityTerms:     resolveNamespaces(snap, pod.RequiredAffinity()),
		antiAffinityTerms: resolveNamespaces(snap, pod.RequiredAntiAffinity()),
	}
	existingAnti := snap.NumRequiredAntiAffinity() > 0
	ownTerms := len(s.affinityTerms) > 0 || len(s.antiAffinityTerms) > 0
	if ownTerms {
		preds := []func(*snapshot.LabelSet) bool{func(set *snapshot.LabelSet) bool { return setMatchesAll(s.affinityTerms, set) }}
		for i := range min(len(s.antiAffinityTerms), maxMemoPredicates-1) {
			t := &s.antiAffinityTerms[i]
			preds = append(preds, func(set *snapshot.LabelSet) bool { return setMatches(t, set) })
		}
		s.memo = newLabelMemo(&buf.memo, snap, workers, preds)
	}
	if existingAnti {
		terms := snap.AntiAffinityTerms()
		if cap(buf.existing) < len(terms) {
			buf.existing = make([]bool, len(terms), len(terms)+len(terms)/4)
		}
		s.existingMemo = buf.existing[:len(terms)]
		for id, t := range terms {
			s.existingMemo[id] = t != nil && t.Matches(pod, s.nsLabels)
		}
	}
	if existingAnti || ownTerms {
		// Counted in ranges of nodes on several goroutines, then summed.
		nodes := snap.Nodes
		local := buf.counts(rangeWorkers(workers, len(nodes), podsMatchingPerRange))
		forNodeRanges(len(nodes), len(local), func(w, lo, hi int) {
			c := &local[w]
			for i := range s.affinityTerms {
				c.affinity.slot(snap, s.affinityTerms[i].TopologyKey)
			}
			for i := range s.antiAffinityTerms {
				c.antiAffinity.slot(snap, s.antiAffinityTerms[i].TopologyKey)
			}
			// Matches are counted per node, then added once per term
			// (or, for existing pods' terms, once per topology key).
			antiMatches := make([]int64, len(s.antiAffinityTerms))
			var existing []keyCount
			for _, n := range nodes[lo:hi] {
				existing = existing[:0]
				for _, e := range n.PodsWithRequiredAntiAffinity {
					for i := range e.RequiredAntiAffinity() {
						t := &e.RequiredAntiAffinity()[i]
						if s.existingSelects(t) {
							existing = addKeyCount(existing, t.TopologyKey)
						}
					}
				}
				for _, kc := range existing {
					c.existingAnti.add(snap, n, kc.key, kc.count)
				}
				if !ownTerms {
					continue
				}
				var affinityMatches int64
				clear(antiMatches)
				for _, e := range n.Pods {
					bits := s.matches(e)
					if bits&1 != 0 {
						affinityMatches++
					}
					for i := range s.antiAffinityTerms {
						if s.antiSelects(bits, i, e) {
							antiMatches[i]++
						}
					}
				}
				if affinityMatches > 0 {
					for i := range s.affinityTerms {
						c.affinity.add(snap, n, s.affinityTerms[i].TopologyKey, affinityMatches)
					}
				}
				for i, m := range antiMatches {
					if m > 0 {
						c.antiAffinity.add(snap, n, s.antiAffinityTerms[i].TopologyKey, m)
					}
				}
			}
		})
		for i := range local[1:] {
			local[0].existingAnti.merge(snap, &local[1+i].existingAnti)
			local[0].affinity.merge(snap, &local[1+i].affinity)
			local[0].antiAffinity.merge(snap, &local[1+i].antiAffinity)
		}
		s.existingAnti, s.affinity, s.antiAffinity = &local[0].existingAnti, &local[0].affinity, &local[0].antiAffinity
	} else {
		s.existingAnti, s.affinity, s.antiAffinity = &domainCounts{}, &domainCounts{}, &domainCounts{}
	}
	if s.existingAnti.nonZero() == 0 && len(pod.RequiredAffinity()) == 0 && len(pod.RequiredAntiAffinity()) == 0 {
		return nil, nil
	}
	s.affinityLen = s.affinity.nonZero()
	s.selfAffinity = matchesAll(s.affinityTerms, pod)
	return s, nil
}

// affinityBuffers is InterPodAffinity's PreFilter memory kept in Buffers:
// the label memo and the counts, one set per goroutine.
type affinityBuffers struct {
	memo     []uint32
	existing []bool
	local    []affinityCounts
}

// affinityCounts are the three counts of affinityState.
type affinityCounts struct{ existingAnti, affinity, antiAffinity domainCounts }

// counts returns n sets of empty counts, reusing the memory of earlier
// cycles.
func (b *affinityBuffers) counts(n int) []affinityCounts {
	for len(b.local) < n {
		b.local = append(b.local, affinityCounts{})
	}
	for i := range b.local[:n] {
		c := &b.local[i]
		c.existingAnti.reset()
		c.affinity.reset()
		c.antiAffinity.reset()
	}
	return b.local[:n]
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

// matches returns which of the incoming pod's terms select existing pod e,
// as the memo's bits: bit 0 all affinity terms, bit 1+i anti-affinity term i.
func (s *affinityState) matches(e *snapshot.Pod) uint32 {
	if bits, ok := s.memo.lookup(e); ok {
		return bits
	}
	var bits uint32
	if matchesAll(s.affinityTerms, e) {
		bits = 1
	}
	for i := range min(len(s.antiAffinityTerms), maxMemoPredicates-1) {
		if s.antiAffinityTerms[i].Matches(e, nil) {
			bits |= 2 << i
		}
	}
	return bits
}

// antiSelects reports whether anti-affinity term i selects e, whose bits
// are matches(e): the bits hold the first terms, the others are matched
// directly.
func (s *affinityState) antiSelects(bits uint32, i int, e *snapshot.Pod) bool {
	if i < maxMemoPredicates-1 {
		return bits&(2<<i) != 0
	}
	return s.antiAffinityTerms[i].Matches(e, nil)
}

// existingSelects reports whether existing pod's anti-affinity term t
// selects the incoming pod.
func (s *affinityState) existingSelects(t *snapshot.AffinityTerm) bool {
	if id := t.ID(); id >= 0 && id < len(s.existingMemo) {
		return s.existingMemo[id]
	}
	return t.Matches(s.pod, s.nsLabels)
}

// setMatches is AffinityTerm.Matches for the pods of a label set, without
// namespace labels (the incoming pod's terms have their namespace
// selectors resolved).
func setMatches(t *snapshot.AffinityTerm, set *snapshot.LabelSet) bool {
	if t.Namespaces.Has(set.Namespace) || t.NamespaceSelector.Matches(labels.Set(nil)) {
		return t.Selector.Matches(set.Labels)
	}
	return false
}

// setMatchesAll is matchesAll for the pods of a label set.
func setMatchesAll(terms []snapshot.AffinityTerm, set *snapshot.LabelSet) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !setMatches(&terms[i], set) {
			return false
		}
	}
	return true
}

// matchesAll reports whether p matches every term; false for no terms.
func matchesAll(terms []snapshot.AffinityTerm, p *snapshot.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(p, nil) {
			return false
		}
	}
	return true
}

// bump changes the overlay for (key, node's value) by v and returns the
// pair's count before and after, base included.
func bump(base *domainCounts, over *pairOverlay, n *snapshot.Node, key string, v int64) (before, after int64, ok bool) {
	p, count, has := base.at(n, key)
	if !has {
		return 0, 0, false
	}
	after = count + over.add(p, v)
	return after - v, after, true
}

// update is InterPodAffinity's AddPod/RemovePod for existing pod e on node n.
func (s *affinityState) update(o *affinityOverlay, e *snapshot.Pod, n *snapshot.Node, v int64) {
	if !o.touched {
		o.affinityLen = s.affinityLen
		o.touched = true
	}
	for i := range e.RequiredAntiAffinity() {
		t := &e.RequiredAntiAffinity()[i]
		if s.existingSelects(t) {
			bump(s.existingAnti, &o.existingAnti, n, t.TopologyKey, v)
		}
	}
	bits := s.matches(e)
	if bits&1 != 0 {
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
		if s.antiSelects(bits, i, e) {
			bump(s.antiAffinity, &o.antiAffinity, n, s.antiAffinityTerms[i].TopologyKey, v)
		}
	}
}

// get returns the count of n's domain of key, base and overlay, and whether
// n has the key.
func get(base *domainCounts, over pairOverlay, n *snapshot.Node, key string) (int64, bool) {
	p, count, ok := base.at(n, key)
	if !ok {
		return 0, false
	}
	return count + over.get(p), true
}

// filter is InterPodAffinity's Filter.
func (s *affinityState) filter(o *affinityOverlay, n *snapshot.Node) Status {
	if len(s.affinityTerms) > 0 {
		podsExist := true
		for i := range s.affinityTerms {
			count, ok := get(s.affinity, o.affinity, n, s.affinityTerms[i].TopologyKey)
			if !ok {
				return statusAffinity
			}
			if count <= 0 {
				podsExist = false
			}
		}
		if !podsExist {
			affLen := s.affinityLen
			if o.touched {
				affLen = o.affinityLen
			}
			if !(affLen == 0 && s.selfAffinity) {
				return statusAffinity
			}
		}
	}
	for i := range s.antiAffinityTerms {
		if count, ok := get(s.antiAffinity, o.antiAffinity, n, s.antiAffinityTerms[i].TopologyKey); ok && count > 0 {
			return statusAntiAffinity
		}
	}
	// Only domains with a count, in the base or the overlay, can reject.
	for i := range s.existingAnti.keys {
		k := &s.existingAnti.keys[i]
		if d := k.dom.Of(n); d >= 0 && k.counts[d]+o.existingAnti.get(topologyPair{k.dom.Key, k.dom.Values[d]}) > 0 {
			return statusExistingAnti
		}
	}
	for i := range o.existingAnti {
		p := o.existingAnti[i].pair
		if q, count, ok := s.existingAnti.at(n, p.key); ok && q == p && count+o.existingAnti[i].delta > 0 {
			return statusExistingAnti
		}
	}
	return Status{}
}
