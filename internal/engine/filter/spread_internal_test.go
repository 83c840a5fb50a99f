package filter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestCriticalPathsNominatedPodsRestored: the nominated-pods pass works on
// a copy of the critical paths, as upstream runs it on a clone of the
// state. Undoing its updates one by one would not restore them: zones a and
// b tie at 1, and adding then removing a nominated pod in a swaps them.
func TestCriticalPathsNominatedPodsRestored(t *testing.T) {
	nodes := []*v1.Node{
		rt.Node("node-a").CPU("4").Zone("a").Obj(),
		rt.Node("node-b").CPU("4").Zone("b").Obj(),
		rt.Node("node-c").CPU("4").Zone("c").Obj(),
	}
	foo := func(name, node string) *v1.Pod { return rt.Pod("default", name).Label("foo", "").On(node).Obj() }
	pods := []*v1.Pod{
		foo("a1", "node-a"), foo("b1", "node-b"), foo("c1", "node-c"), foo("c2", "node-c"),
		rt.Pod("default", "nominee").Label("foo", "").Priority(100).Nominated("node-a").Obj(),
	}
	snap, err := snapshot.New(snapshot.Objects{Nodes: nodes, Pods: pods})
	if err != nil {
		t.Fatal(err)
	}
	p := rt.Pod("default", "p").Label("foo", "").Obj()
	p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
		MaxSkew: 5, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "foo", Operator: metav1.LabelSelectorOpExists}}},
	}}
	pod, err := snap.NewPod(p)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCycle(snap, pod, Options{})
	st := c.NewState()
	st.ModelCriticalPaths()
	// Touch zone c so that the overlay holds its own paths.
	c1 := snap.Pod("default/c1")
	c.RemovePod(st, nil, c1, snap.Node("node-c"))
	c.AddPod(st, nil, c1, snap.Node("node-c"))
	before := append([]criticalPaths(nil), st.spread.paths...)
	if want := (criticalPaths{{"a", 1}, {"b", 1}}); before[0] != want {
		t.Fatalf("paths %v, want %v", before[0], want)
	}
	nv := c.NewNodeView(snap.Node("node-a"))
	if s := c.FilterWithNominatedPods(st, nv, false); !s.IsSuccess() {
		t.Fatalf("filter: %+v", s)
	}
	if diff := cmp.Diff(before, st.spread.paths, cmp.AllowUnexported(criticalPath{})); diff != "" {
		t.Errorf("paths after the nominated pass (-want,+got):\n%s", diff)
	}
}
