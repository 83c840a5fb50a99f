package preemption

import (
	"testing"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// TestSlabTrim checks that a slab hands its memory out again after reset
// and that trim clears exactly what the evaluation since did not hand out
// again, so that no pod of an earlier evaluation stays reachable.
func TestSlabTrim(t *testing.T) {
	pod := &snapshot.Pod{Key: "default/p"}
	fill := func(s *slab, sizes []int) (victims []*Victim, cands []*Candidate) {
		for _, n := range sizes {
			vs := s.victims(n)
			for _, v := range vs {
				*v = Victim{Pod: pod, Priority: 1, Start: 2, Started: true}
			}
			c := s.candidate()
			*c = Candidate{Victims: vs}
			victims, cands = append(victims, vs...), append(cands, c)
		}
		return victims, cands
	}
	tests := map[string]struct{ first, second []int }{
		"same sizes":          {first: []int{8, 8, 8}, second: []int{8, 8, 8}},
		"fewer":               {first: []int{8, 8, 8, 8, 8, 8}, second: []int{8}},
		"none":                {first: []int{20, 20}, second: nil},
		"bigger than a block": {first: []int{10, 40, 100}, second: []int{3, 200}},
		"more":                {first: []int{3}, second: []int{30, 30, 30}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var s slab
			firstVictims, firstCands := fill(&s, tc.first)
			s.trim()
			s.reset()
			secondVictims, secondCands := fill(&s, tc.second)
			s.trim()
			kept := map[*Victim]bool{}
			for _, v := range secondVictims {
				kept[v] = true
				if v.Pod != pod {
					t.Fatalf("a victim handed out after reset lost its contents")
				}
			}
			for _, v := range firstVictims {
				if !kept[v] && *v != (Victim{}) {
					t.Errorf("victim %p of the first evaluation not handed out again still holds %+v", v, *v)
				}
			}
			keptCands := map[*Candidate]bool{}
			for _, c := range secondCands {
				keptCands[c] = true
			}
			for _, c := range firstCands {
				if !keptCands[c] && c.Victims != nil {
					t.Errorf("candidate %p of the first evaluation not handed out again still holds victims", c)
				}
			}
			// Every pointer slot the slab holds is a victim handed out
			// in the second evaluation, or nil.
			for _, b := range s.victimBlocks {
				for i, p := range b.ptrs {
					if p != nil && !kept[p] || p == nil && b.values[i] != (Victim{}) {
						t.Fatalf("block slot %d holds %p %+v after trim", i, p, b.values[i])
					}
				}
			}
			// Memory is handed out again, not made anew, when it suffices.
			if len(tc.second) > 0 && len(tc.first) > 0 && tc.second[0] <= tc.first[0] && secondVictims[0] != firstVictims[0] {
				t.Errorf("the first victim after reset is new memory")
			}
		})
	}
}

// TestSlabExpect checks that a slab told how many candidates are coming
// makes its blocks about the size they need: the candidates' in one block,
// the victims' in two (the first, then one sized by the first candidates'
// victims), whatever the candidates' victims; and that what it hands out
// never overlaps.
func TestSlabExpect(t *testing.T) {
	tests := map[string]struct {
		expect  int
		victims []int // of each candidate, in turn
		// wantMaxCandidateBlocks and wantMaxVictimBlocks bound the
		// blocks made; wantMaxSpare bounds the victims made and not
		// handed out.
		wantMaxCandidateBlocks, wantMaxVictimBlocks, wantMaxSpare int
	}{
		"100 candidates of 8 victims": {expect: 100, victims: repeat(8, 100), wantMaxCandidateBlocks: 1, wantMaxVictimBlocks: 2, wantMaxSpare: 32},
		// The first candidates have fewer victims than the later ones:
		// the estimate falls short, and is made again.
		"100 candidates of 1 to 20": {expect: 100, victims: cycle(20, 100), wantMaxCandidateBlocks: 1, wantMaxVictimBlocks: 5, wantMaxSpare: 600},
		"fewer than expected":       {expect: 100, victims: repeat(8, 10), wantMaxCandidateBlocks: 1, wantMaxVictimBlocks: 2, wantMaxSpare: 800},
		// Beyond the expected, blocks double as without expect.
		"more than expected": {expect: 10, victims: repeat(8, 40), wantMaxCandidateBlocks: 4, wantMaxVictimBlocks: 4, wantMaxSpare: 1024},
		"one big candidate":  {expect: 5, victims: []int{3000, 1, 1, 1, 1}, wantMaxCandidateBlocks: 1, wantMaxVictimBlocks: 2, wantMaxSpare: maxSlabBlock},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var s slab
			s.expect(tc.expect)
			seen := map[*Victim]bool{}
			handed := 0
			for i, n := range tc.victims {
				c := s.candidate()
				vs := s.victims(n)
				if len(vs) != n || cap(vs) != n {
					t.Fatalf("candidate %d: %d victims of capacity %d, want %d", i, len(vs), cap(vs), n)
				}
				for _, v := range vs {
					if seen[v] {
						t.Fatalf("candidate %d: victim %p handed out twice", i, v)
					}
					seen[v] = true
				}
				*c = Candidate{Victims: vs}
				handed += n
			}
			made := 0
			for _, b := range s.victimBlocks {
				made += len(b.values)
			}
			if got := len(s.candidateBlocks); got > tc.wantMaxCandidateBlocks {
				t.Errorf("%d candidate blocks, want at most %d", got, tc.wantMaxCandidateBlocks)
			}
			if got := len(s.victimBlocks); got > tc.wantMaxVictimBlocks {
				t.Errorf("%d victim blocks, want at most %d", got, tc.wantMaxVictimBlocks)
			}
			if spare := made - handed; spare > tc.wantMaxSpare {
				t.Errorf("%d victims made for %d handed out: %d spare, want at most %d", made, handed, spare, tc.wantMaxSpare)
			}
		})
	}
}

// repeat returns k copies of n.
func repeat(n, k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = n
	}
	return out
}

// cycle returns k numbers 1, 2, …, n, 1, 2, ….
func cycle(n, k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = i%n + 1
	}
	return out
}
