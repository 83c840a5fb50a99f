package filter_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// spreadCluster has zones a, b and c with 3, 3 and 2 pods labelled foo;
// pods g-a1, g-a2 (node-a) and g-b1, g-b2 (node-b) are a gang.
func spreadCluster(t *testing.T) (*snapshot.Snapshot, *snapshot.Pod) {
	t.Helper()
	nodes := []*v1.Node{
		rt.Node("node-a").CPU("4").Zone("a").Obj(),
		rt.Node("node-b").CPU("4").Zone("b").Obj(),
		rt.Node("node-c").CPU("4").Zone("c").Obj(),
	}
	foo := func(name, node string) *v1.Pod { return rt.Pod("default", name).Label("foo", "").On(node).Obj() }
	pods := []*v1.Pod{
		foo("g-a1", "node-a"), foo("g-a2", "node-a"), foo("static-a", "node-a"),
		foo("g-b1", "node-b"), foo("g-b2", "node-b"), foo("static-b", "node-b"),
		foo("static-c1", "node-c"), foo("static-c2", "node-c"),
	}
	snap, err := snapshot.New(snapshot.Objects{Nodes: nodes, Pods: pods})
	if err != nil {
		t.Fatal(err)
	}
	p := rt.Pod("default", "p").Label("foo", "").Obj()
	p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "foo", Operator: metav1.LabelSelectorOpExists}}},
	}}
	pod, err := snap.NewPod(p)
	if err != nil {
		t.Fatal(err)
	}
	return snap, pod
}

// TestCriticalPaths: when pods change on several nodes, upstream's two
// critical paths can lose the minimum; State.ModelCriticalPaths replays them.
// Removing the gang (zones a and b drop to 1) and adding it back leaves
// upstream's paths holding a and b at 3 while c, at 2, is the true minimum:
// upstream lets the preemptor fit on node-a (skew 3+1-3), the true minimum
// does not (3+1-2).
func TestCriticalPaths(t *testing.T) {
	snap, pod := spreadCluster(t)
	gang := []string{"g-a1", "g-a2", "g-b1", "g-b2"}
	tests := map[string]struct {
		model          bool
		members        []string
		wantAfterReAdd bool // fits after removing and re-adding the members
	}{
		"true minimum, several domains":                   {model: false, members: gang, wantAfterReAdd: false},
		"upstream's critical paths, several domains":      {model: true, members: gang, wantAfterReAdd: true},
		"true minimum, one domain":                        {model: false, members: gang[:2], wantAfterReAdd: false},
		"upstream's critical paths, one domain: the same": {model: true, members: gang[:2], wantAfterReAdd: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := filter.NewCycle(snap, pod, filter.Options{})
			st := c.NewState()
			if tc.model {
				st.ModelCriticalPaths()
			}
			main := snap.Node("node-a")
			nv := c.NewNodeView(main)
			if s := c.FilterNode(st, nv); s.Code != filter.Unschedulable || s.Plugin != filter.PodTopologySpread {
				t.Fatalf("before: %+v, want Unschedulable by PodTopologySpread", s)
			}
			for _, name := range tc.members {
				p := snap.Pod("default/" + name)
				c.RemovePod(st, nv, p, snap.Node(p.NodeName()))
			}
			if s := c.FilterNode(st, nv); !s.IsSuccess() && len(tc.members) == 4 {
				t.Fatalf("without the gang: %+v, want Success", s)
			}
			for _, name := range tc.members {
				p := snap.Pod("default/" + name)
				c.AddPod(st, nv, p, snap.Node(p.NodeName()))
			}
			if got := c.FilterNode(st, nv).IsSuccess(); got != tc.wantAfterReAdd {
				t.Errorf("fits after re-adding: %v, want %v", got, tc.wantAfterReAdd)
			}
		})
	}
}
