package snapshot

import (
	"cmp"
	"slices"
	"sync/atomic"
)

// ImportanceOrder is a node's pods sorted the way preemption ranks victims:
// higher priority first, then earlier start; pods equal in both keep their
// order in Node.Pods (a stable sort). A dry run uses it in place of sorting
// the node's pods for every preemptor: the pods below a priority are a
// suffix of it, already in order.
type ImportanceOrder struct {
	// Ranked are the node's pods in importance order, with what a dry run
	// on resources reads of them, side by side so that the dry run does not
	// load the pods themselves.
	Ranked []RankedPod
	// Priorities are the priorities of Ranked, which descend, kept apart so
	// that a search among them stays in one cache line or two.
	Priorities []int32
	// LastTie is the largest i for which Ranked[i-1] and Ranked[i] have
	// equal priority and start time, or 0 when no two pods are equal. An
	// unstable sort of a suffix Ranked[s:] can only differ from the suffix
	// itself when LastTie > s.
	LastTie int
	// AllStarted reports whether every pod has a start time (the rank of a
	// pod that has not started depends on the evaluation's clock).
	AllStarted bool

	// suffix caches the last result of SortedSuffix.
	suffix atomic.Pointer[sortedSuffix]
}

type sortedSuffix struct {
	from int
	pods []RankedPod
}

// SortedSuffix returns a copy of Ranked[from:] in Node.Pods order, sorted
// by sort, which must be deterministic. The result of the last call is kept
// (until the node's pods change) and returned again for the same from; the
// caller must not modify it.
func (o *ImportanceOrder) SortedSuffix(from int, sort func([]RankedPod)) []RankedPod {
	if c := o.suffix.Load(); c != nil && c.from == from {
		return c.pods
	}
	pods := slices.Clone(o.Ranked[from:])
	slices.SortFunc(pods, func(a, b RankedPod) int { return cmp.Compare(a.Pos, b.Pos) })
	sort(pods)
	o.suffix.Store(&sortedSuffix{from: from, pods: pods})
	return pods
}

// RankedPod is a pod of an ImportanceOrder with its rank and requests.
type RankedPod struct {
	Pod      *Pod
	Priority int32
	// Pos is the pod's index in Node.Pods.
	Pos int32
	// Start is the pod's start time in Unix nanoseconds.
	Start int64
	// MilliCPU, Memory and EphemeralStorage are the pod's requests.
	MilliCPU, Memory, EphemeralStorage int64
}

// ImportanceOrder returns the node's pods in importance order. It is
// computed on first use after the node's pods change and kept until they
// change again; concurrent callers may each compute it.
func (n *Node) ImportanceOrder() *ImportanceOrder {
	if o := n.order.Load(); o != nil {
		return o
	}
	o := &ImportanceOrder{Ranked: make([]RankedPod, len(n.Pods)), AllStarted: true}
	for i, p := range n.Pods {
		if !p.started {
			o.AllStarted = false
		}
		r := &p.Requests
		o.Ranked[i] = RankedPod{Pod: p, Priority: p.Priority, Pos: int32(i), Start: p.startNanos,
			MilliCPU: r.MilliCPU, Memory: r.Memory, EphemeralStorage: r.EphemeralStorage}
	}
	slices.SortStableFunc(o.Ranked, compareImportance)
	o.Priorities = make([]int32, len(o.Ranked))
	for i := range o.Ranked {
		o.Priorities[i] = o.Ranked[i].Priority
		if i > 0 && compareImportance(o.Ranked[i-1], o.Ranked[i]) == 0 {
			o.LastTie = i
		}
	}
	n.order.Store(o)
	return o
}

// CachedImportanceOrder returns the node's importance order from the
// second call on after the node's pods change, and nil on the first: a
// one-shot evaluation visits a node once, and building the order (and
// keeping it) costs more than the one sort a dry run does without it.
// Concurrent callers may each compute the order.
func (n *Node) CachedImportanceOrder() *ImportanceOrder {
	if o := n.order.Load(); o != nil {
		return o
	}
	if n.uses.Add(1) < 2 {
		return nil
	}
	return n.ImportanceOrder()
}

// forgetOrder drops the cached importance order: the pods changed.
func (n *Node) forgetOrder() {
	n.order.Store(nil)
	n.uses.Store(0)
}

// compareImportance orders pods by priority, highest first, then by start
// time, earliest first.
func compareImportance(a, b RankedPod) int {
	if a.Priority != b.Priority {
		return cmp.Compare(b.Priority, a.Priority)
	}
	return cmp.Compare(a.Start, b.Start)
}

// Below returns the index of the first pod of priority lower than prio:
// Ranked[Below(prio):] are the pods below it.
func (o *ImportanceOrder) Below(prio int32) int {
	lo, hi := 0, len(o.Priorities)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if o.Priorities[mid] >= prio {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
