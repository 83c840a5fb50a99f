package preemption

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// cost is a victim set's standing, computed independently of the search:
// upstream's criteria in order, each lower is better except start.
type cost struct {
	violations int
	highest    int32
	sum        int64
	count      int
	start      int64
}

func (a cost) less(b cost) bool {
	switch {
	case a.violations != b.violations:
		return a.violations < b.violations
	case a.highest != b.highest:
		return a.highest < b.highest
	case a.sum != b.sum:
		return a.sum < b.sum
	case a.count != b.count:
		return a.count < b.count
	}
	return a.start > b.start
}

// costOfVictims charges every budget a victim matches, in the victims'
// order, and counts the victims at which some budget goes negative.
func costOfVictims(victims []snapshot.RankedPod, snap *snapshot.Snapshot) cost {
	allowed := map[string]int32{}
	for _, b := range snap.PDBs {
		allowed[b.Name] = b.Status.DisruptionsAllowed
	}
	c := cost{highest: victims[0].Priority, start: victims[0].Start}
	for _, v := range victims {
		c.sum += int64(v.Priority) + 1<<31
		c.count++
		violating := false
		for _, b := range snap.PDBs {
			sel := labels.SelectorFromSet(b.Spec.Selector.MatchLabels)
			if b.Namespace == v.Pod.Namespace() && len(v.Pod.Obj().Labels) > 0 && sel.Matches(labels.Set(v.Pod.Obj().Labels)) {
				allowed[b.Name]--
				if allowed[b.Name] < 0 {
					violating = true
				}
			}
		}
		if violating {
			c.violations++
		}
		switch {
		case v.Priority == c.highest:
			c.start = min(c.start, v.Start)
		case v.Priority > c.highest:
			// Victims are in importance order; the first has the highest priority.
			panic("victims out of order")
		}
	}
	return c
}

// randomPolicyCluster is a small cluster with budgets, where the pod may
// also bring host ports, topology spread or anti-affinity.
func randomPolicyCluster(t *testing.T, r *rand.Rand) (*snapshot.Snapshot, *v1.Pod) {
	t.Helper()
	var objs snapshot.Objects
	numNodes := 1 + r.IntN(3)
	for i := range numNodes {
		objs.Nodes = append(objs.Nodes, rt.Node(fmt.Sprintf("n%d", i)).CPU(fmt.Sprint(2+r.IntN(3))).Memory("8Gi").Pods(4+r.IntN(8)).Zone(fmt.Sprintf("z%d", i%2)).Obj())
	}
	for i := range 3 + r.IntN(10) {
		b := rt.Pod("default", fmt.Sprintf("p%d", i)).Priority(int32(r.IntN(4)*10)).
			Req(fmt.Sprintf("%dm", 100*(1+r.IntN(10))), fmt.Sprintf("%dMi", 128*r.IntN(8))).
			Label("app", fmt.Sprintf("a%d", r.IntN(3))).On(fmt.Sprintf("n%d", r.IntN(numNodes))).StartedAt(r.IntN(50))
		if r.IntN(8) == 0 {
			b.HostPort(8080, v1.ProtocolTCP, "")
		}
		objs.Pods = append(objs.Pods, b.Obj())
	}
	for i := range r.IntN(3) {
		objs.PDBs = append(objs.PDBs, rt.PDB("default", fmt.Sprintf("b%d", i), map[string]string{"app": fmt.Sprintf("a%d", i)}, int32(r.IntN(2))))
	}
	snap, err := snapshot.New(objs)
	if err != nil {
		t.Fatal(err)
	}
	p := rt.Pod("default", "preemptor").Priority(100).Req(fmt.Sprintf("%dm", 200*(1+r.IntN(15))), "").Label("app", "new")
	switch r.IntN(5) {
	case 0:
		p.HostPort(8080, v1.ProtocolTCP, "")
	case 1:
		p.Spread(1, v1.LabelTopologyZone, map[string]string{"app": "a1"})
	case 2:
		p.PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "a2"})
	case 3:
		// Required affinity: evicting more can make the pod unfit.
		p.PodAffinity(v1.LabelHostname, map[string]string{"app": "a1"})
	}
	return snap, p.Obj()
}

// TestMinimalMatchesBruteForce enumerates every victim subset of small
// nodes and checks the search: never worse than upstream's set, and equal
// to the true optimum wherever it claims to have proven it.
func TestMinimalMatchesBruteForce(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(21, 22))
	nodesSearched, improved, proven := 0, 0, 0
	for trial := range 2000 {
		snap, podObj := randomPolicyCluster(t, r)
		pod, err := snap.NewPod(podObj)
		if err != nil {
			t.Fatal(err)
		}
		c := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1})
		var e Evaluator
		d := e.newDryRun(c, Options{Now: now})
		w := &d.e.workers[0]
		for _, node := range snap.Nodes {
			base := d.selectVictims(w, node).cand
			if base == nil {
				continue
			}
			baseVictims := victimsOf(base)
			got := d.minimize(w, node, base)
			gotCost := costOfVictims(victimsOf(got), snap)
			if got.NumPDBViolations != gotCost.violations {
				t.Fatalf("trial %d node %s: candidate says %d violations, its victims make %d", trial, node.Name, got.NumPDBViolations, gotCost.violations)
			}
			baseCost := costOfVictims(baseVictims, snap)
			if baseCost.less(gotCost) {
				t.Fatalf("trial %d node %s: minimal %v is worse than upstream %v", trial, node.Name, gotCost, baseCost)
			}
			if gotCost.less(baseCost) {
				improved++
			}
			// Brute force: every subset that makes the preemptor fit, the
			// node's state reached as the dry run reaches it (every
			// potential victim removed, the others added back: host ports
			// are a set, so the path matters as it does upstream).
			units := d.potentialPods(&worker{}, node)
			n := units.len()
			order := make([]int32, n)
			for i := range order {
				order[i] = int32(i)
			}
			if !units.sorted {
				units.sortUnits(order)
			}
			var best *cost
			for mask := 1; mask < 1<<n; mask++ {
				var fit overlayFit
				fit.reset(c, node, &units)
				var victims []snapshot.RankedPod
				for u := range n {
					fit.remove(u)
				}
				for _, u := range order {
					if mask&(1<<u) != 0 {
						victims = append(victims, units.members[u])
					} else {
						fit.add(int(u))
					}
				}
				if !fit.fits(nil) {
					continue
				}
				if cc := costOfVictims(victims, snap); best == nil || cc.less(*best) {
					best = &cc
				}
			}
			nodesSearched++
			if best == nil {
				t.Fatalf("trial %d node %s: no subset fits, but upstream found one", trial, node.Name)
			}
			if best.less(gotCost) && got.Proven {
				t.Fatalf("trial %d node %s: minimal %v claims optimum, brute force finds %v", trial, node.Name, gotCost, *best)
			}
			if got.Proven {
				proven++
			}
		}
	}
	if nodesSearched < 500 || improved < 20 || proven < nodesSearched/2 {
		t.Fatalf("%d nodes searched, %d improved, %d proven: the random clusters do not exercise the search", nodesSearched, improved, proven)
	}
	t.Logf("%d nodes searched, minimal better than upstream on %d, proven optimal on %d", nodesSearched, improved, proven)
}

// victimsOf lists a candidate's victims as ranked pods, in its order.
func victimsOf(c *Candidate) []snapshot.RankedPod {
	out := make([]snapshot.RankedPod, len(c.Victims))
	for i, v := range c.Victims {
		out[i] = snapshot.RankedPod{Pod: v.Pod, Priority: v.Priority, Start: v.Start}
	}
	return out
}

// evaluateUnschedulable filters pod on snap and, when no node fits,
// evaluates preemption with opts. It returns nil when some node fits.
func evaluateUnschedulable(t *testing.T, snap *snapshot.Snapshot, pod *snapshot.Pod, opts Options) *Result {
	t.Helper()
	c := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1})
	fr := c.FilterAll()
	if len(fr.Feasible) > 0 {
		return nil
	}
	res, err := Evaluate(c, fr, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPoliciesNeverWorseThanUpstream checks whole evaluations: under
// Minimal the chosen set is never worse than upstream's chosen set on
// upstream's own order, and StrictPDB never breaks a budget.
func TestPoliciesNeverWorseThanUpstream(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(31, 32))
	better, strictRefused := 0, 0
	for trial := range 1500 {
		snap, podObj := randomPolicyCluster(t, r)
		pod, err := snap.NewPod(podObj)
		if err != nil {
			t.Fatal(err)
		}
		eval := func(p Policy) *Result {
			return evaluateUnschedulable(t, snap, pod, Options{Now: now, Seed: uint64(trial), Policy: p})
		}
		up, minimal, strict := eval(Upstream), eval(Minimal), eval(StrictPDB)
		if up == nil || up.Chosen == nil {
			if minimal != nil && minimal.Chosen != nil {
				t.Fatalf("trial %d: minimal preempts where upstream finds no candidate", trial)
			}
			continue
		}
		if minimal.Upstream == nil || minimal.Upstream.Node != up.Chosen.Node {
			t.Fatalf("trial %d: minimal reports upstream's choice as %v, upstream chose %s", trial, minimal.Upstream, up.Chosen.Node.Name)
		}
		upCost, minCost := costOfVictims(victimsOf(up.Chosen), snap), costOfVictims(victimsOf(minimal.Chosen), snap)
		if upCost.less(minCost) {
			t.Fatalf("trial %d: minimal chose %s %v, worse than upstream's %s %v", trial, minimal.Chosen.Node.Name, minCost, up.Chosen.Node.Name, upCost)
		}
		if minCost.less(upCost) {
			better++
		}
		if strict.Chosen == nil {
			strictRefused++
		} else if costOfVictims(victimsOf(strict.Chosen), snap).violations > 0 {
			t.Fatalf("trial %d: strict-pdb breaks a budget on %s", trial, strict.Chosen.Node.Name)
		}
	}
	if better < 20 {
		t.Fatalf("minimal beat upstream in only %d evaluations; the clusters do not exercise it", better)
	}
	t.Logf("minimal better than upstream in %d evaluations; strict-pdb refused %d", better, strictRefused)
}
