package snapshot

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/labels"
)

// LabelSet is a namespace together with a set of labels, shared by every
// pod of the snapshot in that namespace with exactly those labels (the
// replicas of a ReplicaSet, typically). Whatever a selector or an
// inter-pod term decides about one of these pods it decides about all of
// them, so that a filter cycle matches each label set once instead of each
// pod.
type LabelSet struct {
	// Namespace is the pods' namespace.
	Namespace string
	// Labels are the pods' labels. They must not be modified.
	Labels labels.Set
	// id is the set's index in Snapshot.LabelSets.
	id int
	// refs counts the snapshot's pods with the set.
	refs int
}

// labelSets interns the snapshot's label sets. Ids of sets no pod has any
// more are reused, so that the list stays as long as the number of
// distinct label sets in use.
type labelSets struct {
	byKey map[string]*LabelSet
	list  []*LabelSet
	free  []int
	// key is scratch space for building keys.
	key []byte
	// byShape holds the sets of the shapes (PodParts.Shape) lately seen,
	// up to maxShapes of them: the pods of a shape share their namespace
	// and labels.
	byShape map[*v1.Pod]*LabelSet
}

// LabelSetID returns the index of the pod's label set in the snapshot's
// LabelSets, or -1 when the pod has none (a pod made with NewPod, or one
// that is no longer in the snapshot).
func (p *Pod) LabelSetID() int { return int(p.labelSetID) }

// LabelSets returns the label sets of the snapshot's pods by id
// (Pod.LabelSetID); unused ids hold nil. The list is the snapshot's and
// must not be modified; it changes when pods are added, updated or removed.
func (s *Snapshot) LabelSets() []*LabelSet { return s.labelSets.list }

// acquire gives p the interned label set of its namespace and labels.
func (ls *labelSets) acquire(p *Pod) {
	if p.parts != nil {
		// A set no pod holds any more may have been freed.
		if set := ls.byShape[p.obj]; set != nil && set.refs > 0 && ls.list[set.id] == set {
			set.refs++
			p.labelSetID = int32(set.id)
			return
		}
	}
	key := ls.keyOf(p.obj.Namespace, p.obj.Labels)
	set, ok := ls.byKey[string(key)]
	if !ok {
		set = &LabelSet{Namespace: p.obj.Namespace, Labels: p.obj.Labels}
		if n := len(ls.free); n > 0 {
			set.id = ls.free[n-1]
			ls.free = ls.free[:n-1]
			ls.list[set.id] = set
		} else {
			set.id = len(ls.list)
			ls.list = append(ls.list, set)
		}
		if ls.byKey == nil {
			ls.byKey = map[string]*LabelSet{}
		}
		ls.byKey[string(key)] = set
	}
	set.refs++
	p.labelSetID = int32(set.id)
	if p.parts != nil {
		if ls.byShape == nil {
			ls.byShape = make(map[*v1.Pod]*LabelSet)
		}
		if len(ls.byShape) == maxShapes {
			clear(ls.byShape)
		}
		ls.byShape[p.obj] = set
	}
}

// release drops p's reference to its label set, freeing the set's id when
// p was its last pod.
// p then has none, so that a pod removed from the snapshot never reads the
// matches of a set that took over the id.
func (ls *labelSets) release(p *Pod) {
	if p.labelSetID < 0 {
		return
	}
	set := ls.list[p.labelSetID]
	p.labelSetID = -1
	set.refs--
	if set.refs > 0 {
		return
	}
	delete(ls.byKey, string(ls.keyOf(set.Namespace, set.Labels)))
	ls.list[set.id] = nil
	ls.free = append(ls.free, set.id)
}

// keyOf returns the interning key of a namespace and labels in ls.key:
// the namespace and the labels sorted by key, each followed by a NUL byte
// (which no namespace, label key or label value contains).
func (ls *labelSets) keyOf(ns string, l map[string]string) []byte {
	b := append(ls.key[:0], ns...)
	b = append(b, 0)
	switch len(l) {
	case 0:
	case 1:
		for k, v := range l {
			b = appendLabel(b, k, v)
		}
	default:
		var buf [8]string
		keys := buf[:0]
		for k := range l {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b = appendLabel(b, k, l[k])
		}
	}
	ls.key = b
	return b
}

func appendLabel(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, 0)
	b = append(b, v...)
	return append(b, 0)
}
