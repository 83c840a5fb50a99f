package filter_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
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
	// A pod only resources can reject is filtered on the snapshot's sums,
	// too quickly for goroutines on a cluster of this size; with a node
	// selector it runs every filter, in parallel.
	for _, b := range []*rt.PodBuilder{rt.Pod("ns", "new").Req("3500m", ""), rt.Pod("ns", "new").Req("3500m", "").NodeAffinityIn(v1.LabelTopologyZone, "z0", "z1", "z2")} {
		pod, err := snap.NewPod(b.Obj())
		if err != nil {
			t.Fatal(err)
		}
		checkParallelFiltering(t, snap, pod)
	}
}

// checkParallelFiltering checks that filtering pod on snap on four
// goroutines gives exactly the sequential answer.
func checkParallelFiltering(t *testing.T, snap *snapshot.Snapshot, pod *snapshot.Pod) {
	t.Helper()
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

// TestPlainNodesMatchGeneralPath checks the verdicts read off the
// snapshot's sums for a pod that only resources can reject (a plain
// cycle) against the general filters: the same pod with a node selector
// every node matches runs NodeResourcesFit on a view of each node instead,
// and must get the same statuses and feasible nodes, on nodes short of
// pods, CPU, memory, ephemeral storage or several at once, or beyond their
// allocatable, tainted, cordoned and with nominated pods.
func TestPlainNodesMatchGeneralPath(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var objs snapshot.Objects
	for i := range 400 {
		name := fmt.Sprintf("n%04d", i)
		b := rt.Node(name).CPU([]string{"2", "4", "8"}[r.IntN(3)]).Memory([]string{"4Gi", "8Gi"}[r.IntN(2)]).
			Pods(1+r.IntN(4)).Alloc(v1.ResourceEphemeralStorage, []string{"1Gi", "10Gi"}[r.IntN(2)]).Label("all", "yes")
		switch r.IntN(12) {
		case 0:
			b.Taint("k", "v", v1.TaintEffectNoSchedule)
		case 1:
			b.Unschedulable()
		}
		objs.Nodes = append(objs.Nodes, b.Obj())
		for j := range r.IntN(4) {
			p := rt.Pod("ns", fmt.Sprintf("p-%s-%d", name, j)).
				Req(fmt.Sprintf("%dm", 500*r.IntN(6)), fmt.Sprintf("%dGi", r.IntN(4))).
				ReqRes(v1.ResourceEphemeralStorage, fmt.Sprintf("%dGi", r.IntN(4))).On(name)
			objs.Pods = append(objs.Pods, p.Obj())
		}
		if r.IntN(10) == 0 {
			objs.Pods = append(objs.Pods, rt.Pod("ns", "nominated-"+name).Priority(10).Req("1", "1Gi").Nominated(name).Obj())
		}
	}
	snap, err := snapshot.New(objs)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		Feasible []string
		Statuses []filter.Status
	}
	run := func(b *rt.PodBuilder) outcome {
		pod, err := snap.NewPod(b.Obj())
		if err != nil {
			t.Fatal(err)
		}
		res := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1}).FilterAll()
		o := outcome{Statuses: res.Statuses}
		for _, n := range res.Feasible {
			o.Feasible = append(o.Feasible, n.Name)
		}
		return o
	}
	for _, req := range []struct{ cpu, mem, ephemeral string }{
		{"1", "1Gi", ""}, {"3", "", ""}, {"", "5Gi", ""}, {"3", "5Gi", ""}, {"9", "1Gi", ""}, {"1", "9Gi", ""},
		{"9", "9Gi", ""}, {"3", "9Gi", ""}, {"1", "1Gi", "2Gi"}, {"", "", ""}, {"5", "6Gi", "11Gi"},
	} {
		pod := func() *rt.PodBuilder {
			b := rt.Pod("ns", "new").Priority(5).Req(req.cpu, req.mem)
			if req.ephemeral != "" {
				b.ReqRes(v1.ResourceEphemeralStorage, req.ephemeral)
			}
			return b
		}
		plain, general := run(pod()), run(pod().NodeSelector("all", "yes"))
		if diff := cmp.Diff(general, plain); diff != "" {
			t.Errorf("request %+v: the plain verdicts differ (-general +plain):\n%s", req, diff)
		}
		if !slices.ContainsFunc(plain.Statuses, func(s filter.Status) bool { return !s.IsSuccess() }) {
			t.Errorf("request %+v: no node rejects the pod; the test cluster is too easy", req)
		}
	}
}
