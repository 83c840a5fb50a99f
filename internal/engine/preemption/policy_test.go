package preemption

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
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
// order, and counts the victims at which some budget goes negative; the
// highest priority is the first victim's, the start the earliest of those
// of the highest priority met from the first on, as upstream scores a
// candidate.
func costOfVictims(victims []snapshot.RankedPod, snap *snapshot.Snapshot) cost {
	allowed := map[string]int32{}
	for _, b := range snap.PDBs {
		allowed[b.Name] = b.Status.DisruptionsAllowed
	}
	c := cost{highest: victims[0].Priority, start: victims[0].Start}
	maxPrio := c.highest
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
		case v.Priority == maxPrio:
			c.start = min(c.start, v.Start)
		case v.Priority > maxPrio:
			// A member of a group evicted whole may rank above the group.
			maxPrio, c.start = v.Priority, v.Start
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

// randomConstrainedCluster is a small cluster where fit is not monotone in
// the pods removed: the preemptor may need pods below its priority
// (required affinity, by host or zone, sometimes to its own app), spread
// over pods that removal unbalances, and host ports; pods may keep it
// away with their anti-affinity, and two pods of a node may hold the
// same host port.
func randomConstrainedCluster(t *testing.T, r *rand.Rand) (*snapshot.Snapshot, *v1.Pod) {
	t.Helper()
	var objs snapshot.Objects
	numNodes := 2 + r.IntN(3)
	for i := range numNodes {
		objs.Nodes = append(objs.Nodes, rt.Node(fmt.Sprintf("n%d", i)).CPU(fmt.Sprint(2+r.IntN(4))).Memory("8Gi").Pods(4+r.IntN(8)).Zone(fmt.Sprintf("z%d", i%2)).Obj())
	}
	priorities := []int32{-1, 0, 0, 10, 20, 200}
	apps := []string{"a0", "a1", "a1", "a2"}
	for i := range 3 + r.IntN(10) {
		b := rt.Pod("default", fmt.Sprintf("p%d", i)).Priority(priorities[r.IntN(len(priorities))]).
			Req(fmt.Sprintf("%dm", 100*(1+r.IntN(10))), fmt.Sprintf("%dMi", 128*r.IntN(8))).
			Label("app", apps[r.IntN(len(apps))]).On(fmt.Sprintf("n%d", r.IntN(numNodes))).StartedAt(r.IntN(50))
		switch r.IntN(8) {
		case 0:
			b.HostPort(8080, v1.ProtocolTCP, "")
		case 1:
			b.PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "new"})
		case 2:
			b.PodAntiAffinity(v1.LabelTopologyZone, map[string]string{"app": "new"})
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
	p := rt.Pod("default", "preemptor").Priority(100).Req(fmt.Sprintf("%dm", 200*(1+r.IntN(12))), "").Label("app", "new")
	keys := []string{v1.LabelHostname, v1.LabelTopologyZone}
	if r.IntN(4) > 0 {
		if r.IntN(4) == 0 {
			// Self-affinity: with no a1 pod left anywhere, it fits alone.
			p.Label("app", "a1")
		}
		p.PodAffinity(keys[r.IntN(2)], map[string]string{"app": "a1"})
	}
	if r.IntN(3) == 0 {
		p.Spread(1, keys[r.IntN(2)], map[string]string{"app": apps[r.IntN(len(apps))]})
	}
	if r.IntN(4) == 0 {
		p.HostPort(8080, v1.ProtocolTCP, "")
	}
	if r.IntN(5) == 0 {
		p.PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "a2"})
	}
	return snap, p.Obj()
}

// randomGroupCluster is a small cluster of pod groups (with the
// GenericWorkload gate, a group whose disruption mode is All is evicted
// whole, on every node it spans) under a preemptor that spreads over
// zones the pods such groups hold, and sometimes requires some of them:
// removing a member on another node can unbalance the spread.
func randomGroupCluster(t *testing.T, r *rand.Rand) (*snapshot.Snapshot, *v1.Pod) {
	t.Helper()
	var objs snapshot.Objects
	numNodes := 2 + r.IntN(3)
	for i := range numNodes {
		objs.Nodes = append(objs.Nodes, rt.Node(fmt.Sprintf("n%d", i)).CPU(fmt.Sprint(2+r.IntN(3))).Memory("8Gi").Pods(4+r.IntN(6)).Zone(fmt.Sprintf("z%d", i%2)).Obj())
	}
	for i := range 3 + r.IntN(8) {
		p := rt.Pod("default", fmt.Sprintf("p%d", i)).Priority(int32(r.IntN(4))).
			Req(fmt.Sprintf("%dm", 100*(1+r.IntN(10))), "").Label("app", fmt.Sprintf("a%d", r.IntN(2))).
			On(fmt.Sprintf("n%d", r.IntN(numNodes))).StartedAt(r.IntN(50)).Obj()
		if r.IntN(3) > 0 {
			name := fmt.Sprintf("g%d", r.IntN(3))
			p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
		}
		objs.Pods = append(objs.Pods, p)
	}
	objs.PodGroups = []*schedulingv1beta1.PodGroup{rt.PodGroup("g0", 1, "All", ""), rt.PodGroup("g1", 0, "Single", ""), rt.PodGroup("g2", 2, "All", "")}
	for i := range r.IntN(2) {
		objs.PDBs = append(objs.PDBs, rt.PDB("default", fmt.Sprintf("b%d", i), map[string]string{"app": fmt.Sprintf("a%d", i)}, int32(r.IntN(2))))
	}
	snap, err := snapshot.New(objs)
	if err != nil {
		t.Fatal(err)
	}
	p := rt.Pod("default", "preemptor").Priority(5).Req(fmt.Sprintf("%dm", 200*(1+r.IntN(10))), "").Label("app", "a1").
		Spread(1, v1.LabelTopologyZone, map[string]string{"app": "a1"})
	if r.IntN(3) == 0 {
		p.PodAffinity(v1.LabelTopologyZone, map[string]string{"app": "a0"})
	}
	return snap, p.Obj()
}

// nodeOracle enumerates every victim set of one node: best is the
// cost of the best set that makes the preemptor fit (nil when none does),
// and fits says whether a given set does.
type nodeOracle struct {
	best *cost
	fits func(victims []*Victim) bool
}

// bruteForce enumerates every subset of node's potential victims, the
// node's state reached as the dry run reaches it (every potential victim
// removed, the others added back in importance order: host ports are a
// set, so the path matters as it does upstream).
func bruteForce(t *testing.T, d *dryRun, c *filter.Cycle, snap *snapshot.Snapshot, node *snapshot.Node) nodeOracle {
	t.Helper()
	units := d.potentialPods(&worker{}, node)
	if d.groups != nil {
		var err error
		if units, err = d.groups.unitsOn(&worker{}, node, c.Pod().Priority, d.nowNanos); err != nil {
			t.Fatal(err)
		}
	}
	n := units.len()
	if n > 16 {
		t.Fatalf("node %s has %d potential victims: too many to enumerate", node.Name, n)
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	if !units.sorted {
		units.sortUnits(order)
	}
	fitsMask := func(mask int) bool {
		var fit overlayFit
		fit.reset(c, node, &units)
		for u := range n {
			fit.remove(u)
		}
		for _, u := range order {
			if mask&(1<<u) == 0 {
				fit.add(int(u))
			}
		}
		return fit.fits(nil)
	}
	var o nodeOracle
	for mask := 1; mask < 1<<n; mask++ {
		if !fitsMask(mask) {
			continue
		}
		var victims []snapshot.RankedPod
		for _, u := range order {
			if mask&(1<<u) != 0 {
				lo, hi := units.bounds(int(u))
				victims = append(victims, units.members[lo:hi]...)
			}
		}
		if cc := costOfVictims(victims, snap); o.best == nil || cc.less(*o.best) {
			o.best = &cc
		}
	}
	o.fits = func(victims []*Victim) bool {
		mask := 0
		for _, v := range victims {
			m := slices.IndexFunc(units.members, func(m snapshot.RankedPod) bool { return m.Pod == v.Pod })
			if m < 0 {
				t.Fatalf("victim %s is no potential victim of %s", v.Pod.Key, node.Name)
			}
			for u := range n {
				if lo, hi := units.bounds(u); lo <= m && m < hi {
					mask |= 1 << u
				}
			}
		}
		return mask != 0 && fitsMask(mask)
	}
	return o
}

// TestMinimalMatchesBruteForce enumerates every victim subset of every
// potential node of small clusters, those where fit is not monotone in the
// pods removed among them, and checks the search node by node: the set it
// returns makes the preemptor fit, is never worse than upstream's, and is
// the true optimum wherever it is proven; where upstream has no candidate
// but some subset makes room, the search finds the optimum too; where no
// subset makes room, it finds none.
func TestMinimalMatchesBruteForce(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		cluster  func(*testing.T, *rand.Rand) (*snapshot.Snapshot, *v1.Pod)
		seed     uint64
		features Features
		// wantImproved and wantBeyond are the fewest nodes where the
		// search beats upstream's set, and where upstream has no
		// candidate but the search finds a set.
		wantImproved, wantBeyond int
	}{
		"resources, ports, spread, anti-affinity": {cluster: randomPolicyCluster, seed: 21, wantImproved: 100, wantBeyond: 100},
		"not monotone":          {cluster: randomConstrainedCluster, seed: 23, wantImproved: 10, wantBeyond: 200},
		"groups spanning nodes": {cluster: randomGroupCluster, seed: 25, features: Features{GenericWorkload: true}, wantImproved: 10, wantBeyond: 10},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(tc.seed, 22))
			nodesSearched, found, improved, proven, beyond, cutOff := 0, 0, 0, 0, 0, 0
			for trial := range 2000 {
				snap, podObj := tc.cluster(t, r)
				pod, err := snap.NewPod(podObj)
				if err != nil {
					t.Fatal(err)
				}
				c := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1})
				fr := c.FilterAll()
				if len(fr.Feasible) > 0 {
					continue
				}
				var e Evaluator
				d := e.newDryRun(c, Options{Now: now, Features: tc.features})
				w := &d.e.workers[0]
				for i, node := range snap.Nodes {
					if fr.Statuses[i].Code != filter.Unschedulable {
						continue
					}
					nodesSearched++
					var got *Candidate
					searched, cut := true, false
					base := d.selectVictims(w, node).cand
					if base != nil {
						got = d.minimize(w, node, base)
						cut = !got.Proven
					} else {
						got, _, searched, cut = d.searchBeyond(w, node, MaxSearchSteps)
					}
					o := bruteForce(t, d, c, snap, node)
					where := fmt.Sprintf("trial %d node %s", trial, node.Name)
					if cut {
						cutOff++
					}
					if got == nil {
						if o.best != nil && !cut {
							t.Fatalf("%s: no set found (searched %v), brute force finds %v", where, searched, *o.best)
						}
						continue
					}
					found++
					if !o.fits(got.Victims) {
						t.Fatalf("%s: minimal's victims %v do not make room", where, victimsOf(got))
					}
					gotCost := costOfVictims(victimsOf(got), snap)
					if got.NumPDBViolations != gotCost.violations {
						t.Fatalf("%s: candidate says %d violations, its victims make %d", where, got.NumPDBViolations, gotCost.violations)
					}
					if base != nil {
						baseCost := costOfVictims(victimsOf(base), snap)
						if baseCost.less(gotCost) {
							t.Fatalf("%s: minimal %v is worse than upstream %v", where, gotCost, baseCost)
						}
						if gotCost.less(baseCost) {
							improved++
						}
					} else {
						beyond++
					}
					if got.Proven {
						proven++
						if *o.best != gotCost {
							t.Fatalf("%s: minimal %v claims optimum, brute force finds %v", where, gotCost, *o.best)
						}
					}
				}
			}
			if nodesSearched < 900 || found < 500 || improved < tc.wantImproved || proven < found*9/10 || beyond < tc.wantBeyond {
				t.Fatalf("%d nodes searched, %d with a set, %d improved, %d proven, %d beyond upstream, %d cut off: the random clusters do not exercise the search",
					nodesSearched, found, improved, proven, beyond, cutOff)
			}
			t.Logf("%d nodes searched, a set found on %d: better than upstream's on %d, where upstream has none on %d; proven optimal on %d, cut off on %d",
				nodesSearched, found, improved, beyond, proven, cutOff)
		})
	}
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

// TestPoliciesNeverWorseThanUpstream checks whole evaluations against the
// brute force over every potential node: Minimal chooses the best set of
// the cluster (and so is never worse than upstream's choice on upstream's
// own order), also where upstream finds no candidate; StrictPDB chooses
// the best set that breaks no budget, and refuses only when there is
// none. The policies search every potential node, upstream's dropped
// ones among Beyond. With a tiny bound on the searches beyond upstream,
// the nodes it stops are reported cut off and the choice is never worse
// than upstream's.
func TestPoliciesNeverWorseThanUpstream(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		cluster     func(*testing.T, *rand.Rand) (*snapshot.Snapshot, *v1.Pod)
		seed        uint64
		features    Features
		beyondSteps int
	}{
		"resources, ports, spread, anti-affinity": {cluster: randomPolicyCluster, seed: 31},
		"not monotone":                    {cluster: randomConstrainedCluster, seed: 33},
		"not monotone, beyond bound of 5": {cluster: randomConstrainedCluster, seed: 33, beyondSteps: 5},
		"groups spanning nodes":           {cluster: randomGroupCluster, seed: 35, features: Features{GenericWorkload: true}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(tc.seed, 32))
			better, beyond, strictRefused, cutOff := 0, 0, 0, 0
			for trial := range 1500 {
				snap, podObj := tc.cluster(t, r)
				pod, err := snap.NewPod(podObj)
				if err != nil {
					t.Fatal(err)
				}
				eval := func(p Policy) *Result {
					return evaluateUnschedulable(t, snap, pod, Options{Now: now, Seed: uint64(trial), Policy: p, Features: tc.features, beyondSteps: tc.beyondSteps})
				}
				up, minimal, strict := eval(Upstream), eval(Minimal), eval(StrictPDB)
				if up == nil {
					continue
				}
				// The brute force over every potential node: the best set
				// of the cluster, and the best that breaks no budget.
				c := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1})
				var e Evaluator
				d := e.newDryRun(c, Options{Now: now, Features: tc.features})
				oracles := map[*snapshot.Node]nodeOracle{}
				var best, bestStrict *cost
				for _, node := range up.PotentialNodes {
					o := bruteForce(t, d, c, snap, node)
					oracles[node] = o
					if o.best != nil && (best == nil || o.best.less(*best)) {
						best = o.best
					}
					if o.best != nil && o.best.violations == 0 && (bestStrict == nil || o.best.less(*bestStrict)) {
						bestStrict = o.best
					}
				}
				for p, res := range map[Policy]*Result{Minimal: minimal, StrictPDB: strict} {
					if !slices.Equal(res.Searched, rotated(up.PotentialNodes, up.Offset)) {
						t.Fatalf("trial %d: %s searched %v, not every potential node", trial, p, names(res.Searched))
					}
					for _, n := range res.Beyond {
						if slices.ContainsFunc(up.Candidates, func(c *Candidate) bool { return c.Node == n }) {
							t.Fatalf("trial %d: %s lists %s beyond upstream, where upstream has a candidate", trial, p, n.Name)
						}
					}
					for _, c := range res.Candidates {
						if c.Proven == slices.Contains(res.CutOff, c.Node) {
							t.Fatalf("trial %d: %s candidate %s proven %v, cut off %v", trial, p, c.Node.Name, c.Proven, names(res.CutOff))
						}
						if !oracles[c.Node].fits(c.Victims) {
							t.Fatalf("trial %d: %s candidate %s: victims %v do not make room", trial, p, c.Node.Name, victimsOf(c))
						}
					}
				}
				if len(minimal.CutOff) > 0 {
					cutOff++
				}
				if up.Chosen != nil && minimal.Upstream != up.Chosen && (minimal.Upstream == nil || minimal.Upstream.Node != up.Chosen.Node) {
					t.Fatalf("trial %d: minimal reports upstream's choice as %v, upstream chose %s", trial, minimal.Upstream, up.Chosen.Node.Name)
				}
				var minCost *cost
				if minimal.Chosen != nil {
					mc := costOfVictims(victimsOf(minimal.Chosen), snap)
					minCost = &mc
				}
				switch {
				case best == nil && minCost != nil:
					t.Fatalf("trial %d: minimal preempts on %s, where brute force finds no set", trial, minimal.Chosen.Node.Name)
				case len(minimal.CutOff) == 0 && best != nil && (minCost == nil || *minCost != *best):
					t.Fatalf("trial %d: minimal chose %v, brute force finds %v", trial, minCost, *best)
				}
				if up.Chosen != nil {
					upCost := costOfVictims(victimsOf(up.Chosen), snap)
					if minCost == nil || upCost.less(*minCost) {
						t.Fatalf("trial %d: minimal chose %v, worse than upstream's %s %v", trial, minCost, up.Chosen.Node.Name, upCost)
					}
					if minCost.less(upCost) {
						better++
					}
				} else if minCost != nil {
					beyond++
				}
				if strict.Chosen == nil {
					if bestStrict != nil && len(strict.CutOff) == 0 {
						t.Fatalf("trial %d: strict-pdb refuses, brute force finds %v", trial, *bestStrict)
					}
					if up.Chosen != nil {
						strictRefused++
					}
					continue
				}
				sc := costOfVictims(victimsOf(strict.Chosen), snap)
				if sc.violations > 0 {
					t.Fatalf("trial %d: strict-pdb breaks a budget on %s", trial, strict.Chosen.Node.Name)
				}
				if len(strict.CutOff) == 0 && (bestStrict == nil || sc != *bestStrict) {
					t.Fatalf("trial %d: strict-pdb chose %v, brute force finds %v", trial, sc, bestStrict)
				}
			}
			if better < 10 || beyond < 20 || (tc.beyondSteps > 0) != (cutOff > 0) {
				t.Fatalf("minimal beat upstream in %d evaluations, preempted where it does not in %d, was cut off in %d: the clusters do not exercise it", better, beyond, cutOff)
			}
			t.Logf("minimal better than upstream in %d evaluations, preempts where upstream does not in %d, cut off in %d; strict-pdb refused %d", better, beyond, cutOff, strictRefused)
		})
	}
}

// rotated is nodes from offset on, wrapping around: the dry run's order.
func rotated(nodes []*snapshot.Node, offset int) []*snapshot.Node {
	return append(slices.Clone(nodes[offset:]), nodes[:offset]...)
}

// names lists the nodes' names.
func names(nodes []*snapshot.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}
