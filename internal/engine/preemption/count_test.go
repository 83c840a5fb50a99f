package preemption

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// filterCounts is a Counter's Filter counts by plugin, zeros left out.
func filterCounts(e *filter.Evaluations) map[string]int {
	out := map[string]int{}
	for i, name := range filter.EvaluatedPlugins() {
		if n := e.Filter[i]; n > 0 {
			out[name] = n
		}
	}
	return out
}

// newCycle is the filter cycle of preemptor on a snapshot of objs.
func newCycle(tb testing.TB, objs snapshot.Objects, preemptor *v1.Pod, parallelism int) *filter.Cycle {
	tb.Helper()
	snap, err := snapshot.New(objs)
	var pod *snapshot.Pod
	if err == nil {
		pod, err = snap.NewPod(preemptor)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return filter.NewCycle(snap, pod, filter.Options{Parallelism: parallelism})
}

// basic is the Filter plugins that run for a pod without affinity, ports,
// volumes, spread or claims, n calls each.
func basic(n int) map[string]int {
	return map[string]int{filter.NodeName: n, filter.NodeUnschedulable: n, filter.TaintToleration: n, filter.NodeResourcesFit: n}
}

// TestCounterCountsTheWalk checks the Filter calls the Counter counts
// against counts worked out by hand from upstream's SelectVictimsOnNode
// (one RunFilterPluginsWithNominatedPods with every victim removed, then
// one per victim added back, budget-breaking ones first) and
// RunFilterPluginsWithNominatedPods (a second pass when nominated pods the
// preemptor yields to were added and the first passed; a rejected pass
// runs the plugins up to the one that rejects).
func TestCounterCountsTheWalk(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	guarded := map[string]string{"app": "guarded"}
	zero := 0
	// The budget fixture: "old" (200m, started first) and two newer
	// guarded pods; PodTopologySpread runs after NodeResourcesFit and
	// never rejects, so it counts the calls that pass.
	budgetNodes := []*v1.Node{rt.Node("n1").CPU("500m").Obj()}
	budgetPods := []*v1.Pod{
		rt.Pod("default", "old").Priority(1).Req("200m", "").StartedAt(0).On("n1").Obj(),
		rt.Pod("default", "guarded-1").Priority(1).Req("100m", "").Label("app", "guarded").StartedAt(1).On("n1").Obj(),
		rt.Pod("default", "guarded-2").Priority(1).Req("100m", "").Label("app", "guarded").StartedAt(2).On("n1").Obj(),
	}
	budgetPDBs := []*policyv1.PodDisruptionBudget{rt.PDB("default", "guarded", guarded, 0)}
	budgetPreemptor := rt.Pod("default", "p").Priority(100).Req("300m", "").Spread(10, v1.LabelHostname, map[string]string{"app": "spread"}).Obj()
	// All removed: passes. guarded-1, guarded-2 back: pass. old back:
	// NodeResourcesFit rejects. (In importance order alone, old first,
	// only one call would pass after the first.)
	budgetCounts := map[string]int{filter.NodeName: 4, filter.NodeUnschedulable: 4, filter.TaintToleration: 4, filter.NodeResourcesFit: 4,
		filter.PodTopologySpread: 3}
	manyNodes := func() []*v1.Node {
		// n00 cannot help (a more important pod holds half of it);
		// every other node is a candidate.
		nodes := []*v1.Node{rt.Node("n00").CPU("2").Obj()}
		for i := 1; i < 40; i++ {
			nodes = append(nodes, rt.Node(fmt.Sprintf("n%02d", i)).CPU("2").Obj())
		}
		return nodes
	}
	manyPods := func() []*v1.Pod {
		pods := []*v1.Pod{
			rt.Pod("default", "important").Priority(500).Req("1", "").On("n00").Obj(),
			rt.Pod("default", "v00").Priority(1).Req("500m", "").On("n00").Obj(),
		}
		for i := 1; i < 40; i++ {
			pods = append(pods, rt.Pod("default", fmt.Sprintf("v%02d", i)).Priority(1).Req("2", "").On(fmt.Sprintf("n%02d", i)).Obj())
		}
		return pods
	}
	tests := map[string]struct {
		nodes       []*v1.Node
		pods        []*v1.Pod
		pdbs        []*policyv1.PodDisruptionBudget
		preemptor   *v1.Pod
		opts        Options
		parallelism int
		want        map[string]int
		wantVictims []string
		wantVisited int
	}{
		"one victim, resources only": {
			nodes:     []*v1.Node{rt.Node("n1").CPU("2").Obj()},
			pods:      []*v1.Pod{rt.Pod("default", "victim").Priority(1).Req("2", "").On("n1").Obj()},
			preemptor: rt.Pod("default", "p").Priority(100).Req("2", "").Obj(),
			// Removed: fits; added back: NodeResourcesFit rejects.
			want: basic(2), wantVictims: []string{"default/victim"}, wantVisited: 1,
		},
		"budget-breaking victims are reprieved first": {
			nodes: budgetNodes, pods: budgetPods, pdbs: budgetPDBs, preemptor: budgetPreemptor,
			want: budgetCounts, wantVictims: []string{"default/old"}, wantVisited: 1,
		},
		"a victim policy's search is not counted": {
			nodes: budgetNodes, pods: budgetPods, pdbs: budgetPDBs, preemptor: budgetPreemptor,
			opts: Options{Policy: Minimal},
			want: budgetCounts, wantVictims: []string{"default/old"}, wantVisited: 1,
		},
		"a nominated pod the preemptor yields to: two passes when the first passes": {
			nodes: []*v1.Node{rt.Node("n1").CPU("3").Obj()},
			pods: []*v1.Pod{
				rt.Pod("default", "victim").Priority(1).Req("2", "").On("n1").Obj(),
				rt.Pod("default", "nominated").Priority(200).Req("1", "").Nominated("n1").Obj(),
			},
			preemptor: rt.Pod("default", "p").Priority(100).Req("2", "").Obj(),
			// Removed: two passes; added back: the first pass rejects.
			want: basic(3), wantVictims: []string{"default/victim"}, wantVisited: 1,
		},
		"a node without lower-priority pods runs no filter": {
			nodes: []*v1.Node{rt.Node("n1").CPU("2").Obj(), rt.Node("n2").CPU("2").Obj()},
			pods: []*v1.Pod{
				rt.Pod("default", "important").Priority(500).Req("2", "").On("n1").Obj(),
				rt.Pod("default", "victim").Priority(1).Req("2", "").On("n2").Obj(),
			},
			preemptor: rt.Pod("default", "p").Priority(100).Req("2", "").Obj(),
			want:      basic(2), wantVictims: []string{"default/victim"}, wantVisited: 2,
		},
		"nodes evaluated in parallel past the walk's stop are not counted": {
			nodes: manyNodes(),
			pods:  manyPods(),
			// One candidate wanted: n00 fails, the next batch evaluates
			// 32 nodes at once, and the walk stops at its first, n01.
			preemptor:   rt.Pod("default", "p").Priority(100).Req("2", "").Obj(),
			opts:        Options{MinCandidateNodesPercentage: 1, MinCandidateNodesAbsolute: 1, Offset: &zero},
			parallelism: 2,
			// n00: one call, rejected; n01: two.
			want: basic(3), wantVictims: []string{"default/v01"}, wantVisited: 2,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCycle(t, snapshot.Objects{Nodes: tt.nodes, Pods: tt.pods, PDBs: tt.pdbs}, tt.preemptor, max(tt.parallelism, 1))
			fr := c.FilterAll()
			if len(fr.Feasible) > 0 {
				t.Fatal("the preemptor fits without preemption")
			}
			opts := tt.opts
			opts.Now = now
			var k Counter
			// Counts accumulate: a first evaluation without the counter
			// and a second with it count once.
			if _, err := Evaluate(c, fr, opts); err != nil {
				t.Fatal(err)
			}
			opts.Counter = &k
			res, err := Evaluate(c, fr, opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, filterCounts(&k.Evaluations)); diff != "" {
				t.Errorf("Filter calls (-want,+got):\n%s", diff)
			}
			if res.Chosen == nil {
				t.Fatal("no candidate chosen")
			}
			var victims []string
			for _, v := range res.Chosen.Victims {
				victims = append(victims, v.Pod.Key)
			}
			if diff := cmp.Diff(tt.wantVictims, victims); diff != "" {
				t.Errorf("victims (-want,+got):\n%s", diff)
			}
			if len(res.Visited) != tt.wantVisited {
				t.Errorf("visited %d nodes, want %d", len(res.Visited), tt.wantVisited)
			}
			// A second evaluation on the same Counter adds as much again.
			if _, err := Evaluate(c, fr, opts); err != nil {
				t.Fatal(err)
			}
			twice := map[string]int{}
			for p, n := range tt.want {
				twice[p] = 2 * n
			}
			if diff := cmp.Diff(twice, filterCounts(&k.Evaluations)); diff != "" {
				t.Errorf("Filter calls after a second evaluation (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestCounterCheckersAgree counts the victim walk on random resources-only
// nodes through both fit checkers: the node sums, whose rejections are
// derived only for the count, and the filter overlay, which runs the
// filters. The counts must be the same, and counting must not change what
// the walk decides or what an evaluation chooses.
func TestCounterCheckersAgree(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(21, 22))
	walks, counted := 0, 0
	for trial := range 600 {
		// Every third cluster has pod groups, some evicted whole.
		opts := Options{Now: now, Features: Features{GenericWorkload: trial%3 == 2}}
		snap, podObj := randomResourcesCluster(t, r, opts.Features.GenericWorkload)
		pod, err := snap.NewPod(podObj)
		if err != nil {
			t.Fatal(err)
		}
		c := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1})
		d := new(Evaluator).newDryRun(c, opts)
		if !d.byResources {
			t.Fatalf("trial %d: the dry run does not use the sums", trial)
		}
		var ks, ko Counter
		ks.begin(c)
		ko.begin(c)
		// prepare lists each worker's units and wraps its checker: the
		// sums counted in ks, the overlay counted in ko, the sums plain.
		prepare := func(w *worker, node *snapshot.Node, k *Counter, byResources bool) fitChecker {
			d.counter, d.byResources = k, byResources
			fit, err := d.prepare(w, node)
			if err != nil {
				t.Fatal(err)
			}
			return fit
		}
		for _, node := range snap.Nodes {
			var ws, wo, wp worker
			fs, fo, fp := prepare(&ws, node, &ks, true), prepare(&wo, node, &ko, false), prepare(&wp, node, nil, true)
			if ws.units.len() == 0 {
				continue
			}
			got := d.selectVictimsOnNode(&ws, node, &ws.units, fs)
			want := d.selectVictimsOnNode(&wo, node, &wo.units, fo)
			plain := d.selectVictimsOnNode(&wp, node, &wp.units, fp)
			walks++
			cs, co := &ks.nodes[node.Index].count, &ko.nodes[node.Index].count
			if diff := cmp.Diff(filterCounts(co), filterCounts(cs)); diff != "" {
				t.Fatalf("trial %d node %s: counts differ (-overlay +sums):\n%s", trial, node.Name, diff)
			}
			if cs.Filter != (filter.Evaluations{}).Filter {
				counted++
			}
			if diff := cmp.Diff(describeOutcome(plain), describeOutcome(got)); diff != "" {
				t.Fatalf("trial %d node %s: counting changed the walk (-plain +counted):\n%s", trial, node.Name, diff)
			}
			if diff := cmp.Diff(describeOutcome(want), describeOutcome(got)); diff != "" {
				t.Fatalf("trial %d node %s: counted walks differ (-overlay +sums):\n%s", trial, node.Name, diff)
			}
		}
		d.counter, d.byResources = nil, true

		// A whole evaluation chooses the same with and without a counter.
		fr := c.FilterAll()
		if len(fr.Feasible) > 0 {
			continue
		}
		var k Counter
		plainRes, err := Evaluate(c, fr, opts)
		if err != nil {
			t.Fatal(err)
		}
		plain := describeResult(plainRes)
		opts.Counter = &k
		countedRes, err := Evaluate(c, fr, opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(plain, describeResult(countedRes)); diff != "" {
			t.Fatalf("trial %d: counting changed the evaluation (-plain +counted):\n%s", trial, diff)
		}
	}
	if walks < 500 || counted < 500 {
		t.Fatalf("%d walks, %d counted: the random clusters are too small", walks, counted)
	}
}

// describeResult is what an evaluation decides, comparable across runs.
func describeResult(res *Result) []string {
	var out []string
	for _, n := range res.Visited {
		out = append(out, "visited "+n.Name)
	}
	for _, c := range res.Candidates {
		s := describeOutcome(nodeOutcome{cand: c})
		out = append(out, fmt.Sprintf("candidate %s %v %d", c.Node.Name, s.Victims, s.NumViolating))
	}
	if res.Chosen != nil {
		out = append(out, "chosen "+res.Chosen.Node.Name)
	}
	return out
}

// BenchmarkEvaluateCounter measures a preemption dry run over 500
// resources-only nodes of 10 pods each, without a counter (the cost must
// be the walk's alone: compare allocs/op with the walk before counters)
// and with one.
func BenchmarkEvaluateCounter(b *testing.B) {
	var objs snapshot.Objects
	for i := range 500 {
		node := fmt.Sprintf("n%03d", i)
		objs.Nodes = append(objs.Nodes, rt.Node(node).CPU("4").Obj())
		for j := range 10 {
			objs.Pods = append(objs.Pods, rt.Pod("default", fmt.Sprintf("p%03d-%d", i, j)).Priority(int32(j%3)).
				Req("400m", "").StartedAt(j).On(node).Obj())
		}
	}
	c := newCycle(b, objs, rt.Pod("default", "preemptor").Priority(100).Req("1500m", "").Obj(), 1)
	fr := c.FilterAll()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, bc := range []struct {
		name    string
		counter *Counter
	}{{"counter=nil", nil}, {"counter", &Counter{}}} {
		b.Run(bc.name, func(b *testing.B) {
			var e Evaluator
			opts := Options{Now: now, Counter: bc.counter}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Evaluate(c, fr, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
