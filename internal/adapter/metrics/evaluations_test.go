package metrics

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestPluginEvaluations checks scheduler_plugin_evaluation_total against
// counts worked out by hand from kube-scheduler v1.37.2's framework: a
// PreFilter counts once per cycle unless it returns Skip; a Filter once per
// RunFilterPlugins call on a node, for the plugins whose PreFilter did not
// skip, in the default order (NodeName, NodeUnschedulable, TaintToleration,
// NodeAffinity, NodePorts, NodeResourcesFit, ...) up to the one that
// rejects the node; nodes outside a PreFilterResult run no Filter; the
// preemption dry run's calls count too (one with the lower-priority pods
// removed, one per pod added back); PreScore and Score run only with more
// than one feasible node. Without preferred terms, spread selectors or
// existing pods' affinities, NodeAffinity, PodTopologySpread and
// InterPodAffinity skip PreScore; VolumeBinding does not (StorageCapacity
// Scoring is on in v1.37), and ImageLocality and DynamicResources score
// every node without a PreScore.
func TestPluginEvaluations(t *testing.T) {
	type counts map[string]float64 // "ExtensionPoint/Plugin" -> count
	fit := func(nodes float64) counts {
		return counts{"PreFilter/NodeName": 1, "PreFilter/NodeUnschedulable": 1, "PreFilter/TaintToleration": 1, "PreFilter/NodeResourcesFit": 1,
			"Filter/NodeName": nodes, "Filter/NodeUnschedulable": nodes, "Filter/TaintToleration": nodes, "Filter/NodeResourcesFit": nodes}
	}
	tests := map[string]struct {
		nodes    []*v1.Node
		existing []*v1.Pod
		pod      *v1.Pod
		// victimGone deletes the pod named "victim" after the first
		// round, for the preemptor's second cycle.
		victimGone bool
		want       counts
	}{
		"fits on all three nodes: scored": {
			nodes: []*v1.Node{rt.Node("n1").CPU("2").Obj(), rt.Node("n2").CPU("2").Obj(), rt.Node("n3").CPU("2").Obj()},
			pod:   rt.Pod("ns", "p").Req("1", "").Obj(),
			want: merge(fit(3), counts{
				"PreScore/TaintToleration": 1, "PreScore/NodeResourcesFit": 1, "PreScore/VolumeBinding": 1, "PreScore/NodeResourcesBalancedAllocation": 1,
				"Score/TaintToleration": 3, "Score/NodeResourcesFit": 3, "Score/VolumeBinding": 3, "Score/NodeResourcesBalancedAllocation": 3,
				"Score/DynamicResources": 3, "Score/ImageLocality": 3,
			}),
		},
		"rejected by a different plugin on each node but one": {
			nodes: []*v1.Node{
				rt.Node("n1").CPU("2").Label("disk", "ssd").Unschedulable().Obj(),
				rt.Node("n2").CPU("2").Label("disk", "ssd").Taint("k", "v", v1.TaintEffectNoSchedule).Obj(),
				rt.Node("n3").CPU("2").Obj(),
				rt.Node("n4").CPU("500m").Label("disk", "ssd").Obj(),
				rt.Node("n5").CPU("2").Label("disk", "ssd").Obj(),
			},
			pod: rt.Pod("ns", "p").Req("1", "").NodeSelector("disk", "ssd").Obj(),
			want: counts{
				"PreFilter/NodeName": 1, "PreFilter/NodeUnschedulable": 1, "PreFilter/TaintToleration": 1, "PreFilter/NodeAffinity": 1, "PreFilter/NodeResourcesFit": 1,
				"Filter/NodeName": 5, "Filter/NodeUnschedulable": 5, "Filter/TaintToleration": 4, "Filter/NodeAffinity": 3, "Filter/NodeResourcesFit": 2,
			},
		},
		"host port: NodePorts does not skip": {
			nodes:    []*v1.Node{rt.Node("n1").CPU("2").Obj(), rt.Node("n2").CPU("2").Obj()},
			existing: []*v1.Pod{rt.Pod("ns", "web").Req("100m", "").HostPort(80, v1.ProtocolTCP, "").On("n1").Obj()},
			pod:      rt.Pod("ns", "p").Req("1", "").HostPort(80, v1.ProtocolTCP, "").Obj(),
			want: counts{
				"PreFilter/NodeName": 1, "PreFilter/NodeUnschedulable": 1, "PreFilter/TaintToleration": 1, "PreFilter/NodePorts": 1, "PreFilter/NodeResourcesFit": 1,
				"Filter/NodeName": 2, "Filter/NodeUnschedulable": 2, "Filter/TaintToleration": 2, "Filter/NodePorts": 2, "Filter/NodeResourcesFit": 1,
			},
		},
		"PreFilterResult outside the cluster: no Filter runs, no dry run": {
			nodes: []*v1.Node{rt.Node("n1").CPU("2").Obj(), rt.Node("n2").CPU("2").Obj()},
			pod:   rt.Pod("ns", "p").Priority(100).Req("1", "").NodeNameIn("elsewhere").Obj(),
			want: counts{
				"PreFilter/NodeName": 1, "PreFilter/NodeUnschedulable": 1, "PreFilter/TaintToleration": 1, "PreFilter/NodeAffinity": 1, "PreFilter/NodeResourcesFit": 1,
			},
		},
		"preemption: the dry run's calls and the nominated node's": {
			nodes:      []*v1.Node{rt.Node("n1").CPU("2").Obj(), rt.Node("n2").CPU("2").Taint("k", "v", v1.TaintEffectNoSchedule).Obj()},
			existing:   []*v1.Pod{rt.Pod("ns", "victim").Priority(1).Req("2", "").On("n1").Obj()},
			pod:        rt.Pod("ns", "p").Priority(100).Req("2", "").Obj(),
			victimGone: true,
			// Cycle 1: PreFilter; Filter on n1 (all four, NodeResourcesFit
			// rejects) and n2 (TaintToleration rejects); the dry run on n1:
			// the victim removed (fits), added back (does not). Cycle 2:
			// PreFilter and the nominated node n1 alone, no scoring.
			want: counts{
				"PreFilter/NodeName": 2, "PreFilter/NodeUnschedulable": 2, "PreFilter/TaintToleration": 2, "PreFilter/NodeResourcesFit": 2,
				"Filter/NodeName": 5, "Filter/NodeUnschedulable": 5, "Filter/TaintToleration": 5, "Filter/NodeResourcesFit": 4,
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, false, tt.nodes...)
			for _, p := range tt.existing {
				w.f.add(p)
			}
			w.f.add(tt.pod)
			w.runAll()
			if tt.victimGone {
				victim := w.f.pods["ns/victim"]
				delete(w.f.pods, "ns/victim")
				w.s.OnPodDelete(victim)
				w.runAll()
			}
			got := counts{}
			for labels, v := range w.gather(t, "scheduler_plugin_evaluation_total") {
				l := parseLabels(labels)
				if l["profile"] != v1.DefaultSchedulerName {
					t.Errorf("series %s: profile %q", labels, l["profile"])
				}
				if v != 0 {
					got[l["extension_point"]+"/"+l["plugin"]] = v
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plugin_evaluation_total (-want,+got):\n%s", diff)
			}
		})
	}
}

func merge[M ~map[string]float64](a, b M) M {
	out := M{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] += v
	}
	return out
}

// parseLabels splits labelString's "k=v,k=v".
func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}
