package preemption

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// Priorities of upstream's preemption tests.
const (
	lowPriority      int32 = 0
	midPriority      int32 = 100
	highPriority     int32 = 1000
	veryHighPriority int32 = 10000
)

var (
	gatesOff  = Features{}
	gatesPG   = Features{GenericWorkload: true}
	gatesBoth = Features{GenericWorkload: true, CompositePodGroup: true}
)

// Group builders, short for the tables below.
var pg, cpg = rt.PodGroup, rt.CompositePodGroup

// member puts pod in the PodGroup name.
func member(p *v1.Pod, name string) *v1.Pod {
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
	return p
}

type cluster struct {
	nodes []*v1.Node
	pods  []*v1.Pod
	pgs   []*schedulingv1beta1.PodGroup
	cpgs  []*schedulingv1alpha3.CompositePodGroup
	pdbs  []*policyv1.PodDisruptionBudget
}

func (c cluster) build(t *testing.T) *snapshot.Snapshot {
	t.Helper()
	snap, err := snapshot.New(snapshot.Objects{Nodes: c.nodes, Pods: c.pods, PodGroups: c.pgs, CompositePodGroups: c.cpgs, PDBs: c.pdbs})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// unitStrings renders each unit of l as "kind prio [members]" with members
// sorted (upstream's member order is map order).
func unitStrings(l unitList) []string {
	var out []string
	for u := range l.len() {
		lo, hi := l.bounds(u)
		var names []string
		for m := lo; m < hi; m++ {
			names = append(names, l.members[m].Pod.Name()+"@"+l.memberNodes[m].Name)
		}
		slices.Sort(names)
		out = append(out, fmt.Sprintf("%s %d [%s]", l.spans[u].kind, l.spans[u].priority, strings.Join(names, " ")))
	}
	return out
}

// TestUnitsOnNode ports upstream's TestGetVictimsOnNode (preemption_test.go):
// which preemption units a node has, with which priority and type.
func TestUnitsOnNode(t *testing.T) {
	nodes := []*v1.Node{rt.Node("node1").Obj(), rt.Node("node2").Obj()}
	tests := map[string]struct {
		features Features
		c        cluster
		want     []string
	}{
		"GenericWorkload disabled: every pod with its own priority": {
			features: gatesOff,
			c: cluster{pods: []*v1.Pod{
				member(rt.Pod("default", "p1").Priority(midPriority).On("node1").Obj(), "pg1"),
				rt.Pod("default", "p2").Priority(lowPriority).On("node1").Obj(),
			}, pgs: []*schedulingv1beta1.PodGroup{pg("pg1", lowPriority, "All", "")}},
			want: []string{"pod 100 [p1@node1]", "pod 0 [p2@node1]"},
		},
		"GenericWorkload enabled, pods with no PodGroup": {
			features: gatesPG,
			c: cluster{pods: []*v1.Pod{
				rt.Pod("default", "p1").Priority(midPriority).On("node1").Obj(),
				rt.Pod("default", "p2").Priority(lowPriority).On("node1").Obj(),
			}},
			want: []string{"pod 100 [p1@node1]", "pod 0 [p2@node1]"},
		},
		"GenericWorkload enabled, pod belonging to PodGroup with disruptionMode All": {
			features: gatesPG,
			c: cluster{pods: []*v1.Pod{
				member(rt.Pod("default", "p1").Priority(midPriority).On("node1").Obj(), "pg1"),
				member(rt.Pod("default", "p2").Priority(midPriority).On("node2").Obj(), "pg1"),
				rt.Pod("default", "p3").Priority(lowPriority).On("node1").Obj(),
			}, pgs: []*schedulingv1beta1.PodGroup{pg("pg1", midPriority, "All", "")}},
			want: []string{"podgroup 100 [p1@node1 p2@node2]", "pod 0 [p3@node1]"},
		},
		"GenericWorkload enabled, pods belonging to PodGroup with disruptionMode Single": {
			features: gatesPG,
			c: cluster{pods: []*v1.Pod{
				member(rt.Pod("default", "p1").Priority(lowPriority).On("node1").Obj(), "pg1"),
				member(rt.Pod("default", "p2").Priority(lowPriority).On("node2").Obj(), "pg1"),
				member(rt.Pod("default", "p3").Priority(lowPriority).On("node1").Obj(), "pg1"),
				rt.Pod("default", "p4").Priority(lowPriority).On("node1").Obj(),
			}, pgs: []*schedulingv1beta1.PodGroup{pg("pg1", midPriority, "Single", "")}},
			want: []string{"podgroup 100 [p1@node1]", "podgroup 100 [p3@node1]", "pod 0 [p4@node1]"},
		},
		"GenericWorkload enabled, mixed individual pods, Single and All groups": {
			features: gatesPG,
			c: cluster{pods: []*v1.Pod{
				member(rt.Pod("default", "p-all-1").Priority(highPriority).On("node1").Obj(), "pg-all"),
				member(rt.Pod("default", "p-all-2").Priority(highPriority).On("node2").Obj(), "pg-all"),
				member(rt.Pod("default", "p-single-1").Priority(lowPriority).On("node1").Obj(), "pg-single"),
				member(rt.Pod("default", "p-single-2").Priority(lowPriority).On("node2").Obj(), "pg-single"),
				rt.Pod("default", "p-ind").Priority(lowPriority).On("node1").Obj(),
			}, pgs: []*schedulingv1beta1.PodGroup{pg("pg-all", highPriority, "All", ""), pg("pg-single", midPriority, "Single", "")}},
			want: []string{"podgroup 1000 [p-all-1@node1 p-all-2@node2]", "podgroup 100 [p-single-1@node1]", "pod 0 [p-ind@node1]"},
		},
		"CPG enabled, DisruptionModeAll on root CPG": {
			features: gatesBoth,
			c: cluster{pods: []*v1.Pod{
				member(rt.Pod("default", "p1").Priority(lowPriority).On("node1").Obj(), "pg1"),
				member(rt.Pod("default", "p2").Priority(lowPriority).On("node2").Obj(), "pg2"),
			}, pgs: []*schedulingv1beta1.PodGroup{pg("pg1", lowPriority, "", "cpg1"), pg("pg2", lowPriority, "", "cpg1")},
				cpgs: []*schedulingv1alpha3.CompositePodGroup{cpg("cpg1", midPriority, "All", "")}},
			want: []string{"compositepodgroup 100 [p1@node1 p2@node2]"},
		},
		"CPG enabled, DisruptionModeSingle on root CPG": {
			features: gatesBoth,
			c: cluster{pods: []*v1.Pod{
				member(rt.Pod("default", "p1").Priority(lowPriority).On("node1").Obj(), "pg1"),
				member(rt.Pod("default", "p2").Priority(lowPriority).On("node2").Obj(), "pg2"),
			}, pgs: []*schedulingv1beta1.PodGroup{pg("pg1", lowPriority, "", "cpg1"), pg("pg2", lowPriority, "", "cpg1")},
				cpgs: []*schedulingv1alpha3.CompositePodGroup{cpg("cpg1", midPriority, "Single", "")}},
			want: []string{"podgroup 100 [p1@node1]"},
		},
		"CPG disabled, fallback to PodGroup": {
			features: gatesPG,
			c: cluster{pods: []*v1.Pod{
				member(rt.Pod("default", "p1").Priority(lowPriority).On("node1").Obj(), "pg1"),
				member(rt.Pod("default", "p2").Priority(lowPriority).On("node2").Obj(), "pg2"),
			}, pgs: []*schedulingv1beta1.PodGroup{pg("pg1", lowPriority, "Single", "cpg1"), pg("pg2", lowPriority, "Single", "cpg1")},
				cpgs: []*schedulingv1alpha3.CompositePodGroup{cpg("cpg1", midPriority, "All", "")}},
			want: []string{"podgroup 0 [p1@node1]"},
		},
		"CPG enabled, nested: the highest All ancestor takes the pods of every leaf below it": {
			features: gatesBoth,
			c: cluster{pods: []*v1.Pod{
				member(rt.Pod("default", "a").Priority(lowPriority).On("node1").Obj(), "leaf-a"),
				member(rt.Pod("default", "b").Priority(lowPriority).On("node2").Obj(), "leaf-b"),
				member(rt.Pod("default", "c").Priority(lowPriority).On("node2").Obj(), "leaf-c"),
			}, pgs: []*schedulingv1beta1.PodGroup{pg("leaf-a", lowPriority, "All", "mid"), pg("leaf-b", lowPriority, "Single", "mid"), pg("leaf-c", lowPriority, "All", "root")},
				cpgs: []*schedulingv1alpha3.CompositePodGroup{cpg("mid", midPriority, "All", "root"), cpg("root", highPriority, "Single", "")}},
			// leaf-c is not under mid: it stays its own group. The unit's
			// priority is the root's.
			want: []string{"compositepodgroup 1000 [a@node1 b@node2]"},
		},
		"pod naming a PodGroup that does not exist: a pod unit of group type with the pod's priority": {
			features: gatesBoth,
			c: cluster{pods: []*v1.Pod{
				member(rt.Pod("default", "orphan").Priority(midPriority).On("node1").Obj(), "ghost"),
			}},
			want: []string{"podgroup 100 [orphan@node1]"},
		},
		"the members counted are the scheduled ones: not pending, not finished": {
			features: gatesPG,
			c: cluster{pods: []*v1.Pod{
				member(rt.Pod("default", "running").Priority(lowPriority).On("node1").Obj(), "pg1"),
				member(rt.Pod("default", "terminating").Priority(lowPriority).On("node2").Terminating().Obj(), "pg1"),
				member(rt.Pod("default", "pending").Priority(lowPriority).Obj(), "pg1"),
				member(rt.Pod("default", "done").Priority(lowPriority).On("node2").Phase(v1.PodSucceeded).Obj(), "pg1"),
			}, pgs: []*schedulingv1beta1.PodGroup{pg("pg1", lowPriority, "All", "")}},
			want: []string{"podgroup 0 [running@node1 terminating@node2]"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.c.nodes = nodes
			snap := tc.c.build(t)
			var got []string
			if !tc.features.GenericWorkload {
				// Without the gate every pod is a unit: the pod dry run.
				for _, p := range snap.Node("node1").Pods {
					got = append(got, fmt.Sprintf("pod %d [%s@node1]", p.Priority, p.Name()))
				}
			} else {
				idx := newGroupIndex(snap, tc.features)
				units, err := idx.unitsOn(&worker{}, snap.Node("node1"), 1<<30, 0)
				if err != nil {
					t.Fatal(err)
				}
				got = unitStrings(units)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("units (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestHierarchy ports upstream's TestGetHighestAllAncestor (types_test.go)
// and the priority fallbacks of GetPodPriority.
func TestHierarchy(t *testing.T) {
	tests := map[string]struct {
		features  Features
		pgs       []*schedulingv1beta1.PodGroup
		cpgs      []*schedulingv1alpha3.CompositePodGroup
		wantAll   string // Kind/name, "" for none
		wantPrio  int32
		podPrio   int32
		podNoGrup bool
	}{
		"pod without group":                 {features: gatesBoth, podNoGrup: true, podPrio: 7, wantPrio: 7},
		"pod group missing from the lister": {features: gatesBoth, podPrio: 7, wantPrio: 7},
		"pod group disruption mode single": {features: gatesBoth, podPrio: 7, wantPrio: 3,
			pgs: []*schedulingv1beta1.PodGroup{pg("pg1", 3, "Single", "")}},
		"pod group disruption mode All": {features: gatesBoth, podPrio: 7, wantPrio: 3, wantAll: "PodGroup/pg1",
			pgs: []*schedulingv1beta1.PodGroup{pg("pg1", 3, "All", "")}},
		"parent CPG disruption mode All, child PG disruption mode single": {features: gatesBoth, podPrio: 7, wantPrio: 5, wantAll: "CompositePodGroup/cpg1",
			pgs:  []*schedulingv1beta1.PodGroup{pg("pg1", 3, "Single", "cpg1")},
			cpgs: []*schedulingv1alpha3.CompositePodGroup{cpg("cpg1", 5, "All", "")}},
		"grandparent CPG All, parent CPG single, child PG single": {features: gatesBoth, podPrio: 7, wantPrio: 9, wantAll: "CompositePodGroup/cpg2",
			pgs:  []*schedulingv1beta1.PodGroup{pg("pg1", 3, "Single", "cpg1")},
			cpgs: []*schedulingv1alpha3.CompositePodGroup{cpg("cpg1", 5, "Single", "cpg2"), cpg("cpg2", 9, "All", "")}},
		"highest All parent wins (both have disruption mode All)": {features: gatesBoth, podPrio: 7, wantPrio: 5, wantAll: "CompositePodGroup/cpg1",
			pgs:  []*schedulingv1beta1.PodGroup{pg("pg1", 3, "All", "cpg1")},
			cpgs: []*schedulingv1alpha3.CompositePodGroup{cpg("cpg1", 5, "All", "")}},
		"parent CPG missing, child PG All returned, PodGroup priority": {features: gatesBoth, podPrio: 7, wantPrio: 3, wantAll: "PodGroup/pg1",
			pgs: []*schedulingv1beta1.PodGroup{pg("pg1", 3, "All", "cpg1")}},
		"intermediate CPG missing: the walk stops there": {features: gatesBoth, podPrio: 7, wantPrio: 3,
			pgs:  []*schedulingv1beta1.PodGroup{pg("pg1", 3, "Single", "mid")},
			cpgs: []*schedulingv1alpha3.CompositePodGroup{cpg("root", 9, "All", "")}},
		"CompositePodGroup gate off: only the PodGroup counts": {features: gatesPG, podPrio: 7, wantPrio: 3,
			pgs:  []*schedulingv1beta1.PodGroup{pg("pg1", 3, "Single", "cpg1")},
			cpgs: []*schedulingv1alpha3.CompositePodGroup{cpg("cpg1", 5, "All", "")}},
		"a cycle of parents is walked once": {features: gatesBoth, podPrio: 7, wantPrio: 6, wantAll: "CompositePodGroup/b",
			pgs:  []*schedulingv1beta1.PodGroup{pg("pg1", 3, "Single", "a")},
			cpgs: []*schedulingv1alpha3.CompositePodGroup{cpg("a", 5, "Single", "b"), cpg("b", 6, "All", "a")}},
		"at most four levels are walked": {features: gatesBoth, podPrio: 7, wantPrio: 4,
			pgs: []*schedulingv1beta1.PodGroup{pg("pg1", 1, "Single", "c2")},
			cpgs: []*schedulingv1alpha3.CompositePodGroup{cpg("c2", 2, "Single", "c3"), cpg("c3", 3, "Single", "c4"),
				cpg("c4", 4, "Single", "c5"), cpg("c5", 5, "All", "")}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := rt.Pod("default", "p1").Priority(tc.podPrio).On("n").Obj()
			if !tc.podNoGrup {
				member(p, "pg1")
			}
			snap := cluster{nodes: []*v1.Node{rt.Node("n").Obj()}, pods: []*v1.Pod{p}, pgs: tc.pgs, cpgs: tc.cpgs}.build(t)
			h := hierarchy{snap: snap, composite: tc.features.Composite()}
			sp := snap.Pod("default/p1")
			gotAll := ""
			if g := h.highestAll(sp); g != nil {
				gotAll = g.Kind.String() + "/" + g.Name
			}
			if gotAll != tc.wantAll || h.priority(sp) != tc.wantPrio {
				t.Errorf("highest All %q priority %d, want %q %d", gotAll, h.priority(sp), tc.wantAll, tc.wantPrio)
			}
		})
	}
}

// TestMoreImportantUnit ports upstream's TestMoreImportantVictim
// (util_test.go): priority, then CompositePodGroup > PodGroup > pod, then
// size, then the earlier start; no further tie-break.
func TestMoreImportantUnit(t *testing.T) {
	before, now := time.Unix(500, 0).UnixNano(), time.Unix(1000, 0).UnixNano()
	unit := func(prio int32, kind UnitKind, size int, start int64) span {
		return span{priority: prio, kind: kind, hi: int32(size), start: start}
	}
	tests := map[string]struct {
		a, b span
		want bool
	}{
		"vi1 has higher priority":                       {unit(20, UnitPod, 1, 0), unit(10, UnitPod, 1, 0), true},
		"vi2 has higher priority":                       {unit(10, UnitPod, 1, 0), unit(20, UnitPod, 1, 0), false},
		"vi1 is PG, vi2 is Pod, same priority":          {unit(10, UnitPodGroup, 1, 0), unit(10, UnitPod, 1, 0), true},
		"vi1 is Pod, vi2 is PG, same priority":          {unit(10, UnitPod, 1, 0), unit(10, UnitPodGroup, 1, 0), false},
		"both Pods, vi1 older":                          {unit(10, UnitPod, 1, before), unit(10, UnitPod, 1, now), true},
		"both Pods, vi2 older":                          {unit(10, UnitPod, 1, now), unit(10, UnitPod, 1, before), false},
		"both PGs, vi1 larger":                          {unit(10, UnitPodGroup, 2, 0), unit(10, UnitPodGroup, 1, 0), true},
		"both PGs, vi2 larger":                          {unit(10, UnitPodGroup, 1, 0), unit(10, UnitPodGroup, 2, 0), false},
		"both PGs, same size, vi1 older":                {unit(10, UnitPodGroup, 2, before), unit(10, UnitPodGroup, 2, now), true},
		"both PGs, same size, vi2 older":                {unit(10, UnitPodGroup, 2, now), unit(10, UnitPodGroup, 2, before), false},
		"CPG vs Pod, same priority (CPG wins)":          {unit(10, UnitCompositePodGroup, 1, 0), unit(10, UnitPod, 1, 0), true},
		"Pod vs CPG, same priority (CPG wins)":          {unit(10, UnitPod, 1, 0), unit(10, UnitCompositePodGroup, 1, 0), false},
		"CPG vs PG, same priority (CPG wins)":           {unit(10, UnitCompositePodGroup, 1, 0), unit(10, UnitPodGroup, 1, 0), true},
		"PG vs CPG, same priority (CPG wins)":           {unit(10, UnitPodGroup, 1, 0), unit(10, UnitCompositePodGroup, 1, 0), false},
		"CPG vs PG, PG higher priority":                 {unit(10, UnitCompositePodGroup, 1, 0), unit(20, UnitPodGroup, 1, 0), false},
		"PG vs CPG, PG higher priority":                 {unit(20, UnitPodGroup, 1, 0), unit(10, UnitCompositePodGroup, 1, 0), true},
		"CPG smaller than PG: rank wins over size":      {unit(10, UnitCompositePodGroup, 1, 0), unit(10, UnitPodGroup, 2, 0), true},
		"CPG newer than PG: rank wins over start time":  {unit(10, UnitCompositePodGroup, 1, now), unit(10, UnitPodGroup, 1, before), true},
		"both CPGs, vi1 larger":                         {unit(10, UnitCompositePodGroup, 3, now), unit(10, UnitCompositePodGroup, 2, before), true},
		"equal in every key: neither is more important": {unit(10, UnitPodGroup, 2, now), unit(10, UnitPodGroup, 2, now), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			l := unitList{spans: []span{tc.a, tc.b}}
			if got := l.moreImportant(0, 1); got != tc.want {
				t.Errorf("moreImportant = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSplitUnitsByPDB ports the pod-group cases of upstream's
// TestFilterVictimsWithPDBViolation (util_test.go): a unit is violating if
// any member is, and its violate count is how many members are.
func TestSplitUnitsByPDB(t *testing.T) {
	g1 := member(rt.Pod("default", "g1").Label("app", "foo").On("n").Obj(), "pg")
	g2 := member(rt.Pod("default", "g2").Label("app", "foo").On("n").Obj(), "pg")
	other := rt.Pod("default", "other").Label("app", "bar").On("n").Obj()
	tests := map[string]struct {
		allowed       int32
		wantViolating []int
		wantNon       int
	}{
		"podgroup victim with multiple pods, all violating":  {allowed: 0, wantViolating: []int{2}, wantNon: 1},
		"podgroup victim with multiple pods, one violating":  {allowed: 1, wantViolating: []int{1}, wantNon: 1},
		"podgroup victim with multiple pods, none violating": {allowed: 2, wantViolating: nil, wantNon: 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			snap := cluster{nodes: []*v1.Node{rt.Node("n").Obj()}, pods: []*v1.Pod{g1, g2, other},
				pgs:  []*schedulingv1beta1.PodGroup{pg("pg", 0, "All", "")},
				pdbs: []*policyv1.PodDisruptionBudget{rt.PDB("default", "pdb", map[string]string{"app": "foo"}, tc.allowed)}}.build(t)
			idx := newGroupIndex(snap, gatesPG)
			w := &worker{}
			units, err := idx.unitsOn(w, snap.Node("n"), 1<<30, 0)
			if err != nil {
				t.Fatal(err)
			}
			d := &dryRun{budgets: prepareBudgets(snap.PDBs, false)}
			violating, non, violations, broken := d.splitByPDB(w, &units, w.indexes(new([]int32), units.len()))
			var counts []int
			for i, u := range violating {
				counts = append(counts, int(violations[i]))
				if lo, hi := units.bounds(int(u)); hi-lo != 2 {
					t.Errorf("violating unit %s is not the group", unitStrings(units)[u])
				}
			}
			if diff := cmp.Diff(tc.wantViolating, counts); diff != "" {
				t.Errorf("violate counts (-want,+got):\n%s", diff)
			}
			if len(non) != tc.wantNon {
				t.Errorf("%d non-violating units, want %d", len(non), tc.wantNon)
			}
			// One broken budget is recorded per violating member.
			nb := 0
			for _, b := range broken {
				nb += len(b)
			}
			want := 0
			for _, c := range tc.wantViolating {
				want += c
			}
			if nb != want {
				t.Errorf("%d broken budgets recorded, want %d", nb, want)
			}
		})
	}
}
