package preemption

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestReschedulable is the case Minimal gets wrong for a pinned pod: two
// equal pods, the younger pinned to its node as a DaemonSet pod is; the
// start criterion makes Minimal (and upstream) evict the pinned one, which
// can then run nowhere, where evicting the other, which fits on n1, would
// do as well.
func TestReschedulable(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		policy Policy
		// n1Full fills n1 so that neither pod fits there.
		n1Full          bool
		wantVictims     []string
		wantPlacedOn    []string // "" for a victim that fits nowhere
		wantReasons     []string // substrings of the pending reasons
		wantUnplaceable int
		wantUpstreamOn  []string
		wantDecidedBy   string
	}{
		"minimal evicts the pinned pod": {
			policy: Minimal, wantVictims: []string{"default/pinned"},
		},
		"reschedulable evicts the pod that fits elsewhere": {
			policy: Reschedulable, wantVictims: []string{"default/free"}, wantPlacedOn: []string{"n1"},
			wantReasons: []string{""}, wantUpstreamOn: []string{""},
		},
		"reschedulable keeps minimal's set when no set does better": {
			policy: Reschedulable, n1Full: true, wantVictims: []string{"default/pinned"}, wantPlacedOn: []string{""},
			wantReasons:     []string{"0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) the pod was preempted from."},
			wantUnplaceable: 1, wantUpstreamOn: []string{""},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := snapshot.Objects{
				Nodes: []*v1.Node{rt.Node("n0").CPU("2").Pods(10).Obj(), rt.Node("n1").CPU("1").Pods(10).Obj()},
				Pods: []*v1.Pod{
					rt.Pod("default", "free").Priority(10).Req("1", "").On("n0").StartedAt(1).Obj(),
					rt.Pod("default", "pinned").Priority(10).Req("1", "").NodeNameIn("n0").On("n0").StartedAt(5).Obj(),
				},
			}
			if tc.n1Full {
				objs.Pods = append(objs.Pods, rt.Pod("default", "big").Priority(1000).Req("1", "").On("n1").Obj())
			}
			snap, err := snapshot.New(objs)
			if err != nil {
				t.Fatal(err)
			}
			pod, err := snap.NewPod(rt.Pod("default", "p").Priority(100).Req("1", "").NodeNameIn("n0").Obj())
			if err != nil {
				t.Fatal(err)
			}
			c := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1})
			res, err := Evaluate(c, c.FilterAll(), Options{Now: now, Policy: tc.policy})
			if err != nil {
				t.Fatal(err)
			}
			if res.Chosen == nil {
				t.Fatal("no candidate")
			}
			var victims, placedOn, reasons []string
			for _, v := range res.Chosen.Victims {
				victims = append(victims, v.Pod.Key)
			}
			for _, p := range res.Chosen.Placements {
				on := ""
				if p.Node != nil {
					on = p.Node.Name
				}
				placedOn, reasons = append(placedOn, on), append(reasons, p.Reason)
			}
			if diff := cmp.Diff(tc.wantVictims, victims); diff != "" {
				t.Errorf("victims (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPlacedOn, placedOn); diff != "" {
				t.Errorf("placements (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantReasons, reasons); diff != "" {
				t.Errorf("pending reasons (-want,+got):\n%s", diff)
			}
			if res.Chosen.Unplaceable != tc.wantUnplaceable {
				t.Errorf("Unplaceable = %d, want %d", res.Chosen.Unplaceable, tc.wantUnplaceable)
			}
			var upstreamOn []string
			for _, p := range res.Upstream.Placements {
				on := ""
				if p.Node != nil {
					on = p.Node.Name
				}
				upstreamOn = append(upstreamOn, on)
			}
			if diff := cmp.Diff(tc.wantUpstreamOn, upstreamOn); diff != "" {
				t.Errorf("upstream's victims' placements (-want,+got):\n%s", diff)
			}
		})
	}
}

// placeOracle places, independently of the placer, the victims of cand as
// a scheduler would bind them, most important first: each on a new
// snapshot of the cluster as it is by then (without the victims, with the
// preemptor bound to the candidate's node and each victim placed before
// bound to its node), filtered as a pending pod, and bound to the first
// feasible node in snapshot order other than its own. It returns each
// victim's node ("" for one that fits nowhere) and how many fit nowhere.
func placeOracle(t *testing.T, snap *snapshot.Snapshot, preemptor *v1.Pod, cand *Candidate) (nodes []string, unplaceable int) {
	t.Helper()
	evicted := map[string]bool{}
	for _, v := range cand.Victims {
		evicted[v.Pod.Key] = true
	}
	var base snapshot.Objects
	for _, n := range snap.Nodes {
		base.Nodes = append(base.Nodes, n.Obj)
	}
	for _, p := range snap.Pods() {
		if !evicted[p.Key] {
			base.Pods = append(base.Pods, p.Obj())
		}
	}
	bound := preemptor.DeepCopy()
	bound.Spec.NodeName = cand.Node.Name
	base.Pods = append(base.Pods, bound)
	base.PDBs = snap.PDBs
	for _, v := range cand.Victims {
		objs := base
		objs.Pods = slices.Clone(base.Pods)
		after, err := snapshot.New(objs)
		if err != nil {
			t.Fatal(err)
		}
		obj := v.Pod.Obj().DeepCopy()
		obj.Spec.NodeName = ""
		obj.Status = v1.PodStatus{Phase: v1.PodPending}
		p, err := after.NewPod(obj)
		if err != nil {
			t.Fatal(err)
		}
		on := ""
		for _, n := range filter.NewCycle(after, p, filter.Options{Parallelism: 1}).FilterAll().Feasible {
			if n.Name != v.Pod.NodeName() && (on == "" || after.Node(on).Index > n.Index) {
				on = n.Name
			}
		}
		nodes = append(nodes, on)
		if on == "" {
			unplaceable++
			continue
		}
		placed := v.Pod.Obj().DeepCopy()
		placed.Spec.NodeName = on
		base.Pods = append(base.Pods, placed)
	}
	return nodes, unplaceable
}

// placedOn lists the node of each placement ("" for none).
func placedOn(ps []Placement) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		if p.Node != nil {
			out[i] = p.Node.Name
		}
	}
	return out
}

// TestReschedulableNeverWorse checks whole evaluations on random clusters
// with pinned pods and pods with anti-affinity, and on clusters where fit
// is not monotone: the engine places the victims of its choice and of
// upstream's where placeOracle, which binds them one after another on
// fresh snapshots, places them, and counts as many unplaceable; on the
// node it picks, Reschedulable's victims are never more unplaceable than
// upstream's set there, and with as many, never worse under upstream's
// order; across nodes, its choice is never worse than upstream's choice
// by (unplaceable, upstream's order); it preempts where Minimal does.
// With a tiny placement work bound, the counts of the nodes it cuts are
// upper bounds and those nodes are not proven, but the choice keeps the
// cross-node promise and the oracle's count.
func TestReschedulableNeverWorse(t *testing.T) {
	for name, work := range map[string]int{"default bound": 0, "bound of 1": 1, "bound of 40": 40} {
		t.Run(name, func(t *testing.T) {
			checkReschedulable(t, randomPolicyCluster, 41, work)
			checkReschedulable(t, randomConstrainedCluster, 43, work)
		})
	}
}

func checkReschedulable(t *testing.T, cluster func(*testing.T, *rand.Rand) (*snapshot.Snapshot, *v1.Pod), seed uint64, work int) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(seed, 42))
	fewer, checked, unproven, beyond, together := 0, 0, 0, 0, 0
	for trial := range 600 {
		snap, podObj := cluster(t, r)
		// Some pods pinned to their node, as DaemonSet pods are, and some
		// that keep away from one app's pods.
		for i := range r.IntN(4) {
			node := snap.Nodes[r.IntN(len(snap.Nodes))].Name
			obj := rt.Pod("default", fmt.Sprintf("pinned%d", i)).Priority(int32(r.IntN(4)*10)).
				Req(fmt.Sprintf("%dm", 100*(1+r.IntN(10))), "").NodeNameIn(node).On(node).StartedAt(r.IntN(50)).Obj()
			if _, err := snap.AddPod(obj); err != nil {
				t.Fatal(err)
			}
		}
		for i := range r.IntN(3) {
			node := snap.Nodes[r.IntN(len(snap.Nodes))].Name
			obj := rt.Pod("default", fmt.Sprintf("apart%d", i)).Priority(int32(r.IntN(4)*10)).Label("app", "apart").
				Req(fmt.Sprintf("%dm", 100*(1+r.IntN(5))), "").PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "a0"}).
				On(node).StartedAt(r.IntN(50)).Obj()
			if _, err := snap.AddPod(obj); err != nil {
				t.Fatal(err)
			}
		}
		pod, err := snap.NewPod(podObj)
		if err != nil {
			t.Fatal(err)
		}
		eval := func(p Policy) *Result {
			return evaluateUnschedulable(t, snap, pod, Options{Now: now, Seed: uint64(trial), Policy: p, placementWork: work})
		}
		up, minimal, resched := eval(Upstream), eval(Minimal), eval(Reschedulable)
		if up == nil {
			continue
		}
		if (resched.Chosen == nil) != (minimal.Chosen == nil) {
			t.Fatalf("trial %d: reschedulable chose %v, minimal %v", trial, resched.Chosen, minimal.Chosen)
		}
		if resched.Chosen == nil {
			continue
		}
		checked++
		for _, c := range resched.Candidates {
			if !c.Proven {
				unproven++
			}
		}
		got := resched.Chosen
		gotOn, gotU := placeOracle(t, snap, podObj, got)
		if diff := cmp.Diff(gotOn, placedOn(got.Placements)); got.Unplaceable != gotU || diff != "" {
			t.Fatalf("trial %d: engine counts %d unplaceable victims on %s, the oracle %d; placements (-oracle,+engine):\n%s", trial, got.Unplaceable, got.Node.Name, gotU, diff)
		}
		alone := 0
		for _, v := range got.Victims {
			if _, u := placeOracle(t, snap, podObj, &Candidate{Node: got.Node, Victims: []*Victim{v}}); u > 0 {
				alone++
			}
		}
		if gotU > alone {
			together++
		}
		for _, c := range resched.Candidates {
			// A count is never below the truth.
			if _, u := placeOracle(t, snap, podObj, c); c.Unplaceable < u {
				t.Fatalf("trial %d node %s: engine counts %d unplaceable victims, the oracle %d", trial, c.Node.Name, c.Unplaceable, u)
			}
		}
		if up.Chosen == nil {
			beyond++
			continue
		}
		gotCost := costOfVictims(victimsOf(got), snap)
		for _, uc := range up.Candidates {
			if uc.Node != got.Node || work > 0 {
				continue
			}
			_, u := placeOracle(t, snap, podObj, uc)
			c := costOfVictims(victimsOf(uc), snap)
			if gotU > u || (gotU == u && c.less(gotCost)) {
				t.Fatalf("trial %d node %s: reschedulable (%d unplaceable, %v) is worse than upstream's set there (%d, %v)", trial, got.Node.Name, gotU, gotCost, u, c)
			}
		}
		upOn, upU := placeOracle(t, snap, podObj, up.Chosen)
		if diff := cmp.Diff(upOn, placedOn(resched.Upstream.Placements)); resched.Upstream.Unplaceable != upU || diff != "" {
			t.Fatalf("trial %d: engine counts %d of upstream's victims unplaceable, the oracle %d; placements (-oracle,+engine):\n%s", trial, resched.Upstream.Unplaceable, upU, diff)
		}
		upCost := costOfVictims(victimsOf(up.Chosen), snap)
		if gotU > upU || (gotU == upU && upCost.less(gotCost)) {
			t.Fatalf("trial %d: reschedulable chose %s (%d unplaceable, %v), worse than upstream's %s (%d, %v)", trial, got.Node.Name, gotU, gotCost, up.Chosen.Node.Name, upU, upCost)
		}
		if gotU < upU {
			fewer++
		}
		for i, p := range got.Placements {
			if (p.Node == nil) == (p.Reason == "") || (p.Node == nil && !strings.HasPrefix(p.Reason, "0/")) {
				t.Fatalf("trial %d: victim %d placement %+v", trial, i, p)
			}
		}
	}
	if checked < 200 || (work == 0 && fewer < 5) || together == 0 {
		t.Fatalf("%d evaluations checked, reschedulable had fewer unplaceable victims in %d, victims that fit alone but not together in %d: the clusters do not exercise it", checked, fewer, together)
	}
	if work == 1 && unproven == 0 {
		t.Fatalf("a work bound of 1 left every candidate proven")
	}
	t.Logf("%d evaluations, %d where upstream has no candidate; reschedulable left fewer victims unplaceable than upstream in %d; victims fit alone but not together in %d; %d candidates not proven",
		checked, beyond, fewer, together, unproven)
}
