package preemption

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// randomResourcesCluster builds a small cluster that only resources can
// reject pods on: nodes with few pod slots, pods with and without start
// times, pods nominated to nodes, budgets, and (for gang) pod groups spread
// over nodes, some evicted whole.
//
// One cluster in four is crowded instead: one or two big nodes with many
// pods, every running pod started, so that the importance order's suffix
// is longer than an insertion sort and full of ties in priority and start
// time.
func randomResourcesCluster(t *testing.T, r *rand.Rand, gang bool) (*snapshot.Snapshot, *v1.Pod) {
	t.Helper()
	var objs snapshot.Objects
	crowded := r.IntN(4) == 0
	numNodes, numPods := 1+r.IntN(4), 2+r.IntN(20)
	if crowded {
		numNodes, numPods = 1+r.IntN(2), 14+r.IntN(40)
	}
	for i := range numNodes {
		b := rt.Node(fmt.Sprintf("n%d", i)).CPU(fmt.Sprint(2 + r.IntN(4))).Memory(fmt.Sprintf("%dGi", 2+r.IntN(6))).Pods(2 + r.IntN(8))
		if crowded {
			b = rt.Node(fmt.Sprintf("n%d", i)).CPU(fmt.Sprint(4 + r.IntN(16))).Memory(fmt.Sprintf("%dGi", 8+r.IntN(24))).Pods(numPods + r.IntN(4))
		}
		objs.Nodes = append(objs.Nodes, b.Obj())
	}
	for i := range numPods {
		b := rt.Pod("default", fmt.Sprintf("p%d", i)).Priority(int32(r.IntN(4))).
			Req(fmt.Sprintf("%dm", 100*r.IntN(12)), fmt.Sprintf("%dMi", 256*r.IntN(8))).
			Label("app", fmt.Sprintf("a%d", r.IntN(3)))
		if r.IntN(6) == 0 {
			// Nominated, not running.
			b.Nominated(fmt.Sprintf("n%d", r.IntN(numNodes))).Priority(int32(2 + r.IntN(4)))
		} else {
			b.On(fmt.Sprintf("n%d", r.IntN(numNodes)))
			if crowded || r.IntN(5) > 0 {
				b.StartedAt(r.IntN(5))
			}
		}
		p := b.Obj()
		if gang && r.IntN(2) == 0 {
			name := fmt.Sprintf("g%d", r.IntN(3))
			p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
		}
		objs.Pods = append(objs.Pods, p)
	}
	if gang {
		objs.PodGroups = []*schedulingv1beta1.PodGroup{rt.PodGroup("g0", 1, "All", ""), rt.PodGroup("g1", 0, "Single", ""), rt.PodGroup("g2", 2, "All", "")}
	}
	for i := range r.IntN(3) {
		objs.PDBs = append(objs.PDBs, rt.PDB("default", fmt.Sprintf("b%d", i), map[string]string{"app": fmt.Sprintf("a%d", r.IntN(3))}, int32(r.IntN(2))))
	}
	snap, err := snapshot.New(objs)
	if err != nil {
		t.Fatal(err)
	}
	preemptor := rt.Pod("default", "preemptor").Priority(int32(1+r.IntN(5))).
		Req(fmt.Sprintf("%dm", 100*(1+r.IntN(30))), fmt.Sprintf("%dMi", 256*r.IntN(12))).Obj()
	return snap, preemptor
}

// plainFit hides a fit checker's fast paths (removerOfAll,
// reprieverOfAll): the walk then goes through remove, add and fits alone.
type plainFit struct{ fit fitChecker }

func (p plainFit) remove(u int)                 { p.fit.remove(u) }
func (p plainFit) add(u int)                    { p.fit.add(u) }
func (p plainFit) fits(why *filter.Status) bool { return p.fit.fits(why) }

// TestFitCheckersAgree runs the victim walk with both fit checkers — the
// node sums and the filter overlay — on the same random nodes, and checks
// that every answer is the same: each step of a random sequence of removals
// and additions, and the walk's outcome (status, victims, violations). The
// sums' walk runs twice, with its fast paths (removing every unit at once,
// the reprieve loop on its own sums) and without them: all three walks
// must decide alike. The random nodes have ties in priority and start
// time, pods nominated to them, budgets that evictions break and (with the
// GenericWorkload gate) units of several members, some on other nodes; the
// test fails when too few walks cover any of these.
func TestFitCheckersAgree(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(11, 12))
	walks, withVictims, misfits := 0, 0, 0
	// What the walks covered: lists taken from a cached importance order
	// longer than an insertion sort, with ties in its suffix; walks with
	// both budget-breaking and other victims; walks over units of several
	// members; nodes with nominated pods.
	var cachedLong, tiedSuffix, bothParts, multiMember, nominated int
	for trial := range 2000 {
		gang := trial%3 == 2
		snap, podObj := randomResourcesCluster(t, r, gang)
		pod, err := snap.NewPod(podObj)
		if err != nil {
			t.Fatal(err)
		}
		c := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1})
		if !c.ResourcesOnly() {
			t.Fatalf("trial %d: the cluster is not resources-only", trial)
		}
		opts := Options{Now: now}
		if gang {
			opts.Features = Features{GenericWorkload: true}
		}
		var e Evaluator
		d := e.newDryRun(c, opts)
		if !d.byResources {
			t.Fatalf("trial %d: the dry run does not use the sums", trial)
		}
		for _, node := range snap.Nodes {
			// Each checker gets a list of its own: the walk sorts the
			// list's order in place.
			list := func(w *worker) unitList {
				if d.groups != nil {
					l, err := d.groups.unitsOn(w, node, pod.Priority, d.nowNanos)
					if err != nil {
						t.Fatal(err)
					}
					return l
				}
				return d.potentialPods(w, node)
			}
			var ws, wo worker
			if trial%2 == 1 {
				// Dry runs from the second on list the pods of the
				// node's cached importance order.
				list(&worker{})
			}
			us := list(&ws)
			uo := us
			uo.members = slices.Clone(us.members)
			if us.len() == 0 {
				continue
			}
			if o := node.CachedImportanceOrder(); o != nil && us.allStarted && us.len() > maxInsertion {
				cachedLong++
				if o.LastTie > len(o.Ranked)-us.len() {
					tiedSuffix++
				}
			}
			if len(c.NominatedPods(node)) > 0 {
				nominated++
			}
			for u := range us.len() {
				if lo, hi := us.bounds(u); hi-lo > 1 {
					multiMember++
					break
				}
			}
			ws.sums.reset(c, &d.req, node, &us)
			wo.overlay.reset(c, node, &uo)

			// Step by step: the same answers to the same changes.
			removed := make([]bool, us.len())
			for step := range 3 * us.len() {
				u := r.IntN(us.len())
				if removed[u] {
					ws.sums.add(u)
					wo.overlay.add(u)
				} else {
					ws.sums.remove(u)
					wo.overlay.remove(u)
				}
				removed[u] = !removed[u]
				var whyS, whyO filter.Status
				fs, fo := ws.sums.fits(&whyS), wo.overlay.fits(&whyO)
				if fs != fo || !cmp.Equal(whyS, whyO) {
					t.Fatalf("trial %d node %s step %d: sums say %v %v, overlay %v %v", trial, node.Name, step, fs, whyS, fo, whyO)
				}
			}

			// The whole walk: the sums with and without their fast
			// paths, and the overlay.
			ws.sums.reset(c, &d.req, node, &us)
			wo.overlay.reset(c, node, &uo)
			got := d.selectVictimsOnNode(&ws, node, &us, &ws.sums)
			want := d.selectVictimsOnNode(&wo, node, &uo, &wo.overlay)
			walks++
			if diff := cmp.Diff(describeOutcome(want), describeOutcome(got)); diff != "" {
				t.Fatalf("trial %d node %s: sums and overlay walks differ (-overlay +sums):\n%s", trial, node.Name, diff)
			}
			var wp worker
			up := us
			up.members = slices.Clone(us.members)
			wp.sums.reset(c, &d.req, node, &up)
			plain := d.selectVictimsOnNode(&wp, node, &up, plainFit{&wp.sums})
			if diff := cmp.Diff(describeOutcome(plain), describeOutcome(got)); diff != "" {
				t.Fatalf("trial %d node %s: the sums' fast paths decide otherwise than their remove, add and fits (-plain +fast):\n%s", trial, node.Name, diff)
			}
			if got.cand != nil {
				withVictims++
				if v := got.cand.NumPDBViolations; v > 0 && v < len(got.cand.Victims) {
					bothParts++
				}
			} else if got.status.Code == filter.Unschedulable {
				misfits++
			}
		}
	}
	// The cases must cover both outcomes and every shape, or the test
	// proves little.
	t.Logf("%d walks: %d with victims, %d misfits; %d long cached lists (%d with ties), %d with budget-breaking and other victims, %d with units of several members, %d with nominated pods",
		walks, withVictims, misfits, cachedLong, tiedSuffix, bothParts, multiMember, nominated)
	if withVictims < 200 || misfits < 100 || cachedLong < 50 || tiedSuffix < 50 || bothParts < 20 || multiMember < 50 || nominated < 200 {
		t.Fatal("the random clusters are too one-sided")
	}
}

// outcomeSummary is what a walk decides, comparable across checkers.
type outcomeSummary struct {
	Status       filter.Status
	Victims      []string
	Units        []string
	NumViolating int
	Broken       map[string][]string
}

func describeOutcome(o nodeOutcome) outcomeSummary {
	s := outcomeSummary{Status: o.status}
	if o.cand == nil {
		return s
	}
	s.NumViolating = o.cand.NumPDBViolations
	for _, v := range o.cand.Victims {
		s.Victims = append(s.Victims, v.Pod.Key)
		for _, b := range o.cand.Broken[v] {
			if s.Broken == nil {
				s.Broken = map[string][]string{}
			}
			s.Broken[v.Pod.Key] = append(s.Broken[v.Pod.Key], b.Name)
		}
	}
	for _, u := range o.cand.Units {
		var names []string
		for _, m := range u.Members {
			names = append(names, m.Pod.Key)
		}
		s.Units = append(s.Units, fmt.Sprintf("%s %d %v", u.Kind, u.Priority, names))
	}
	return s
}

// TestWalkLeavesSnapshotUnchanged checks that dry runs never change the
// snapshot: every node requests and runs what it did before.
func TestWalkLeavesSnapshotUnchanged(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		snap, podObj := randomResourcesCluster(t, r, trial%2 == 0)
		before := map[string]snapshot.Resources{}
		pods := map[string]int{}
		for _, n := range snap.Nodes {
			before[n.Name] = n.Requested.Clone()
			pods[n.Name] = len(n.Pods)
		}
		pod, err := snap.NewPod(podObj)
		if err != nil {
			t.Fatal(err)
		}
		c := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1})
		fr := c.FilterAll()
		if len(fr.Feasible) > 0 {
			continue
		}
		opts := Options{Now: now, Exhaustive: true}
		if trial%2 == 0 {
			opts.Features = Features{GenericWorkload: true}
		}
		if _, err := Evaluate(c, fr, opts); err != nil {
			t.Fatal(err)
		}
		for _, n := range snap.Nodes {
			if !cmp.Equal(before[n.Name], n.Requested) || pods[n.Name] != len(n.Pods) {
				t.Fatalf("trial %d: node %s changed by the dry run", trial, n.Name)
			}
		}
	}
}

// TestEvaluateRequiresNow checks that the engine never falls back to the
// clock.
func TestEvaluateRequiresNow(t *testing.T) {
	snap, err := snapshot.New(snapshot.Objects{Nodes: []*v1.Node{rt.Node("n").CPU("1").Obj()}})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := snap.NewPod(rt.Pod("default", "p").Req("2", "").Obj())
	if err != nil {
		t.Fatal(err)
	}
	c := filter.NewCycle(snap, pod, filter.Options{})
	if _, err := Evaluate(c, c.FilterAll(), Options{}); !errors.Is(err, ErrNoClock) {
		t.Fatalf("Evaluate without Now: error %v, want ErrNoClock", err)
	}
}
