package manifest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/resource"

	"github.com/reprieve/reprieve/internal/whatif"
)

// TestLeanDecidesAlike evaluates every example pod, and pods that preempt
// in a cluster of many objects, on a snapshot loaded as usual and one
// loaded lean: the decisions must be the same, and the lean snapshot must
// have lost what leanPod drops.
func TestLeanDecidesAlike(t *testing.T) {
	examplePods, err := filepath.Glob("../../../examples/pods/*.yaml")
	if err != nil || len(examplePods) == 0 {
		t.Fatalf("no example pods: %v", err)
	}
	dir := t.TempDir()
	many := filepath.Join(dir, "many.json")
	// Enough pods (360) for Build to make them ahead of adding them.
	writeFile(t, many, mustJSON(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": manyObjects(60)}, true))
	// The volumes example, each pod with a token and a config map volume
	// as well as its claim.
	volumes, err := os.ReadFile("../../cli/whatif/testdata/volumes/cluster.yaml")
	if err != nil || !bytes.Contains(volumes, []byte("volumes: [")) {
		t.Fatalf("no volumes example: %v", err)
	}
	volumes = bytes.ReplaceAll(volumes, []byte("volumes: ["),
		[]byte("volumes: [{name: kube-api-access-x, projected: {sources: [{serviceAccountToken: {path: token}}]}}, {name: cfg, configMap: {name: c}}, "))
	withTokens := filepath.Join(dir, "volumes.yaml")
	writeFile(t, withTokens, volumes)
	preemptor := filepath.Join(dir, "preemptor.yaml")
	writeFile(t, preemptor, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: shop}\nspec:\n  priority: 5000\n  containers:\n  - name: c\n    image: img:1\n    resources: {requests: {cpu: 3900m}}\n"))
	tests := map[string]struct {
		cluster []string
		pods    []string
	}{
		"examples": {cluster: []string{"../../../examples/cluster"}, pods: examplePods},
		"dra":      {cluster: []string{"../../../examples/dra/cluster.yaml"}, pods: []string{"../../../examples/dra/gpu-job.yaml", "../../../examples/dra/big-gpu-job.yaml"}},
		"gang":     {cluster: []string{"../../../examples/gang/cluster.yaml"}, pods: []string{"../../../examples/gang/evict-the-gang.yaml", "../../../examples/gang/spare-the-gang.yaml"}},
		"policy":   {cluster: []string{"../../../examples/policy/cluster.yaml"}, pods: []string{"../../../examples/policy/pod.yaml"}},
		"many":     {cluster: []string{many}, pods: []string{preemptor}},
		"volumes": {cluster: []string{withTokens}, pods: []string{"../../cli/whatif/testdata/volumes/rwop.yaml",
			"../../cli/whatif/testdata/volumes/zonal.yaml"}},
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			decide := func(lean bool) []*whatif.Decision {
				set, err := LoadWith(Options{Lean: lean}, tc.cluster...)
				if err != nil {
					t.Fatal(err)
				}
				if lean {
					pods, _ := setPods(set)
					for _, p := range pods {
						for _, v := range p.Spec.Volumes {
							if v.Projected != nil || v.ConfigMap != nil {
								t.Fatalf("lean pod %s kept volume %s", p.Name, v.Name)
							}
						}
						for _, c := range p.Spec.Containers {
							if c.Env != nil || c.Args != nil || c.Resources.Limits != nil {
								t.Fatalf("lean pod %s kept container fields: %+v", p.Name, c)
							}
						}
					}
				}
				snap, err := set.Build()
				if err != nil {
					t.Fatal(err)
				}
				var ds []*whatif.Decision
				var e whatif.Evaluator
				for _, path := range tc.pods {
					obj, _, err := LoadPod(path)
					if err != nil {
						t.Fatal(err)
					}
					obj.Status.Phase = v1.PodPending
					pod, err := snap.NewPod(obj)
					if err != nil {
						t.Fatal(err)
					}
					d, err := e.Evaluate(snap, pod, whatif.Options{Now: now})
					if err != nil {
						t.Fatal(err)
					}
					ds = append(ds, d)
				}
				return ds
			}
			full, lean := decide(false), decide(true)
			victims := 0
			for _, d := range full {
				victims += len(d.Victims)
			}
			if victims == 0 {
				t.Fatal("no decision has victims: the test shows nothing")
			}
			if diff := cmp.Diff(full, lean); diff != "" {
				t.Errorf("decisions differ (-full +lean):\n%s", diff)
			}
		})
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLeanKeepsResizeState: a pod whose status reports resources other
// than its spec's (a resize under way, or infeasible) occupies what the
// resource helpers make of both, so lean keeps its container statuses and
// the PodResizePending condition; a kubelet's status that reports the
// spec's is dropped. The lean snapshot counts each pod as the whole one
// does, and as the helpers do.
func TestLeanKeepsResizeState(t *testing.T) {
	const node = `apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
`
	const pod = `apiVersion: v1
kind: Pod
metadata: {name: resized, namespace: default}
spec:
  nodeName: n1
  containers:
  - name: c
    image: img:1
    resources: {requests: {cpu: "2"}}
status:
  phase: Running
  conditions:
  - {type: Ready, status: "True"}
%s
`
	status := func(allocated string) string {
		return "  containerStatuses:\n  - {name: c, image: img:1, imageID: \"\", ready: true, restartCount: 0, allocatedResources: {cpu: " + allocated +
			"}, resources: {requests: {cpu: " + allocated + "}}}"
	}
	const infeasible = "  - {type: PodResizePending, status: \"True\", reason: Infeasible}\n"
	for name, tc := range map[string]struct {
		status string
		want   int64
	}{
		"infeasible":                      {infeasible + status("500m"), 500},
		"infeasible, no container status": {infeasible, 0},
		"allocated more":                  {status("3"), 3000},
		"allocated less":                  {status("1"), 2000},
		"as the spec":                     {status("2000m"), 2000},
	} {
		t.Run(name, func(t *testing.T) {
			cluster := filepath.Join(t.TempDir(), "cluster.yaml")
			writeFile(t, cluster, []byte(node+"---\n"+fmt.Sprintf(pod, tc.status)))
			requests := func(lean bool) int64 {
				set, err := LoadWith(Options{Lean: lean}, cluster)
				if err != nil {
					t.Fatal(err)
				}
				if !lean {
					pods, _ := setPods(set)
					helpers := resource.PodRequests(pods[0], resource.PodResourcesOptions{UseStatusResources: true, InPlacePodLevelResourcesVerticalScalingEnabled: true})
					if cpu := helpers[v1.ResourceCPU]; cpu.MilliValue() != tc.want {
						t.Fatalf("the helpers count %dm, the test wants %dm", cpu.MilliValue(), tc.want)
					}
				}
				snap, err := set.Build()
				if err != nil {
					t.Fatal(err)
				}
				return snap.Pod("default/resized").Requests.MilliCPU
			}
			whole, lean := requests(false), requests(true)
			if whole != tc.want || lean != whole {
				t.Errorf("the resized pod occupies %dm whole and %dm lean, want %dm both", whole, lean, tc.want)
			}
		})
	}
}
