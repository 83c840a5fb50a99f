package whatif_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
	"github.com/reprieve/reprieve/internal/whatif"
)

// TestPlacement checks where a pod that fits would be bound: the default
// profile's scores pick the emptier node, with the fuller one runner-up;
// a single feasible node is taken unscored.
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

// TestReplicaSetSelectors checks the default selector of a pod: the
// requirements of every ReplicaSet of its namespace that selects it.
func TestReplicaSetSelectors(t *testing.T) {
	rs := func(ns, name string, match map[string]string) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: match}}}
	}
	sel := whatif.ReplicaSetSelectors([]*appsv1.ReplicaSet{
		rs("default", "web", map[string]string{"app": "web"}),
		rs("default", "tier", map[string]string{"tier": "front"}),
		rs("other", "web", map[string]string{"app": "web"}),
	})
	p := rt.Pod("default", "p").Label("app", "web").Label("tier", "front").Obj()
	if got := sel(p); got == nil || got.String() != "app=web,tier=front" {
		t.Errorf("selector %v, want app=web,tier=front", got)
	}
	if got := sel(rt.Pod("default", "q").Label("app", "db").Obj()); got != nil {
		t.Errorf("pod of no ReplicaSet got selector %v", got)
	}
	if whatif.ReplicaSetSelectors(nil) != nil {
		t.Error("no ReplicaSets: want no selector function")
	}
}
