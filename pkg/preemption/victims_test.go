package preemption

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/pkg/filter"
	rt "github.com/reprieve/reprieve/pkg/reprievetest"
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

// TestImportanceOrderMatchesSort checks that the potential victims a dry run
// takes from a node's importance order, when it takes them unsorted, are
// exactly what sorting the node's lower-priority pods with sort.Slice (as
// upstream does) gives, on nodes built and changed at random with many ties.
func TestImportanceOrderMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	presorted := 0
	for trial := range 3000 {
		snap, err := snapshot.New(snapshot.Objects{Nodes: []*v1.Node{rt.Node("n").CPU("100").Obj()}})
		if err != nil {
			t.Fatal(err)
		}
		numPods := 1 + r.IntN(30)
		for i := range numPods {
			b := rt.Pod("default", fmt.Sprintf("p%d", i)).Priority(int32(r.IntN(4))).On("n")
			if r.IntN(20) > 0 {
				b.StartedAt(r.IntN(1 + r.IntN(30)))
			}
			if _, err := snap.AddPod(b.Obj()); err != nil {
				t.Fatal(err)
			}
		}
		node := snap.Node("n")
		node.ImportanceOrder() // cached, then invalidated by the removals
		for range r.IntN(5) {
			snap.RemovePod(node.Pods[r.IntN(len(node.Pods))].Key)
			if len(node.Pods) == 0 {
				break
			}
		}
		preemptor, err := snap.NewPod(rt.Pod("default", "preemptor").Priority(int32(r.IntN(5))).Obj())
		if err != nil {
			t.Fatal(err)
		}
		d := &dryRun{c: filter.NewCycle(snap, preemptor), nowNanos: base.UnixNano()}
		ranked, kept, got := d.potentialVictims(&slab{}, node)
		if again, _, _ := d.potentialVictims(&slab{}, node); !slices.Equal(again, ranked) {
			t.Fatalf("trial %d: a second dry run on the node ranks its pods %v, the first %v", trial, again, ranked)
		}
		sorted := ranked != nil
		if sorted {
			got = (&slab{}).victimsOf(ranked)
			presorted++
			if len(kept)+len(ranked) != len(node.Pods) {
				t.Fatalf("trial %d: %d kept and %d potential victims of %d pods", trial, len(kept), len(ranked), len(node.Pods))
			}
			for _, k := range kept {
				if k.Priority < preemptor.Priority || k.Pod.Priority != k.Priority {
					t.Fatalf("trial %d: kept pod %s has priority %d (ranked as %d), preemptor %d", trial, k.Pod.Key, k.Pod.Priority, k.Priority, preemptor.Priority)
				}
			}
			for _, r := range ranked {
				if req := r.Pod.Requests; r.MilliCPU != req.MilliCPU || r.Memory != req.Memory || r.EphemeralStorage != req.EphemeralStorage {
					t.Fatalf("trial %d: ranked pod %s requests %d/%d/%d, pod %+v", trial, r.Pod.Key, r.MilliCPU, r.Memory, r.EphemeralStorage, req)
				}
			}
		} else {
			sortVictims(got, MoreImportant)
		}

		var want []*Victim
		for i, p := range node.Pods {
			if p.Priority < preemptor.Priority {
				v := &Victim{Pod: p, Priority: p.Priority, Start: base.UnixNano() + int64(i)}
				if st := p.StartTime(); st != nil {
					v.Start = st.UnixNano()
				}
				want = append(want, v)
			}
		}
		sort.Slice(want, func(i, j int) bool { return MoreImportant(want[i], want[j]) })
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d potential victims, want %d", trial, len(got), len(want))
		}
		for i := range want {
			if got[i].Pod != want[i].Pod || got[i].Start != want[i].Start {
				t.Fatalf("trial %d (presorted %v): victim %d is %s, want %s", trial, sorted, i, got[i].Pod.Key, want[i].Pod.Key)
			}
		}
	}
	if presorted < 600 {
		t.Fatalf("only %d of 3000 trials used the importance order; the test does not exercise it", presorted)
	}
}
