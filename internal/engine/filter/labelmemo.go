package filter

import (
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// labelMemo records, for each label set of a snapshot (by
// snapshot.Pod.LabelSetID), which of a cycle's label predicates (at most
// maxMemoPredicates: spread selectors, inter-pod terms) its pods satisfy,
// one bit per predicate. PreFilter's counting and a dry run's AddPod and
// RemovePod then match each label set once per cycle instead of every pod
// again. A nil memo, or a pod without a label set, means "match directly".
type labelMemo []uint32

// maxMemoPredicates is how many predicates a labelMemo holds.
const maxMemoPredicates = 32

// setsPerRange is the fewest label sets worth a goroutine of their own
// when a memo is built.
const setsPerRange = 4096

// newLabelMemo evaluates preds on every label set of snap into *buf,
// growing it, on up to workers goroutines. It returns nil (no memo) when
// there are more predicates than a memo holds.
func newLabelMemo(buf *[]uint32, snap *snapshot.Snapshot, workers int, preds []func(*snapshot.LabelSet) bool) labelMemo {
	if len(preds) == 0 || len(preds) > maxMemoPredicates {
		return nil
	}
	sets := snap.LabelSets()
	if cap(*buf) < len(sets) {
		*buf = make([]uint32, len(sets), len(sets)+len(sets)/4)
	}
	m := labelMemo((*buf)[:len(sets)])
	forNodeRanges(len(sets), rangeWorkers(workers, len(sets), setsPerRange), func(_, lo, hi int) {
		for id, set := range sets[lo:hi] {
			var bits uint32
			if set != nil {
				for i, pred := range preds {
					if pred(set) {
						bits |= 1 << i
					}
				}
			}
			m[lo+id] = bits
		}
	})
	return m
}

// lookup returns the predicates p's label set satisfies, and false when
// the memo does not know p (the caller then matches p directly).
func (m labelMemo) lookup(p *snapshot.Pod) (uint32, bool) {
	id := p.LabelSetID()
	if id < 0 || id >= len(m) {
		return 0, false
	}
	return m[id], true
}
