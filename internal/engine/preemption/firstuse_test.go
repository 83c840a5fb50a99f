package preemption

import (
	"fmt"
	"testing"
	"time"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestFirstUseAllocations checks that a fresh Evaluator's first dry run
// makes its memory at the size it needs, in a few allocations whatever the
// cluster's size: over 200 and 3,200 potential nodes with the same budget
// of 100 candidates (8 victims each) it makes as many allocations, and a
// handful beyond the candidates' victims, as a list grown from nothing (one
// allocation a doubling) would not.
func TestFirstUseAllocations(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	allocs := func(nodes int) float64 {
		var objs snapshot.Objects
		for i := range nodes {
			name := fmt.Sprintf("n%05d", i)
			objs.Nodes = append(objs.Nodes, rt.Node(name).CPU("4").Memory("64Gi").Obj())
			for j := range 32 {
				objs.Pods = append(objs.Pods, rt.Pod("default", fmt.Sprintf("p-%s-%02d", name, j)).Priority(int32(j%4)).
					Req("125m", "1Gi").StartedAt(j).On(name).Obj())
			}
		}
		c := newCycle(t, objs, rt.Pod("default", "p").Priority(100).Req("1", "1Gi").Obj(), 1)
		fr := c.FilterAll()
		opts := Options{Now: now, MinCandidateNodesAbsolute: 100, MinCandidateNodesPercentage: 1}
		var res *Result
		n := testing.AllocsPerRun(5, func() {
			var e Evaluator
			var err error
			if res, err = e.Evaluate(c, fr, opts); err != nil {
				t.Fatal(err)
			}
		})
		if len(res.PotentialNodes) != nodes || len(res.Candidates) != 100 || res.Chosen == nil || len(res.Chosen.Victims) != 8 {
			t.Fatalf("%d nodes: %d potential nodes, %d candidates, chosen %v: the cluster does not exercise the dry run",
				nodes, len(res.PotentialNodes), len(res.Candidates), res.Chosen)
		}
		return n
	}
	small, big := allocs(200), allocs(3200)
	if small != big {
		t.Errorf("a fresh evaluator makes %v allocations over 200 potential nodes, %v over 3,200: some memory grows with the cluster", small, big)
	}
	// The evaluator, its workers and the dry run, rand's generator, the
	// lists of potential and visited nodes and of candidates, the nodes'
	// outcomes, a walk's unit order and evicted units, the candidates'
	// block and the victims' (values and pointers, two of each), and
	// pick's three lists: 21 at this writing.
	if want := 21.0; big > want {
		t.Errorf("a fresh evaluator makes %v allocations, want at most %v", big, want)
	}
}
