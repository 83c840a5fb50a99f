package preemption

import (
	"testing"

	"github.com/reprieve/reprieve/internal/snapshot"
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
