package whatif_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"

	"github.com/google/go-cmp/cmp"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
	"github.com/reprieve/reprieve/internal/whatif"
)

// TestPlacement checks where a pod that fits would be bound: the default
// profile's scores pick the emptier node, with the fuller one runner-up;
// a single feasible node, or the pod's nominated node when it fits there,
// is taken unscored.
func TestPlacement(t *testing.T) {
	tests := map[string]struct {
		sc   scenario
		want whatif.Placement
	}{
		"emptier node wins": {
			sc: scenario{
				nodes: []*v1.Node{node("busy", "4").Obj(), node("idle", "4").Obj()},
				pods:  []*v1.Pod{pod("x", 0, "3").On("busy").Obj()},
				pod:   pod("p", 0, "500m").Obj(),
			},
			want: whatif.Placement{Node: "idle", RunnerUp: "busy", ScoredNodes: 2},
		},
		"nominated node that fits: taken unscored, as upstream tries it first": {
			sc: scenario{
				nodes: []*v1.Node{node("busy", "4").Obj(), node("idle", "4").Obj()},
				pods:  []*v1.Pod{pod("x", 0, "3").On("busy").Obj()},
				pod:   pod("p", 0, "500m").Nominated("busy").Obj(),
			},
			want: whatif.Placement{Node: "busy"},
		},
		"one feasible node": {
			sc: scenario{
				nodes: []*v1.Node{node("full", "1").Obj(), node("free", "4").Obj()},
				pods:  []*v1.Pod{pod("x", 0, "1").On("full").Obj()},
				pod:   pod("p", 0, "500m").Obj(),
			},
			want: whatif.Placement{Node: "free"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := evaluate(t, tc.sc)
			p := d.Placement
			if !d.Fits || p == nil {
				t.Fatalf("no placement: %s", d.Summary)
			}
			if p.Node != tc.want.Node || p.RunnerUp != tc.want.RunnerUp || p.ScoredNodes != tc.want.ScoredNodes {
				t.Errorf("placement %+v, want %+v", *p, tc.want)
			}
			if p.RunnerUp != "" && p.Score < p.RunnerUpScore {
				t.Errorf("chosen node scores %d below the runner-up's %d", p.Score, p.RunnerUpScore)
			}
		})
	}
}

// TestDefaultSpreading checks that PodTopologySpread's default constraints
// take their selector from the snapshot's Services and controllers: the
// system defaults move a Service's pod away from its peers, which resources
// alone would join; a profile's DoNotSchedule defaults (defaultingType List)
// filter the node of its peers out.
func TestDefaultSpreading(t *testing.T) {
	rs := rt.ReplicaSet("default", "web-1", map[string]string{"app": "web"})
	nodes := []*v1.Node{node("a", "4").Zone("za").Obj(), node("b", "4").Zone("zb").Obj()}
	pods := []*v1.Pod{
		pod("w1", 0, "100m").Label("app", "web").On("a").Obj(),
		pod("w2", 0, "100m").Label("app", "web").On("a").Obj(),
		pod("x", 0, "1").On("b").Obj(),
	}
	service := snapshot.SelectorObjects{Services: []*v1.Service{rt.Service("default", "web", map[string]string{"app": "web"})}}
	hostname := &profile.Profile{SchedulerName: v1.DefaultSchedulerName, Preemption: true, HasPostFilter: true,
		Filter: filter.Options{SpreadDefaultConstraints: []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.DoNotSchedule}}}}
	tests := map[string]struct {
		sels         snapshot.SelectorObjects
		pod          *v1.Pod
		profile      *profile.Profile
		wantFeasible []string
		wantNode     string
	}{
		"resources alone: the emptier node": {
			pod: pod("p", 0, "500m").Label("app", "web").Obj(), wantFeasible: []string{"a", "b"}, wantNode: "a",
		},
		"a Service spreads its pods": {
			sels: service, pod: pod("p", 0, "500m").Label("app", "web").Obj(), wantFeasible: []string{"a", "b"}, wantNode: "b",
		},
		"the ReplicaSet controlling the pod spreads it": {
			sels: snapshot.SelectorObjects{ReplicaSets: []*appsv1.ReplicaSet{rs}},
			pod:  pod("p", 0, "500m").Label("app", "web").ControlledBy(rs).Obj(), wantFeasible: []string{"a", "b"}, wantNode: "b",
		},
		"DoNotSchedule defaults filter": {
			sels: service, profile: hostname, pod: pod("p", 0, "500m").Label("app", "web").Obj(), wantFeasible: []string{"b"}, wantNode: "b",
		},
		"DoNotSchedule defaults without a selector": {
			profile: hostname, pod: pod("p", 0, "500m").Label("app", "web").Obj(), wantFeasible: []string{"a", "b"}, wantNode: "a",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := evaluate(t, scenario{nodes: nodes, pods: pods, sels: tc.sels, pod: tc.pod, opts: whatif.Options{Profile: tc.profile}})
			if !d.Fits || d.Placement == nil {
				t.Fatalf("no placement: %s", d.Summary)
			}
			if diff := cmp.Diff(tc.wantFeasible, d.FeasibleNodes); diff != "" {
				t.Errorf("feasible nodes (-want,+got):\n%s", diff)
			}
			if d.Placement.Node != tc.wantNode {
				t.Errorf("placed on %s, want %s", d.Placement.Node, tc.wantNode)
			}
		})
	}
}
