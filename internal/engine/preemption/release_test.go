package preemption

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestPDBEmptySelector: a budget with selector {} guards unlabeled pods
// under 1.38 (PDBEmptySelectorMatchesAll) and nothing under 1.37. node-a's
// victim is unlabeled and older, so without the budget node-a wins on the
// later start; with it, node-a's eviction breaks the budget and node-b,
// whose victim is in another namespace, is chosen.
func TestPDBEmptySelector(t *testing.T) {
	everything := rt.PDB("guarded", "all", nil, 0)
	everything.Spec.Selector = &metav1.LabelSelector{}
	objs := snapshot.Objects{
		Nodes: []*v1.Node{rt.Node("node-a").CPU("2").Obj(), rt.Node("node-b").CPU("2").Obj()},
		Pods: []*v1.Pod{
			rt.Pod("guarded", "unlabeled").Priority(1).Req("2", "").On("node-a").StartedAt(10).Obj(),
			rt.Pod("free", "other").Priority(1).Req("2", "").On("node-b").StartedAt(5).Obj(),
		},
		PDBs: []*policyv1.PodDisruptionBudget{everything},
	}
	tests := map[string]struct {
		release  profile.Release
		wantNode string
	}{
		"1.37: {} guards nothing":                    {release: profile.Release137, wantNode: "node-a"},
		"1.38: {} guards every pod of the namespace": {release: profile.Release138, wantNode: "node-b"},
		"1.36: as 1.37":                              {release: profile.Release136, wantNode: "node-a"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			snap, err := snapshot.New(objs)
			if err != nil {
				t.Fatal(err)
			}
			pod, err := snap.NewPod(rt.Pod("default", "preemptor").Priority(10).Req("2", "").Obj())
			if err != nil {
				t.Fatal(err)
			}
			res := evaluateUnschedulable(t, snap, pod, Options{Now: rt.BaseTime, Exhaustive: true,
				Features: profile.Features{Semantics: tc.release.Semantics()}})
			if res == nil || res.Chosen == nil {
				t.Fatalf("no candidate chosen: %+v", res)
			}
			if got := res.Chosen.Node.Name; got != tc.wantNode {
				t.Errorf("chosen node = %s, want %s", got, tc.wantNode)
			}
			violations := map[string]int{}
			for _, c := range res.Candidates {
				violations[c.Node.Name] = c.NumPDBViolations
			}
			want := map[string]int{"node-a": 0, "node-b": 0}
			if tc.release.Semantics().PDBEmptySelectorMatchesAll {
				want["node-a"] = 1
			}
			if diff := cmp.Diff(want, violations); diff != "" {
				t.Errorf("violations per candidate (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestVictimOrderByRelease: two victims without a start time and one with.
// Under 1.37 the unstarted ones count as starting at the evaluation time,
// in node order; under 1.38 (UnstartedVictimsNewest, VictimUIDTieBreak)
// they count as the newest and tie, and their UIDs order them.
func TestVictimOrderByRelease(t *testing.T) {
	unstartedB := rt.Pod("default", "unstarted-b").Priority(1).Req("1", "").On("node").Obj()
	unstartedB.UID = "uid-b"
	unstartedA := rt.Pod("default", "unstarted-a").Priority(1).Req("1", "").On("node").Obj()
	unstartedA.UID = "uid-a"
	started := rt.Pod("default", "started").Priority(1).Req("1", "").On("node").StartedAt(5).Obj()
	started.UID = "uid-z"
	objs := snapshot.Objects{Nodes: []*v1.Node{rt.Node("node").CPU("3").Obj()}, Pods: []*v1.Pod{unstartedB, unstartedA, started}}
	tests := map[string]struct {
		release profile.Release
		want    []string
	}{
		"1.37: the evaluation time, in node order": {release: profile.Release137, want: []string{"started", "unstarted-b", "unstarted-a"}},
		"1.38: the newest, by UID":                 {release: profile.Release138, want: []string{"started", "unstarted-a", "unstarted-b"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			snap, err := snapshot.New(objs)
			if err != nil {
				t.Fatal(err)
			}
			pod, err := snap.NewPod(rt.Pod("default", "preemptor").Priority(10).Req("3", "").Obj())
			if err != nil {
				t.Fatal(err)
			}
			res := evaluateUnschedulable(t, snap, pod, Options{Now: rt.BaseTime.Add(time.Hour), Exhaustive: true,
				Features: profile.Features{Semantics: tc.release.Semantics()}})
			if res == nil || res.Chosen == nil {
				t.Fatalf("no candidate: %+v", res)
			}
			var got []string
			for _, v := range res.Chosen.Victims {
				got = append(got, v.Pod.Name())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("victims (-want,+got):\n%s", diff)
			}
		})
	}
}

// alwaysFits is a fit checker on which the preemptor fits whatever is
// removed.
type alwaysFits struct{}

func (alwaysFits) remove(int)               {}
func (alwaysFits) add(int)                  {}
func (alwaysFits) fits(*filter.Status) bool { return true }

// TestNoVictimsByRelease: a node where the preemptor fits with every
// potential victim back is an error under 1.37 ("expected at least one
// victim pod") and UnschedulableAndUnresolvable under 1.38
// (NoVictimsRejectsNode), which lets the other nodes decide.
func TestNoVictimsByRelease(t *testing.T) {
	snap, err := snapshot.New(snapshot.Objects{Nodes: []*v1.Node{rt.Node("node").CPU("2").Obj()},
		Pods: []*v1.Pod{rt.Pod("default", "low").Priority(1).Req("1", "").On("node").StartedAt(1).Obj()}})
	if err != nil {
		t.Fatal(err)
	}
	node := snap.Node("node")
	tests := map[string]struct {
		release  profile.Release
		wantCode filter.Code
	}{
		"1.37: an error":                  {release: profile.Release137, wantCode: filter.Error},
		"1.38: unschedulable, unresolved": {release: profile.Release138, wantCode: filter.UnschedulableAndUnresolvable},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := &dryRun{sem: tc.release.Semantics()}
			p := node.Pods[0]
			units := unitList{members: []snapshot.RankedPod{{Pod: p, Priority: p.Priority}}}
			out := d.selectVictimsOnNode(&worker{}, node, &units, alwaysFits{})
			if out.cand != nil || out.status.Code != tc.wantCode {
				t.Errorf("outcome = %+v, want no candidate and code %v", out, tc.wantCode)
			}
		})
	}
}

// TestUnstartedVictimsTieAnyWay: three victims without a start time, of
// equal priority. v1.37 reads the clock once per victim, in node order;
// v1.36 reads it at each comparison, so each ranks before the other, and
// upstream's sort (an insertion sort for so few) reverses them.
func TestUnstartedVictimsTieAnyWay(t *testing.T) {
	var pods []*v1.Pod
	for _, name := range []string{"u1", "u2", "u3"} {
		pods = append(pods, rt.Pod("default", name).Priority(1).Req("1", "").On("node").Obj())
	}
	objs := snapshot.Objects{Nodes: []*v1.Node{rt.Node("node").CPU("3").Obj()}, Pods: pods}
	tests := map[string]struct {
		release profile.Release
		want    []string
	}{
		"1.36: each before the other": {release: profile.Release136, want: []string{"u3", "u2", "u1"}},
		"1.37: node order":            {release: profile.Release137, want: []string{"u1", "u2", "u3"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			snap, err := snapshot.New(objs)
			if err != nil {
				t.Fatal(err)
			}
			pod, err := snap.NewPod(rt.Pod("default", "preemptor").Priority(10).Req("3", "").Obj())
			if err != nil {
				t.Fatal(err)
			}
			res := evaluateUnschedulable(t, snap, pod, Options{Now: rt.BaseTime, Exhaustive: true,
				Features: profile.Features{Semantics: tc.release.Semantics()}})
			if res == nil || res.Chosen == nil {
				t.Fatalf("no candidate: %+v", res)
			}
			var got []string
			for _, v := range res.Chosen.Victims {
				got = append(got, v.Pod.Name())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("victims (-want,+got):\n%s", diff)
			}
		})
	}
}
