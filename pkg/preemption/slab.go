package preemption

import (
	"cmp"
	"slices"

	"github.com/reprieve/reprieve/pkg/snapshot"
)

// maxSlabBlock bounds the victims in one slab block.
const maxSlabBlock = 1024

// slab hands out victims and candidates from shared blocks, so that a dry
// run allocates a few blocks per worker instead of several objects per
// candidate. Blocks start small and double, so that a dry run over a few
// nodes wastes little. A slab belongs to one goroutine.
type slab struct {
	values []Victim
	ptrs   []*Victim
	cands  []Candidate
	block  int
	// scratch is reused by each node's dry run in turn.
	scratch []snapshot.RankedPod
}

// victims returns n victims with zero values, each slice capped at n so
// that appending to it never reaches a neighbour's.
func (s *slab) victims(n int) []*Victim {
	if len(s.values) < n {
		s.block = min(max(2*s.block, 32), maxSlabBlock)
		k := max(s.block, n)
		s.values, s.ptrs = make([]Victim, k), make([]*Victim, k)
	}
	values, ptrs := s.values[:n:n], s.ptrs[:n:n]
	s.values, s.ptrs = s.values[n:], s.ptrs[n:]
	for i := range values {
		ptrs[i] = &values[i]
	}
	return ptrs
}

// victimsOf makes victims of ranked pods.
func (s *slab) victimsOf(ranked []snapshot.RankedPod) []*Victim {
	out := s.victims(len(ranked))
	for i := range ranked {
		r := &ranked[i]
		*out[i] = Victim{Pod: r.Pod, Priority: r.Priority, Start: r.Start}
	}
	return out
}

// candidate returns a zero candidate.
func (s *slab) candidate() *Candidate {
	if len(s.cands) == 0 {
		s.cands = make([]Candidate, min(max(s.block/8, 4), maxSlabBlock/16))
	}
	c := &s.cands[0]
	s.cands = s.cands[1:]
	return c
}

// sortedBelow returns o.Ranked[i:] in the order sortVictims gives their
// victims under MoreImportant: it sorts them as sortVictims would, starting
// from the node's order of pods, and the same comparisons on the same
// sequence give the same permutation. The slice is valid until the next
// call.
func (s *slab) sortedBelow(o *snapshot.ImportanceOrder, i int) []snapshot.RankedPod {
	pods := append(s.scratch[:0], o.Ranked[i:]...)
	slices.SortFunc(pods, func(a, b snapshot.RankedPod) int { return cmp.Compare(a.Pos, b.Pos) })
	slices.SortFunc(pods, func(a, b snapshot.RankedPod) int {
		if a.Priority != b.Priority {
			if a.Priority > b.Priority {
				return -1
			}
			return 0
		}
		if a.Start < b.Start {
			return -1
		}
		return 0
	})
	s.scratch = pods
	return pods
}
