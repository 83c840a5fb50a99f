package preemption

// maxSlabBlock bounds the victims in one slab block.
const maxSlabBlock = 1024

// slab hands out victims and candidates from shared blocks, so that a dry
// run allocates a few blocks per worker instead of several objects per
// candidate. Blocks start small and double, so that a dry run over a few
// nodes wastes little. A slab belongs to one worker of an Evaluator; when
// the Evaluator starts its next evaluation, the slab hands its blocks out
// again.
type slab struct {
	values []Victim // the rest of the current block
	ptrs   []*Victim
	cands  []Candidate
	block  int
	// victimBlocks and candidateBlocks are every block the slab made, in
	// the order it hands them out; nextVictims and nextCandidates index
	// the next one to hand out.
	victimBlocks    []victimBlock
	candidateBlocks [][]Candidate
	nextVictims     int
	nextCandidates  int
}

type victimBlock struct {
	values []Victim
	ptrs   []*Victim
}

// victims returns n victims for the caller to fill, the slice capped at n
// so that appending to it never reaches a neighbour's.
func (s *slab) victims(n int) []*Victim {
	if len(s.values) < n {
		s.nextVictimBlock(n)
	}
	values, ptrs := s.values[:n:n], s.ptrs[:n:n]
	s.values, s.ptrs = s.values[n:], s.ptrs[n:]
	for i := range values {
		ptrs[i] = &values[i]
	}
	return ptrs
}

func (s *slab) nextVictimBlock(n int) {
	for s.nextVictims < len(s.victimBlocks) {
		b := s.victimBlocks[s.nextVictims]
		s.nextVictims++
		if len(b.values) >= n {
			s.values, s.ptrs = b.values, b.ptrs
			return
		}
	}
	s.block = min(max(2*s.block, 32), maxSlabBlock)
	k := max(s.block, n)
	b := victimBlock{values: make([]Victim, k), ptrs: make([]*Victim, k)}
	s.victimBlocks = append(s.victimBlocks, b)
	s.nextVictims = len(s.victimBlocks)
	s.values, s.ptrs = b.values, b.ptrs
}

// candidate returns a candidate for the caller to fill.
func (s *slab) candidate() *Candidate {
	if len(s.cands) == 0 {
		if s.nextCandidates < len(s.candidateBlocks) {
			s.cands = s.candidateBlocks[s.nextCandidates]
		} else {
			s.cands = make([]Candidate, min(max(s.block/8, 4), maxSlabBlock/16))
			s.candidateBlocks = append(s.candidateBlocks, s.cands)
		}
		s.nextCandidates++
	}
	c := &s.cands[0]
	s.cands = s.cands[1:]
	return c
}

// reset makes every block free again, dropping what they point to.
func (s *slab) reset() {
	for _, b := range s.victimBlocks {
		clear(b.values)
		clear(b.ptrs)
	}
	for _, b := range s.candidateBlocks {
		clear(b)
	}
	s.values, s.ptrs, s.cands = nil, nil, nil
	s.nextVictims, s.nextCandidates = 0, 0
}
