package filter_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/filter"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
	"github.com/reprieve/reprieve/internal/snapshot"
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
	type outcome struct {
		Feasible []string
		Statuses []filter.Status
		Examined int
	}
	run := func(procs, start, want int) outcome {
		c := filter.NewCycle(snap, pod, filter.Options{Parallelism: procs})
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

// filterSequentialAndParallel filters pod on every node of snap on one
// goroutine and on four, and returns both statuses.
func filterSequentialAndParallel(snap *snapshot.Snapshot, pod *snapshot.Pod) (seq, par []filter.Status) {
	run := func(procs int) []filter.Status {
		return filter.NewCycle(snap, pod, filter.Options{Parallelism: procs}).FilterAll().Statuses
	}
	return run(1), run(4)
}

// TestParallelPreFilterMatchesSequential checks that PreFilter counting the
// pods of ranges of nodes on several goroutines (inter-pod affinity and
// topology spread) leads to exactly the sequential statuses.
func TestParallelPreFilterMatchesSequential(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var objs snapshot.Objects
	for i := range 600 {
		name := fmt.Sprintf("n%04d", i)
		objs.Nodes = append(objs.Nodes, rt.Node(name).CPU("4").Zone(fmt.Sprintf("z%d", r.IntN(7))).Obj())
		for j := range r.IntN(4) {
			b := rt.Pod("ns", fmt.Sprintf("p-%s-%d", name, j)).Req("500m", "").On(name).Label("app", fmt.Sprintf("a%d", r.IntN(4)))
			if r.IntN(8) == 0 {
				b.PodAntiAffinity(v1.LabelTopologyZone, map[string]string{"app": "new"})
			}
			objs.Pods = append(objs.Pods, b.Obj())
		}
	}
	snap, err := snapshot.New(objs)
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]*rt.PodBuilder{
		"anti-affinity": rt.Pod("ns", "new").Req("1", "").Label("app", "new").PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "a1"}),
		"spread":        rt.Pod("ns", "new").Req("1", "").Label("app", "a2").Spread(3, v1.LabelTopologyZone, map[string]string{"app": "a2"}),
		"existing":      rt.Pod("ns", "new").Req("1", "").Label("app", "new"),
	}
	for name, b := range pods {
		pod, err := snap.NewPod(b.Obj())
		if err != nil {
			t.Fatal(err)
		}
		seq, par := filterSequentialAndParallel(snap, pod)
		if diff := cmp.Diff(seq, par); diff != "" {
			t.Errorf("%s: parallel PreFilter differs (-sequential +parallel):\n%s", name, diff)
		}
		if !slices.ContainsFunc(seq, func(s filter.Status) bool {
			return s.Plugin == filter.InterPodAffinity || s.Plugin == filter.PodTopologySpread
		}) {
			t.Errorf("%s: no node rejected by affinity or spread; the test cluster is too easy", name)
		}
	}
}
