package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// spreadNodes are four nodes in two zones, three of them loaded (600m,
// 1200m, 1800m of 4 CPUs), so that resources alone pile new pods onto the
// emptiest ones.
func spreadNodes() string {
	var b strings.Builder
	for i, n := range []struct{ name, zone, load string }{{"a1", "za", ""}, {"a2", "za", "600m"}, {"b1", "zb", "1200m"}, {"b2", "zb", "1800m"}} {
		if i > 0 {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {kubernetes.io/hostname: %s, topology.kubernetes.io/zone: %s}}\n"+
			"status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"32\"}}\n", n.name, n.name, n.zone)
		if n.load != "" {
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: batch-%s, labels: {app: batch}}\n"+
				"spec: {nodeName: %s, containers: [{name: c, resources: {requests: {cpu: %s}}}]}\n", n.name, n.name, n.load)
		}
	}
	return b.String()
}

// TestDefaultSpreading: the ReplicaSets the simulated controllers run (a
// Deployment's, a ReplicaSet's), StatefulSets and the scenario's Services
// give PodTopologySpread's system default constraints their selector, so
// their pods spread over the four nodes; a Job's pods, whose controller
// upstream does not follow, pile onto the emptiest nodes, as do bare pods
// no Service selects.
func TestDefaultSpreading(t *testing.T) {
	const pod = `{containers: [{name: c, resources: {requests: {cpu: 200m}}}]}`
	type spreadCase struct {
		workload  string
		wantNodes int // distinct nodes of the six pods
	}
	tests := map[string]spreadCase{
		"Deployment":  {workload: controllerYAML("Deployment", "web", 6, pod), wantNodes: 4},
		"ReplicaSet":  {workload: controllerYAML("ReplicaSet", "web", 6, pod), wantNodes: 4},
		"StatefulSet": {workload: strings.Replace(controllerYAML("StatefulSet", "web", 6, pod), "  replicas: 6\n", "  replicas: 6\n  podManagementPolicy: Parallel\n", 1), wantNodes: 4},
		"Job": {workload: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: web}\nspec:\n  parallelism: 6\n  completions: 6\n  template:\n" +
			"    metadata: {labels: {app: web}}\n    spec: {restartPolicy: Never, containers: [{name: c, resources: {requests: {cpu: 200m}}}]}\n", wantNodes: 2},
	}
	var bare strings.Builder
	for i := range 6 {
		fmt.Fprintf(&bare, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: web-%d, labels: {app: web}}\nspec: %s\n", i, pod)
	}
	tests["bare pods behind a Service"] = spreadCase{workload: "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n" + bare.String(), wantNodes: 4}
	tests["bare pods"] = spreadCase{workload: "apiVersion: v1\nkind: Service\nmetadata: {name: other}\nspec: {selector: {app: other}, ports: [{port: 80}]}\n" + bare.String(), wantNodes: 2}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res := runYAML(t, spreadNodes()+"---\n"+tc.workload+"---\n"+simulationYAML("spread", "1m"))
			var nodes []string
			for _, p := range res.Pods {
				if strings.HasPrefix(p.Pod, "default/web-") && p.Node != "" {
					nodes = append(nodes, p.Node)
				}
			}
			distinct := slices.Compact(slices.Sorted(slices.Values(nodes)))
			if len(nodes) != 6 || len(distinct) != tc.wantNodes {
				t.Errorf("replicas on %v, want six on %d distinct nodes", nodes, tc.wantNodes)
			}
		})
	}
}

// TestServiceDeleted: a Service deleted by an action no longer spreads the
// pods created after it.
func TestServiceDeleted(t *testing.T) {
	var create strings.Builder
	for i := range 6 {
		fmt.Fprintf(&create, "    - {apiVersion: v1, kind: Pod, metadata: {name: web-%d, labels: {app: web}}, spec: {containers: [{name: c, resources: {requests: {cpu: 200m}}}]}}\n", i)
	}
	res := runYAML(t, spreadNodes()+"---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n---\n"+
		simulationYAML("deleted", "1m")+"  actions:\n  - {at: 10s, delete: [{kind: Service, name: web}]}\n  - at: 20s\n    create:\n"+create.String())
	var nodes []string
	for _, p := range res.Pods {
		if strings.HasPrefix(p.Pod, "default/web-") && p.Node != "" {
			nodes = append(nodes, p.Node)
		}
	}
	if distinct := slices.Compact(slices.Sorted(slices.Values(nodes))); len(nodes) != 6 || len(distinct) != 2 {
		t.Errorf("pods on %v, want six on the two emptiest nodes", nodes)
	}
}
