package filter_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/pkg/filter"
	rt "github.com/reprieve/reprieve/pkg/reprievetest"
	"github.com/reprieve/reprieve/pkg/snapshot"
)

// TestParallelFilteringMatchesSequential checks that filtering on several
// goroutines gives exactly the sequential answer: the same feasible nodes in
// the same order, the same statuses and the same number of nodes examined.
func TestParallelFilteringMatchesSequential(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var objs snapshot.Objects
	for i := range 1500 {
		name := fmt.Sprintf("n%04d", i)
		b := rt.Node(name).CPU("4").Zone(fmt.Sprintf("z%d", i%3))
		if r.IntN(10) == 0 {
			b.Taint("k", "v", v1.TaintEffectNoSchedule)
		}
		objs.Nodes = append(objs.Nodes, b.Obj())
		objs.Pods = append(objs.Pods, rt.Pod("ns", "p-"+name).Req(fmt.Sprintf("%dm", 500*r.IntN(9)), "").On(name).Obj())
	}
	snap, err := snapshot.New(objs)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := snap.NewPod(rt.Pod("ns", "new").Req("3500m", "").Obj())
	if err != nil {
		t.Fatal(err)
	}
	c := filter.NewCycle(snap, pod)
	type outcome struct {
		Feasible []string
		Statuses []filter.Status
		Examined int
	}
	run := func(procs, start, want int) outcome {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		res, examined := c.FilterFrom(start, want)
		o := outcome{Statuses: res.Statuses, Examined: examined}
		for _, n := range res.Feasible {
			o.Feasible = append(o.Feasible, n.Name)
		}
		return o
	}
	for _, tc := range []struct{ start, want int }{{0, 1500}, {0, 100}, {1234, 50}, {700, 400}, {3, 1}} {
		seq, par := run(1, tc.start, tc.want), run(4, tc.start, tc.want)
		if diff := cmp.Diff(seq, par); diff != "" {
			t.Errorf("start %d want %d: parallel differs (-sequential +parallel):\n%s", tc.start, tc.want, diff)
		}
		if tc.want >= 50 && !slices.ContainsFunc(seq.Statuses, func(s filter.Status) bool { return !s.IsSuccess() }) {
			t.Errorf("start %d want %d: no rejection at all; the test cluster is too easy", tc.start, tc.want)
		}
	}
}
