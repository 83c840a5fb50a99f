package snapshot

import (
	"slices"
	"strings"
)

// termSets interns the required anti-affinity terms of the snapshot's pods:
// equal terms (those of the replicas of one workload, typically) share an
// id, so that a filter cycle matches the incoming pod against each distinct
// term once. Ids of terms no pod has any more are reused.
type termSets struct {
	byKey map[string]int32
	list  []*AffinityTerm
	refs  []int
	free  []int32
}

// ID returns the index of an existing pod's anti-affinity term in the
// snapshot's AntiAffinityTerms, or -1 when the term is not interned (the
// terms of a pod made with NewPod, affinity terms, copies that were
// changed).
func (t *AffinityTerm) ID() int { return int(t.id) - 1 }

// AntiAffinityTerms returns the distinct required anti-affinity terms of the
// snapshot's pods by id (AffinityTerm.ID); unused ids hold nil. The list is
// the snapshot's and must not be modified; it changes when pods are added,
// updated or removed.
func (s *Snapshot) AntiAffinityTerms() []*AffinityTerm { return s.terms.list }

// acquire interns p's anti-affinity terms.
func (ts *termSets) acquire(p *Pod) {
	for i := range p.RequiredAntiAffinity() {
		t := &p.terms.requiredAntiAffinity[i]
		key := termKey(t)
		id, ok := ts.byKey[key]
		if !ok {
			if n := len(ts.free); n > 0 {
				id = ts.free[n-1]
				ts.free = ts.free[:n-1]
				ts.list[id], ts.refs[id] = t, 0
			} else {
				id = int32(len(ts.list))
				ts.list = append(ts.list, t)
				ts.refs = append(ts.refs, 0)
			}
			if ts.byKey == nil {
				ts.byKey = map[string]int32{}
			}
			ts.byKey[key] = id
		}
		ts.refs[id]++
		t.id = id + 1
	}
}

// release drops p's references to its terms; p's terms are then no longer
// interned, so that a pod removed from the snapshot never reads the
// matches of a term that took over an id.
func (ts *termSets) release(p *Pod) {
	for i := range p.RequiredAntiAffinity() {
		t := &p.terms.requiredAntiAffinity[i]
		id := t.id - 1
		if id < 0 {
			continue
		}
		t.id = 0
		ts.refs[id]--
		if ts.refs[id] > 0 {
			continue
		}
		delete(ts.byKey, termKey(ts.list[id]))
		ts.list[id] = nil
		ts.free = append(ts.free, id)
	}
}

// termKey identifies a term by its namespaces, selectors and topology key.
// A selector is written as its String, except that an empty selector
// (everything) is "\x01", since Nothing's String is empty as well.
func termKey(t *AffinityTerm) string {
	var b strings.Builder
	ns := t.Namespaces.UnsortedList()
	slices.Sort(ns)
	for _, n := range ns {
		b.WriteString(n)
		b.WriteByte(',')
	}
	for _, sel := range []interface {
		Empty() bool
		String() string
	}{t.Selector, t.NamespaceSelector} {
		b.WriteByte(0)
		if sel.Empty() {
			b.WriteByte(1)
		} else {
			b.WriteString(sel.String())
		}
	}
	b.WriteByte(0)
	b.WriteString(t.TopologyKey)
	return b.String()
}
