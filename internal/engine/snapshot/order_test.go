package snapshot_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestBuiltOrdersMatchLazy checks that the importance orders New and
// NewParallel make for every node (and the unstable sort's order of a long
// node with ties) are those a node computes on its own once its pods
// change, on nodes with many ties, pods that have not started, nodes of more pods than it packs, and enough
// pods that NewParallel shares the work out.
func TestBuiltOrdersMatchLazy(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var objs snapshot.Objects
	for i := range 700 {
		name := fmt.Sprintf("n%d", i)
		objs.Nodes = append(objs.Nodes, rt.Node(name).CPU("100").Obj())
		for j := range r.IntN(80) {
			b := rt.Pod("default", fmt.Sprintf("p%d-%d", i, j)).Priority(int32(r.IntN(4))).Req("10m", "1Mi").On(name)
			if r.IntN(50) > 0 {
				b.StartedAt(r.IntN(1 + r.IntN(40)))
			}
			objs.Pods = append(objs.Pods, b.Obj())
		}
	}
	if len(objs.Pods) < 2*8192 {
		t.Fatalf("%d pods: too few for NewParallel to share the orders out", len(objs.Pods))
	}
	type order struct {
		Keys       []string
		Priorities []int32
		LastTie    int
		AllStarted bool
		Upstream   []string // SortedSuffix(0), when the unstable sort may differ
	}
	orderOf := func(o *snapshot.ImportanceOrder) order {
		got := order{Priorities: o.Priorities, LastTie: o.LastTie, AllStarted: o.AllStarted}
		for _, p := range o.Ranked {
			got.Keys = append(got.Keys, p.Pod.Key)
			if p.Priority != p.Pod.Priority || p.MilliCPU != p.Pod.Requests.MilliCPU || p.Memory != p.Pod.Requests.Memory {
				t.Fatalf("ranked pod %s: %+v, pod %+v", p.Pod.Key, p, p.Pod)
			}
		}
		if o.AllStarted && o.LastTie > 0 && len(o.Ranked) > snapshot.MaxStableSort {
			for _, p := range o.SortedSuffix(0, snapshot.SortByImportance) {
				got.Upstream = append(got.Upstream, p.Pod.Key)
			}
		}
		return got
	}
	tied, unstarted := 0, 0
	for _, workers := range []int{1, 2} {
		snap, err := snapshot.NewParallel(objs, workers)
		if err != nil {
			t.Fatal(err)
		}
		lazy, err := snapshot.New(snapshot.Objects{Nodes: objs.Nodes})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range objs.Pods {
			if _, err := lazy.AddPod(p); err != nil {
				t.Fatal(err)
			}
		}
		for i, n := range snap.Nodes {
			built := n.CachedImportanceOrder()
			if built == nil {
				t.Fatalf("%d goroutines: node %s has no importance order as built", workers, n.Name)
			}
			ln := lazy.Nodes[i]
			if len(ln.Pods) > 0 && ln.CachedImportanceOrder() != nil {
				t.Fatalf("node %s: its pods added one by one, the first dry run gets an importance order", ln.Name)
			}
			want := orderOf(ln.ImportanceOrder())
			// The stable sort of the node's pods, on its own.
			stable := slices.Clone(ln.Pods)
			startOf := func(p *snapshot.Pod) int64 {
				if st := p.StartTime(); st != nil {
					return st.UnixNano()
				}
				return 0
			}
			slices.SortStableFunc(stable, func(a, b *snapshot.Pod) int {
				return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(startOf(a), startOf(b)))
			})
			var stableKeys []string
			for _, p := range stable {
				stableKeys = append(stableKeys, p.Key)
			}
			if diff := gocmp.Diff(stableKeys, want.Keys); diff != "" {
				t.Fatalf("node %s: the importance order is not the stable sort of its pods (-sort +order):\n%s", ln.Name, diff)
			}
			if !want.AllStarted {
				unstarted++
			}
			// The unstable sort of the pods in their node's order, as
			// upstream sorts the victims of a preemptor above them all.
			if want.Upstream != nil {
				tied++
				pods := slices.Clone(ln.Pods)
				ranked := make([]snapshot.RankedPod, len(pods))
				for k, p := range pods {
					ranked[k] = snapshot.RankedPod{Pod: p, Priority: p.Priority, Start: p.StartTime().UnixNano()}
				}
				snapshot.SortByImportance(ranked)
				var keys []string
				for _, p := range ranked {
					keys = append(keys, p.Pod.Key)
				}
				if diff := gocmp.Diff(keys, want.Upstream); diff != "" {
					t.Fatalf("node %s: SortedSuffix(0) is not the unstable sort of the node's pods (-sort +suffix):\n%s", ln.Name, diff)
				}
			}
			if diff := gocmp.Diff(want, orderOf(built)); diff != "" {
				t.Fatalf("%d goroutines: node %s's order as built differs from the lazy one (-lazy +built):\n%s", workers, n.Name, diff)
			}
		}
	}
	if unstarted < 100 {
		t.Fatalf("only %d nodes with a pod that has not started", unstarted)
	}
	if tied < 300 {
		t.Fatalf("only %d long nodes with ties: the test does not exercise SortedSuffix", tied)
	}
}
