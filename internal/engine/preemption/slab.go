package preemption

// maxSlabBlock bounds the victims in one slab block (unless one
// candidate has more), maxCandidateBlock the candidates.
const (
	maxSlabBlock      = 1024
	maxCandidateBlock = 256
)

// slab hands out victims and candidates from shared blocks, so that a dry
// run allocates a few blocks per worker instead of several objects per
// candidate. Blocks start small and double, so that a dry run over a few
// nodes wastes little. A slab belongs to one worker of an Evaluator; when
// the Evaluator starts its next evaluation, the slab hands its blocks out
// again (reset), and when an evaluation ends, trim clears what it did not
// hand out again, so that a slab never keeps pods alive that no result
// refers to. What is handed out again is overwritten, not cleared first.
//
// When the slab is told how many candidates are coming (expect), a block
// it must make is sized for them instead: the candidates' at once, the
// victims' by the victims a candidate had so far. A fresh evaluator then
// makes a block or two of each, about the size the dry run needs, instead
// of one for every doubling.
type slab struct {
	values []Victim // the rest of the current block
	ptrs   []*Victim
	cands  []Candidate
	block  int
	// expected is how many more candidates expect announced; victims
	// and made count what was handed out since.
	expected, victimsMade, candidatesMade int
	// victimBlocks and candidateBlocks are every block the slab made, in
	// the order it hands them out; nextVictims and nextCandidates index
	// the next one to hand out.
	victimBlocks    []victimBlock
	candidateBlocks []candidateBlock
	nextVictims     int
	nextCandidates  int
}

// victimBlock is a block of victims and of pointers to them. The first
// used were handed out in the current evaluation; the first dirty may
// hold what some evaluation wrote (dirty >= used once trimmed).
type victimBlock struct {
	values      []Victim
	ptrs        []*Victim
	used, dirty int
}

// candidateBlock is a block of candidates, used and dirty as in
// victimBlock.
type candidateBlock struct {
	cands       []Candidate
	used, dirty int
}

// victims returns n victims for the caller to fill, the slice capped at n
// so that appending to it never reaches a neighbour's.
func (s *slab) victims(n int) []*Victim {
	if len(s.values) < n {
		s.nextVictimBlock(n)
	}
	values, ptrs := s.values[:n:n], s.ptrs[:n:n]
	s.values, s.ptrs = s.values[n:], s.ptrs[n:]
	s.victimsMade += n
	if n > 0 {
		s.victimBlocks[s.nextVictims-1].used += n
	}
	for i := range values {
		ptrs[i] = &values[i]
	}
	return ptrs
}

func (s *slab) nextVictimBlock(n int) {
	for s.nextVictims < len(s.victimBlocks) {
		b := &s.victimBlocks[s.nextVictims]
		s.nextVictims++
		if len(b.values) >= n {
			s.values, s.ptrs = b.values, b.ptrs
			return
		}
	}
	s.block = min(max(2*s.block, 32), maxSlabBlock)
	k := max(s.block, n)
	if s.candidatesMade > 1 && s.expected > 0 {
		// The candidate being filled and those still expected, at the
		// victims the earlier ones had on average.
		perCandidate := float64(s.victimsMade) / float64(s.candidatesMade-1)
		k = max(n, min(int(perCandidate*float64(s.expected+1))+1, maxSlabBlock))
	}
	s.victimBlocks = append(s.victimBlocks, victimBlock{values: make([]Victim, k), ptrs: make([]*Victim, k)})
	s.nextVictims = len(s.victimBlocks)
	b := &s.victimBlocks[s.nextVictims-1]
	s.values, s.ptrs = b.values, b.ptrs
}

// candidate returns a candidate for the caller to fill; its victims are
// to be asked for next.
func (s *slab) candidate() *Candidate {
	if len(s.cands) == 0 {
		if s.nextCandidates == len(s.candidateBlocks) {
			k := min(max(s.block/8, 4), maxSlabBlock/16)
			if s.expected > 0 {
				k = min(s.expected, maxCandidateBlock)
			}
			s.candidateBlocks = append(s.candidateBlocks, candidateBlock{cands: make([]Candidate, k)})
		}
		s.cands = s.candidateBlocks[s.nextCandidates].cands
		s.nextCandidates++
	}
	s.candidateBlocks[s.nextCandidates-1].used++
	s.candidatesMade++
	s.expected = max(s.expected-1, 0)
	c := &s.cands[0]
	s.cands = s.cands[1:]
	return c
}

// expect tells the slab that about k more candidates are coming: those of
// the nodes the worker dry-runs next.
func (s *slab) expect(k int) { s.expected = k }

// reset hands every block out again, from the first; what they hold is
// overwritten as they are, and trim clears the rest.
func (s *slab) reset() {
	for i := range s.victimBlocks {
		b := &s.victimBlocks[i]
		b.dirty, b.used = max(b.dirty, b.used), 0
	}
	for i := range s.candidateBlocks {
		b := &s.candidateBlocks[i]
		b.dirty, b.used = max(b.dirty, b.used), 0
	}
	s.values, s.ptrs, s.cands = nil, nil, nil
	s.nextVictims, s.nextCandidates = 0, 0
	s.expected, s.victimsMade, s.candidatesMade = 0, 0, 0
}

// trim clears what the blocks hold beyond what the current evaluation
// handed out, dropping what it points to.
func (s *slab) trim() {
	for i := range s.victimBlocks {
		b := &s.victimBlocks[i]
		if b.dirty > b.used {
			clear(b.values[b.used:b.dirty])
			clear(b.ptrs[b.used:b.dirty])
		}
		b.dirty = b.used
	}
	for i := range s.candidateBlocks {
		b := &s.candidateBlocks[i]
		if b.dirty > b.used {
			clear(b.cands[b.used:b.dirty])
		}
		b.dirty = b.used
	}
}
