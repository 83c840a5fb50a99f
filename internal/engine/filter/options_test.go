package filter_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestCycleOptions checks a profile's filter arguments: NodeAffinity's added
// required affinity rejects the nodes it does not select before the pod's
// own affinity is looked at, and NodeResourcesFit does not check ignored
// extended resources, by name or by group (requests beyond a node's
// allocatable are unresolvable).
func TestCycleOptions(t *testing.T) {
	const gpu, fpga = v1.ResourceName("example.com/gpu"), v1.ResourceName("vendor.io/fpga")
	snap, err := snapshot.New(snapshot.Objects{Nodes: []*v1.Node{
		rt.Node("batch").Label("pool", "batch").CPU("4").Obj(),
		rt.Node("web").Label("pool", "web").CPU("4").Alloc(gpu, "1").Obj(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	added, err := nodeaffinity.NewNodeSelector(&v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: "pool", Operator: v1.NodeSelectorOpIn, Values: []string{"batch"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	enforced := filter.Status{Code: filter.UnschedulableAndUnresolvable, Plugin: filter.NodeAffinity, Reasons: []string{filter.ReasonNodeAffinityEnforced}}
	insufficient := func(r v1.ResourceName) filter.Status {
		return filter.Status{Code: filter.UnschedulableAndUnresolvable, Plugin: filter.NodeResourcesFit, Reasons: []string{"Insufficient " + string(r)}}
	}
	tests := map[string]struct {
		pod          *v1.Pod
		opts         filter.Options
		wantFeasible []string
		wantStatuses map[string]filter.Status
	}{
		"default profile": {
			pod:          rt.Pod("ns", "p").Req("1", "").Obj(),
			wantFeasible: []string{"batch", "web"},
		},
		"added affinity": {
			pod:          rt.Pod("ns", "p").Req("1", "").Obj(),
			opts:         filter.Options{AddedAffinity: added},
			wantFeasible: []string{"batch"},
			wantStatuses: map[string]filter.Status{"web": enforced},
		},
		"added affinity before the pod's own": {
			pod:          rt.Pod("ns", "p").NodeSelector("pool", "web").Obj(),
			opts:         filter.Options{AddedAffinity: added},
			wantStatuses: map[string]filter.Status{"batch": {Code: filter.UnschedulableAndUnresolvable, Plugin: filter.NodeAffinity, Reasons: []string{filter.ReasonNodeAffinity}}, "web": enforced},
		},
		"extended resources checked": {
			pod:          rt.Pod("ns", "p").ReqRes(gpu, "2").ReqRes(fpga, "1").Obj(),
			wantStatuses: map[string]filter.Status{"batch": insufficientBoth(gpu, fpga), "web": insufficientBoth(gpu, fpga)},
		},
		"ignored by name and by group": {
			pod:          rt.Pod("ns", "p").ReqRes(gpu, "2").ReqRes(fpga, "1").Obj(),
			opts:         filter.Options{IgnoredResources: sets.New(string(gpu)), IgnoredResourceGroups: sets.New("vendor.io")},
			wantFeasible: []string{"batch", "web"},
		},
		"ignored by name only": {
			pod:          rt.Pod("ns", "p").ReqRes(gpu, "2").ReqRes(fpga, "1").Obj(),
			opts:         filter.Options{IgnoredResources: sets.New(string(gpu))},
			wantStatuses: map[string]filter.Status{"batch": insufficient(fpga), "web": insufficient(fpga)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod, err := snap.NewPod(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			res := filter.NewCycle(snap, pod, tc.opts).FilterAll()
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
			if len(tc.wantStatuses) == 0 {
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

func insufficientBoth(a, b v1.ResourceName) filter.Status {
	return filter.Status{Code: filter.UnschedulableAndUnresolvable, Plugin: filter.NodeResourcesFit, Reasons: []string{"Insufficient " + string(a), "Insufficient " + string(b)}}
}
