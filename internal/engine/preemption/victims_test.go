package preemption

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// moreImportantVictim is upstream's MoreImportantPod on victims, for the
// reference sorts below.
func moreImportantVictim(a, b *Victim) bool {
	return moreImportant(a.Priority, b.Priority, a.Start, b.Start)
}

// TestSortMatchesSortSlice checks that sorting unit indexes orders units
// exactly as upstream's sort.Slice orders the units themselves, ties
// included, on many random inputs: single pods and pod-group units, lists
// with many ties, with few and with none, short and longer than sortPods
// takes, whole lists and subsets in random order (as the walk sorts its
// victims again).
func TestSortMatchesSortSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	distinct, packed := 0, 0
	for trial := range 20000 {
		n := 1 + r.IntN(40)
		if trial%7 == 0 {
			n = 1 + r.IntN(2*maxKeySort)
		}
		// Start times from few values (many ties), from many (few ties)
		// or all different.
		starts := []int{4, 1000, 0}[trial%3]
		l := unitList{members: make([]snapshot.RankedPod, n)}
		for i := range l.members {
			start := int64(r.IntN(max(starts, 1)))
			if starts == 0 {
				start = int64(i)
			}
			if trial%4 == 2 {
				// Whole seconds, as the API server's start times are
				// (sortPacked's case).
				start *= int64(time.Second)
			}
			l.members[i] = snapshot.RankedPod{Pod: &snapshot.Pod{Priority: int32(r.IntN(3)) - 1}, Start: start} // negative priorities too
			l.members[i].Priority = l.members[i].Pod.Priority
		}
		if starts == 0 {
			distinct++
		}
		if trial%2 == 1 && trial%3 != 0 {
			// Units of one to three members with random kinds.
			for lo := 0; lo < n; {
				hi := min(n, lo+1+r.IntN(3))
				l.spans = append(l.spans, span{lo: int32(lo), hi: int32(hi), kind: UnitKind(r.IntN(3)), priority: int32(r.IntN(3)), start: int64(r.IntN(3))})
				lo = hi
			}
		}
		want := make([]int32, l.len())
		for i := range want {
			want[i] = int32(i)
		}
		if trial%5 == 4 {
			// A subset, shuffled.
			r.Shuffle(len(want), func(i, j int) { want[i], want[j] = want[j], want[i] })
			want = want[:r.IntN(len(want)+1)]
		}
		got := slices.Clone(want)
		if l.spans == nil && sortPacked(l.members, slices.Clone(got)) == sortedPacked && len(got) > 1 {
			packed++
		}
		sort.Slice(want, func(i, j int) bool { return l.moreImportant(int(want[i]), int(want[j])) })
		l.sortUnits(got)
		if !slices.Equal(want, got) {
			t.Fatalf("trial %d (n=%d): sortUnits differs from sort.Slice", trial, n)
		}
	}
	if distinct < 5000 {
		t.Fatalf("only %d lists without ties", distinct)
	}
	if packed < 1000 {
		t.Fatalf("only %d lists sorted on packed keys", packed)
	}
}

// TestImportanceOrderMatchesSort checks that the potential victims a dry run
// takes from a node's importance order, when it takes them unsorted, are
// exactly what sorting the node's lower-priority pods with sort.Slice (as
// upstream does) gives, on nodes built and changed at random with many ties.
func TestImportanceOrderMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	presorted, built, builtTied := 0, 0, 0
	for trial := range 3000 {
		// Half the nodes get their pods with the snapshot, which ranks
		// them as it is built; the others one by one afterwards, ranked
		// on the node's second dry run.
		objs := snapshot.Objects{Nodes: []*v1.Node{rt.Node("n").CPU("100").Obj()}}
		numPods := 1 + r.IntN(40)
		for i := range numPods {
			b := rt.Pod("default", fmt.Sprintf("p%d", i)).Priority(int32(r.IntN(4))).On("n")
			if r.IntN(20) > 0 {
				b.StartedAt(r.IntN(1 + r.IntN(30)))
			}
			objs.Pods = append(objs.Pods, b.Obj())
		}
		pods := objs.Pods
		withSnapshot := trial%2 == 0
		if !withSnapshot {
			objs.Pods = nil
		}
		snap, err := snapshot.New(objs)
		if err != nil {
			t.Fatal(err)
		}
		node := snap.Node("n")
		if withSnapshot {
			built++
			if o := node.CachedImportanceOrder(); o == nil {
				t.Fatalf("trial %d: a snapshot built with its pods has no importance order for the node", trial)
			} else if o.LastTie > 0 && len(o.Ranked) > maxInsertion {
				builtTied++
			}
		} else {
			for _, p := range pods {
				if _, err := snap.AddPod(p); err != nil {
					t.Fatal(err)
				}
			}
			node.ImportanceOrder() // cached, then invalidated by the removals
		}
		if !withSnapshot || trial%4 == 2 {
			for range r.IntN(5) {
				snap.RemovePod(node.Pods[r.IntN(len(node.Pods))].Key)
				if len(node.Pods) == 0 {
					break
				}
			}
		}
		preemptor, err := snap.NewPod(rt.Pod("default", "preemptor").Priority(int32(r.IntN(5))).Obj())
		if err != nil {
			t.Fatal(err)
		}
		d := &dryRun{c: filter.NewCycle(snap, preemptor, filter.Options{}), nowNanos: base.UnixNano()}
		// The first dry run on a node changed since the snapshot was
		// built lists its pods for the walk to sort, later ones (and the
		// first on a node as built) read its importance order: both rank
		// them alike.
		first := d.potentialPods(&worker{}, node)
		firstOrder := (&worker{}).indexes(new([]int32), first.len())
		if !first.sorted {
			first.sortUnits(firstOrder)
		}
		units := d.potentialPods(&worker{}, node)
		if again := d.potentialPods(&worker{}, node); !slices.Equal(again.members, units.members) {
			t.Fatalf("trial %d: a third dry run on the node ranks its pods %v, the second %v", trial, again.members, units.members)
		}
		for _, r := range units.members {
			if req := r.Pod.Requests; r.MilliCPU != req.MilliCPU || r.Memory != req.Memory || r.EphemeralStorage != req.EphemeralStorage || r.Priority != r.Pod.Priority {
				t.Fatalf("trial %d: ranked pod %s priority %d requests %d/%d/%d, pod %+v", trial, r.Pod.Key, r.Priority, r.MilliCPU, r.Memory, r.EphemeralStorage, req)
			}
		}
		order := (&worker{}).indexes(new([]int32), units.len())
		if units.sorted {
			presorted++
		} else {
			units.sortUnits(order)
		}
		var got []*Victim
		for i, u := range order {
			m := units.members[u]
			got = append(got, &Victim{Pod: m.Pod, Priority: m.Priority, Start: m.Start})
			if f := first.members[firstOrder[i]]; f.Pod != m.Pod || f.Start != m.Start {
				t.Fatalf("trial %d: the first dry run ranks %s %d-th, the second %s", trial, f.Pod.Key, i, m.Pod.Key)
			}
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
		sort.Slice(want, func(i, j int) bool { return moreImportantVictim(want[i], want[j]) })
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d potential victims, want %d", trial, len(got), len(want))
		}
		for i := range want {
			if got[i].Pod != want[i].Pod || got[i].Start != want[i].Start {
				t.Fatalf("trial %d (presorted %v): victim %d is %s, want %s", trial, units.sorted, i, got[i].Pod.Key, want[i].Pod.Key)
			}
		}
	}
	if presorted < 600 {
		t.Fatalf("only %d of 3000 trials used the importance order; the test does not exercise it", presorted)
	}
	if builtTied < 200 {
		t.Fatalf("only %d of %d snapshots built with their pods ranked a long node with ties", builtTied, built)
	}
}
