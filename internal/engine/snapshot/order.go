package snapshot

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
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
// computed on first use after the node's pods change (New and NewParallel
// compute every node's at once) and kept until they change again;
// concurrent callers may each compute it.
func (n *Node) ImportanceOrder() *ImportanceOrder {
	if o := n.order.Load(); o != nil {
		return o
	}
	o := &ImportanceOrder{}
	n.fillOrder(o, make([]RankedPod, len(n.Pods)), make([]int32, len(n.Pods)), false)
	n.order.Store(o)
	return o
}

// fillOrder makes o the node's importance order in ranked and priorities,
// which hold one element for each of its pods. With upstream, when two
// pods rank alike, every pod has started and there are more than
// MaxStableSort, it also makes the order upstream's unstable sort gives
// them all (SortedSuffix from 0).
func (n *Node) fillOrder(o *ImportanceOrder, ranked []RankedPod, priorities []int32, upstream bool) {
	o.Ranked, o.Priorities, o.AllStarted = ranked, priorities, true
	for i, p := range n.Pods {
		if !p.started {
			o.AllStarted = false
		}
		r := &p.Requests
		ranked[i] = RankedPod{Pod: p, Priority: p.Priority, Pos: int32(i), Start: p.startNanos,
			MilliCPU: r.MilliCPU, Memory: r.Memory, EphemeralStorage: r.EphemeralStorage}
	}
	upstream = upstream && len(ranked) > MaxStableSort
	if !o.sortPacked(upstream) {
		slices.SortStableFunc(ranked, compareImportance)
		for i := 1; i < len(ranked); i++ {
			if compareImportance(ranked[i-1], ranked[i]) == 0 {
				o.LastTie = i
			}
		}
		if upstream && o.AllStarted && o.LastTie > 0 {
			o.SortedSuffix(0, SortByImportance)
		}
	}
	for i := range ranked {
		priorities[i] = ranked[i].Priority
	}
}

// maxPacked is the most pods sortPacked sorts.
const maxPacked = 64

// sortPacked sorts o.Ranked, given in Node.Pods order, stably in
// importance order and sets LastTie, when there are at most maxPacked pods
// whose start times are whole seconds apart within two years (as the API
// server's second-precision start times are); it reports false, o.Ranked
// as it was, otherwise. Each pod's rank and position pack into one integer
// (PackImportance), so that sorting compares and moves one word and ties
// keep their order. With upstream,
// when two pods rank alike and all have started, it makes SortedSuffix
// from 0 too.
func (o *ImportanceOrder) sortPacked(upstream bool) bool {
	ranked := o.Ranked
	n := len(ranked)
	if n < 2 || n > maxPacked {
		return n < 2
	}
	earliest := int64(math.MaxInt64)
	for i := range ranked {
		earliest = min(earliest, ranked[i].Start)
	}
	var buf [maxPacked]uint64
	keys := buf[:n]
	for i := range ranked {
		k, ok := PackImportance(ranked[i].Priority, ranked[i].Start, earliest, i)
		if !ok {
			return false
		}
		keys[i] = k
	}
	slices.Sort(keys)
	for i := 1; i < n; i++ {
		if keys[i-1]>>PackedPosBits == keys[i]>>PackedPosBits {
			o.LastTie = i
		}
	}
	if upstream && o.AllStarted && o.LastTie > 0 {
		pods := slices.Clone(ranked)
		SortByImportance(pods)
		o.suffix.Store(&sortedSuffix{from: 0, pods: pods})
	}
	var given [maxPacked]RankedPod
	copy(given[:n], ranked)
	for i, k := range keys {
		ranked[i] = given[k&(1<<PackedPosBits-1)]
	}
	return true
}

// PackedPosBits is how many low bits of a PackImportance key hold the
// pod's position: keys of pods that rank alike differ in those bits only.
const PackedPosBits = 6

// PackImportance packs a pod's rank — its priority, and its start time,
// which must be whole seconds after earliest and less than two years
// after — and its position pos (below 1<<PackedPosBits) into one integer:
// the keys of pods sort in importance order (higher priority, then the
// earlier start, first), pods ranked alike by position. It reports false
// for what it cannot pack.
func PackImportance(priority int32, start, earliest int64, pos int) (uint64, bool) {
	const (
		second   = int64(time.Second)
		timeBits = 26
	)
	d := start - earliest
	if d < 0 || d%second != 0 || d/second >= 1<<timeBits || pos < 0 || pos >= 1<<PackedPosBits {
		return 0, false
	}
	// Higher priority first: the complement of the priority as an
	// unsigned number in the order of the signed one.
	prio := ^(uint64(uint32(priority)^1<<31) << (timeBits + PackedPosBits))
	return prio&^(1<<(timeBits+PackedPosBits)-1) | uint64(d/second)<<PackedPosBits | uint64(pos), true
}

// MaxStableSort is the length up to which SortByImportance, the standard
// library's pattern-defeating quicksort, runs a plain insertion sort,
// which is stable: up to it, the pods below a priority come out of any
// sort as they are in a node's importance order.
const MaxStableSort = 12

// SortByImportance sorts pods as upstream's sort.Slice sorts victims with
// MoreImportantPod: higher priority first, then the earlier start, by the
// same pattern-defeating quicksort on the same comparisons (it only asks
// whether cmp(a, b) < 0), so that pods ranked alike end in upstream's
// order for the same input order.
func SortByImportance(pods []RankedPod) {
	slices.SortFunc(pods, compareImportance)
}

// buildOrders makes every node's importance order at once, on up to
// parallelism goroutines, in memory shared by all of them: a one-shot
// evaluation then finds the pods of a node it visits ranked, instead of
// listing and sorting them. For a node of more than MaxStableSort pods
// where two rank alike, the order the unstable sort gives them all is
// made too (SortedSuffix from 0), as a preemptor above every pod of the
// node sees them.
func (s *Snapshot) buildOrders(parallelism int) {
	starts := make([]int, len(s.Nodes)+1)
	for i, n := range s.Nodes {
		starts[i+1] = starts[i] + len(n.Pods)
	}
	ranked := make([]RankedPod, starts[len(s.Nodes)])
	priorities := make([]int32, len(ranked))
	orders := make([]ImportanceOrder, len(s.Nodes))
	build := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			n, o := s.Nodes[i], &orders[i]
			a, b := starts[i], starts[i+1]
			n.fillOrder(o, ranked[a:b:b], priorities[a:b:b], true)
			n.order.Store(o)
		}
	}
	workers := max(min(parallelism, len(ranked)/minOrderPodsPerWorker), 1)
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() { build(w*len(s.Nodes)/workers, (w+1)*len(s.Nodes)/workers) })
	}
	build(0, len(s.Nodes)/workers)
	wg.Wait()
}

// minOrderPodsPerWorker is the fewest pods whose orders buildOrders
// gives a goroutine of its own: some tens of microseconds of work.
const minOrderPodsPerWorker = 8192

// CachedImportanceOrder returns the node's importance order when it is
// made (New and NewParallel make every node's), and after the node's pods
// change from the second call on, nil on the first: a dry run visits a
// changed node once, and building the order (and keeping it) costs more
// than the one sort it does without it. Concurrent callers may each
// compute the order.
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
