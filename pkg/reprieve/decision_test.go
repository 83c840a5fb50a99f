package reprieve_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/adapter/config"
	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/whatif"
	"github.com/reprieve/reprieve/pkg/reprieve"
)

// now is the evaluation time of the tests.
var now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// exampleCase is a whatif over the bundled examples.
type exampleCase struct {
	snapshot []string
	pods     string
	gates    string
	policy   reprieve.Policy
}

// exampleCases are the bundled examples, each pod file with the gates and
// policies its README gives it.
func exampleCases(t *testing.T) map[string]exampleCase {
	t.Helper()
	cases := map[string]exampleCase{
		"gang evict":               {snapshot: []string{"gang/cluster.yaml"}, pods: "gang/evict-the-gang.yaml", gates: "GenericWorkload=true"},
		"gang evict, composite":    {snapshot: []string{"gang/cluster.yaml"}, pods: "gang/evict-the-gang.yaml", gates: "GenericWorkload=true,CompositePodGroup=true"},
		"gang spare":               {snapshot: []string{"gang/cluster.yaml"}, pods: "gang/spare-the-gang.yaml", gates: "GenericWorkload=true"},
		"gang without the gate":    {snapshot: []string{"gang/cluster.yaml"}, pods: "gang/evict-the-gang.yaml"},
		"dra gpu-job":              {snapshot: []string{"dra/cluster.yaml"}, pods: "dra/gpu-job.yaml"},
		"dra big-gpu-job":          {snapshot: []string{"dra/cluster.yaml"}, pods: "dra/big-gpu-job.yaml"},
		"dra big-gpu-job, preempt": {snapshot: []string{"dra/cluster.yaml"}, pods: "dra/big-gpu-job.yaml", gates: "DRAPreemption=true"},
	}
	for _, policy := range reprieve.Policies() {
		cases["policy "+string(policy)] = exampleCase{snapshot: []string{"policy/cluster.yaml"}, pods: "policy/pod.yaml", policy: policy}
	}
	files, err := filepath.Glob("../../examples/pods/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples/pods: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		cases["cluster "+name] = exampleCase{snapshot: []string{"cluster"}, pods: "pods/" + name}
		cases["cluster "+name+", reschedulable"] = exampleCase{snapshot: []string{"cluster"}, pods: "pods/" + name, policy: reprieve.PolicyReschedulable}
	}
	return cases
}

func examplePaths(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Join("../../examples", p)
	}
	return out
}

// internalJSON is the JSON of the decisions internal/whatif makes, with
// the snapshot, pods and options `reprieve whatif` gives it.
func internalJSON(t *testing.T, tc exampleCase) [][]byte {
	t.Helper()
	set, err := manifest.LoadWith(manifest.Options{Lean: true}, examplePaths(tc.snapshot)...)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := set.Build()
	if err != nil {
		t.Fatal(err)
	}
	pods, _, err := manifest.LoadPodsSet(manifest.Options{}, examplePaths([]string{tc.pods})[0])
	if err != nil {
		t.Fatal(err)
	}
	features, err := profile.ParseFeatureGates(tc.gates)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := profile.ParsePolicy(string(tc.policy))
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	var out [][]byte
	for _, obj := range pods {
		obj.Status.Phase = v1.PodPending
		pod, err := snap.NewPod(obj)
		if err != nil {
			t.Fatal(err)
		}
		d, err := whatif.Evaluate(snap, pod, whatif.Options{Now: now, Parallelism: cfg.EffectiveParallelism(), Profile: &cfg.Profiles[0],
			Features: features, Policy: policy})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// publicJSON is the JSON of the decisions of this package for the same
// case, over the snapshot snap.
func publicJSON(t *testing.T, snap *reprieve.Snapshot, tc exampleCase) [][]byte {
	t.Helper()
	pods, err := reprieve.LoadPods(examplePaths([]string{tc.pods})[0])
	if err != nil {
		t.Fatal(err)
	}
	features, err := reprieve.ParseFeatureGates(tc.gates)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, pod := range pods {
		d, err := reprieve.Evaluate(snap, pod, reprieve.Options{Now: now, Features: features, Policy: tc.policy})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// TestDecisionJSON: on every bundled example, a Decision encodes to the
// very bytes internal/whatif's Decision encodes to, whether the snapshot
// was loaded from the manifests or built from their objects.
func TestDecisionJSON(t *testing.T) {
	// The examples hold every part of a decision that matters here: the
	// test fails if one goes missing from them.
	seen := map[string]bool{}
	t.Cleanup(func() {
		for _, key := range []string{"placement", "victimGroups", "victims.group", "victims.holds", "victims.startTime", "victims.pdbs",
			"victims.pendingReason", "upstream", "upstream.score", "dryRun", "nodeStatuses.*.preemption", "candidates.score"} {
			if !seen[key] {
				t.Errorf("no example decision has %s", key)
			}
		}
	})
	for name, tc := range exampleCases(t) {
		t.Run(name, func(t *testing.T) {
			want := internalJSON(t, tc)
			for _, b := range want {
				keysOf(t, b, seen)
			}

			loaded, err := reprieve.LoadSnapshot(examplePaths(tc.snapshot)...)
			if err != nil {
				t.Fatal(err)
			}
			built, err := reprieve.NewSnapshot(objectsOf(t, examplePaths(tc.snapshot)...))
			if err != nil {
				t.Fatal(err)
			}
			for what, snap := range map[string]*reprieve.Snapshot{"LoadSnapshot": loaded, "NewSnapshot": built} {
				got := publicJSON(t, snap, tc)
				if len(got) != len(want) {
					t.Fatalf("%s: %d decisions, want %d", what, len(got), len(want))
				}
				for i := range want {
					if !bytes.Equal(got[i], want[i]) {
						t.Errorf("%s: decision %d differs:\n got %s\nwant %s", what, i, got[i], want[i])
					}
				}
			}
		})
	}
}

// objectsOf reads manifests, whole, into Objects, as a client would list
// them.
func objectsOf(t *testing.T, paths ...string) reprieve.Objects {
	t.Helper()
	set, err := manifest.Load(paths...)
	if err != nil {
		t.Fatal(err)
	}
	o := set.Objects
	if len(o.PodParts) > 0 {
		t.Fatalf("a whole load kept %d pods in parts", len(o.PodParts))
	}
	return reprieve.Objects{
		Nodes: o.Nodes, Pods: o.Pods, PDBs: o.PDBs, PriorityClasses: o.PriorityClasses, Namespaces: o.Namespaces,
		PodGroups: o.PodGroups, CompositePodGroups: o.CompositePodGroups, ReplicaSets: set.ReplicaSets,
		PersistentVolumes: o.Storage.PersistentVolumes, PersistentVolumeClaims: o.Storage.PersistentVolumeClaims,
		StorageClasses: o.Storage.StorageClasses, CSINodes: o.Storage.CSINodes, CSIDrivers: o.Storage.CSIDrivers,
		CSIStorageCapacities: o.Storage.CSIStorageCapacities, VolumeAttachments: o.Storage.VolumeAttachments,
		ResourceSlices: o.ResourceSlices, DeviceClasses: o.DeviceClasses, ResourceClaims: o.ResourceClaims,
	}
}

// keysOf adds to seen the paths of the object members of the JSON b,
// array elements unnamed and nodeStatuses' node names as "*".
func keysOf(t *testing.T, b []byte, seen map[string]bool) {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if path == "nodeStatuses" {
					k = "*"
				}
				p := k
				if path != "" {
					p = path + "." + k
				}
				seen[p] = true
				walk(p, e)
			}
		case []any:
			for _, e := range v {
				walk(path, e)
			}
		}
	}
	walk("", v)
}
