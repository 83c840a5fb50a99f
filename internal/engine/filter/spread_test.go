package filter_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/google/go-cmp/cmp"

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

// TestSpreadDefaultConstraints: with defaultingType List, the profile's
// DoNotSchedule default constraints filter a pod without constraints of its
// own, with the selector of the Services and controller that select it; the
// system defaults (all ScheduleAnyway) and ScheduleAnyway defaults filter
// nothing, nor do defaults when nothing selects the pod or it has
// constraints of its own.
func TestSpreadDefaultConstraints(t *testing.T) {
	web := map[string]string{"app": "web"}
	rs := rt.ReplicaSet("default", "web-1", web)
	objs := func(sels snapshot.SelectorObjects) snapshot.Objects {
		return snapshot.Objects{
			Nodes: []*v1.Node{rt.Node("a").Zone("za").Obj(), rt.Node("b").Zone("zb").Obj(), rt.Node("n").Obj()},
			Pods: []*v1.Pod{
				rt.Pod("default", "w1").Label("app", "web").On("a").Obj(),
				rt.Pod("default", "w2").Label("app", "web").On("a").Obj(),
				rt.Pod("other", "w3").Label("app", "web").On("b").Obj(),
			},
			Selectors: sels,
		}
	}
	served := objs(snapshot.SelectorObjects{Services: []*v1.Service{rt.Service("default", "web", web)}})
	hard := []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule}}
	soft := []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway}}
	skewed := map[string]filter.Status{
		"a": {Code: filter.Unschedulable, Plugin: filter.PodTopologySpread, Reasons: []string{filter.ReasonSpreadConstraints}},
		"n": {Code: filter.UnschedulableAndUnresolvable, Plugin: filter.PodTopologySpread, Reasons: []string{filter.ReasonSpreadMissingLabel}},
	}
	tests := map[string]struct {
		objs         snapshot.Objects
		pod          *v1.Pod
		defaults     []v1.TopologySpreadConstraint
		wantFeasible []string
		wantStatuses map[string]filter.Status
	}{
		"a Service selects the pod": {
			objs: served, pod: rt.Pod("default", "p").Label("app", "web").Obj(), defaults: hard,
			wantFeasible: []string{"b"}, wantStatuses: skewed,
		},
		"its controlling ReplicaSet selects it": {
			objs: objs(snapshot.SelectorObjects{ReplicaSets: []*appsv1.ReplicaSet{rs}}),
			pod:  rt.Pod("default", "p").Label("app", "web").ControlledBy(rs).Obj(), defaults: hard,
			wantFeasible: []string{"b"}, wantStatuses: skewed,
		},
		"nothing selects the pod": {
			objs: objs(snapshot.SelectorObjects{}), pod: rt.Pod("default", "p").Label("app", "web").Obj(), defaults: hard,
			wantFeasible: []string{"a", "b", "n"},
		},
		"the system defaults": {
			objs: served, pod: rt.Pod("default", "p").Label("app", "web").Obj(),
			wantFeasible: []string{"a", "b", "n"},
		},
		"ScheduleAnyway defaults": {
			objs: served, pod: rt.Pod("default", "p").Label("app", "web").Obj(), defaults: soft,
			wantFeasible: []string{"a", "b", "n"},
		},
		"the pod's own constraints replace the defaults": {
			objs: served, defaults: hard,
			pod: rt.Pod("default", "p").Label("app", "web").SpreadWith(1, v1.LabelHostname, web, func(c *v1.TopologySpreadConstraint) {
				c.WhenUnsatisfiable = v1.ScheduleAnyway
			}).Obj(),
			wantFeasible: []string{"a", "b", "n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			snap, err := snapshot.New(tc.objs)
			if err != nil {
				t.Fatal(err)
			}
			pod, err := snap.NewPod(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			res := filter.NewCycle(snap, pod, filter.Options{SpreadDefaultConstraints: tc.defaults}).FilterAll()
			var feasible []string
			for _, n := range res.Feasible {
				feasible = append(feasible, n.Name)
			}
			statuses := map[string]filter.Status{}
			for _, n := range snap.Nodes {
				if s := res.Statuses[n.Index]; !s.IsSuccess() {
					statuses[n.Name] = s
				}
			}
			if tc.wantStatuses == nil {
				tc.wantStatuses = map[string]filter.Status{}
			}
			if diff := cmp.Diff(tc.wantFeasible, feasible); diff != "" {
				t.Errorf("feasible (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStatuses, statuses); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
		})
	}
}
