package preemption

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/reprieve/reprieve/pkg/snapshot"
)

// TestSortMatchesSortSlice checks sortVictims orders victims exactly as
// upstream's sort.Slice does, ties included, on many random inputs.
func TestSortMatchesSortSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 20000 {
		n := 1 + r.IntN(40)
		vals := make([]Victim, n)
		for i := range vals {
			prio := int32(r.IntN(3))
			vals[i] = Victim{Pod: &snapshot.Pod{Priority: prio}, Priority: prio, Start: int64(r.IntN(4))}
		}
		a := make([]*Victim, n)
		for i := range vals {
			a[i] = &vals[i]
		}
		b := slices.Clone(a)
		sort.Slice(a, func(i, j int) bool { return MoreImportant(a[i], a[j]) })
		sortVictims(b, MoreImportant)
		if !slices.Equal(a, b) {
			t.Fatalf("trial %d (n=%d): sortVictims differs from sort.Slice", trial, n)
		}
	}
}
