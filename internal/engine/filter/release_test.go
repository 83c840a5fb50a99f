package filter_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/preemption"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestSpreadEmptySelector: a constraint with labelSelector {} counts no pod
// under 1.37 and every pod of the namespace under 1.38
// (SpreadEmptySelectorMatchesAll). Zone a holds two unlabeled pods of the
// namespace, zone b none but is full with another namespace's pod: under
// 1.37 the pod fits on node-a; under 1.38 node-a would make the skew 3,
// and preemption evicts the other namespace's pod on node-b.
func TestSpreadEmptySelector(t *testing.T) {
	objs := snapshot.Objects{
		Nodes: []*v1.Node{rt.Node("node-a").CPU("4").Zone("a").Obj(), rt.Node("node-b").CPU("4").Zone("b").Obj()},
		Pods: []*v1.Pod{
			rt.Pod("ns", "a1").Req("1", "").On("node-a").StartedAt(1).Obj(),
			rt.Pod("ns", "a2").Req("1", "").On("node-a").StartedAt(1).Obj(),
			rt.Pod("other", "b1").Req("4", "").On("node-b").StartedAt(1).Obj(),
		},
	}
	tests := map[string]struct {
		release      profile.Release
		wantFeasible []string
		wantVictims  []string // on the chosen node, when none is feasible
	}{
		"1.36: {} counts nothing":              {release: profile.Release136, wantFeasible: []string{"node-a"}},
		"1.37: {} counts nothing":              {release: profile.Release137, wantFeasible: []string{"node-a"}},
		"1.38: {} counts the namespace's pods": {release: profile.Release138, wantVictims: []string{"other/b1"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			snap, err := snapshot.New(objs)
			if err != nil {
				t.Fatal(err)
			}
			obj := rt.Pod("ns", "p").Priority(10).Req("1", "").Obj()
			obj.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
				WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{}}}
			pod, err := snap.NewPod(obj)
			if err != nil {
				t.Fatal(err)
			}
			sem := tc.release.Semantics()
			c := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1, SpreadEmptySelectorMatchesAll: sem.SpreadEmptySelectorMatchesAll})
			fr := c.FilterAll()
			var feasible []string
			for _, n := range fr.Feasible {
				feasible = append(feasible, n.Name)
			}
			if diff := cmp.Diff(tc.wantFeasible, feasible); diff != "" {
				t.Fatalf("feasible nodes (-want,+got):\n%s", diff)
			}
			if len(feasible) > 0 {
				return
			}
			res, err := preemption.Evaluate(c, fr, preemption.Options{Now: rt.BaseTime, Exhaustive: true, Features: profile.Features{Semantics: sem}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Chosen == nil {
				t.Fatalf("no candidate: %+v", res.NodeStatuses)
			}
			var victims []string
			for _, v := range res.Chosen.Victims {
				victims = append(victims, v.Pod.Namespace()+"/"+v.Pod.Name())
			}
			if diff := cmp.Diff(tc.wantVictims, victims); diff != "" {
				t.Errorf("victims (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestCSIDriverNotRequired: a CSIDriver that prevents scheduling where it
// is missing, a bound claim of its volume, and node-b whose CSINode lacks
// it. 1.37 and 1.38 reject node-b ("… CSI driver is not installed on the
// node", VolumeLimitScaling on by default); 1.36 does not check
// (CSIDriverNotRequired).
func TestCSIDriverNotRequired(t *testing.T) {
	optIn := "optin.csi.example.com"
	yes := true
	objs := volumeCluster(nil, snapshot.StorageObjects{
		PersistentVolumes:      []*v1.PersistentVolume{rt.PV("pv", "standard", optIn, "1Gi").ClaimedBy("default", "c").Obj()},
		PersistentVolumeClaims: []*v1.PersistentVolumeClaim{rt.PVC("default", "c", "standard", "1Gi").BoundTo("pv").Obj()},
		CSIDrivers: []*storagev1.CSIDriver{{ObjectMeta: metav1.ObjectMeta{Name: optIn},
			Spec: storagev1.CSIDriverSpec{PreventPodSchedulingIfMissing: &yes}}},
		CSINodes: []*storagev1.CSINode{rt.CSINode("node-a", optIn, 2), rt.CSINode("node-b", driver, 2)},
	})
	tests := map[string]struct {
		release      profile.Release
		wantFeasible []string
	}{
		"1.36: not checked": {release: profile.Release136, wantFeasible: []string{"node-a", "node-b"}},
		"1.37: required":    {release: profile.Release137, wantFeasible: []string{"node-a"}},
		"1.38: required":    {release: profile.Release138, wantFeasible: []string{"node-a"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			snap, err := snapshot.New(objs)
			if err != nil {
				t.Fatal(err)
			}
			pod, err := snap.NewPod(rt.Pod("default", "p").Req("100m", "").PVC("data", "c").Obj())
			if err != nil {
				t.Fatal(err)
			}
			c := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1, CSIDriverNotRequired: tc.release.Semantics().CSIDriverNotRequired})
			var feasible []string
			for _, n := range c.FilterAll().Feasible {
				feasible = append(feasible, n.Name)
			}
			if diff := cmp.Diff(tc.wantFeasible, feasible); diff != "" {
				t.Errorf("feasible nodes (-want,+got):\n%s", diff)
			}
		})
	}
}
