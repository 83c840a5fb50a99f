package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
)

// FuzzScenario fuzzes the Simulation format: loading must not panic, a
// refusal is one line of manifest.ErrInput, and a small accepted scenario
// runs (or is cut short by its deadline) without panicking.
func FuzzScenario(f *testing.F) {
	seeds := []string{
		twoNodes + "---\napiVersion: reprieve.dev/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {end: 1m, actions: [{at: 1s, cordon: n1}]}\n",
		twoNodes + "---\napiVersion: reprieve.dev/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {end: 1m, actions: [{at: soon, cordon: nope}]}\n",
		twoNodes + "---\napiVersion: reprieve.dev/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {end: 1m, actions: [{at: 1s, delete: [{kind: Pod, name: ghost}]}]}\n",
		twoNodes + "---\napiVersion: reprieve.dev/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec:\n  end: 5m\n  actions:\n  - at: 1s\n    createPods: {count: 5, template: {metadata: {name: big}, spec: {containers: [{name: c, resources: {limits: {cpu: \"3\"}}}]}}}\n",
		twoNodes + "---\napiVersion: reprieve.dev/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {end: 1m, actions: [{at: 1s, createPods: {count: 100000000000, template: {metadata: {name: p}, spec: {containers: [{name: c}]}}}}]}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 2, selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: a}}, spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}}\n---\n" +
			twoNodes + "---\napiVersion: reprieve.dev/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {end: 3m, actions: [{at: 1m, scale: {kind: Deployment, name: d, replicas: 3}}, {at: 2m, delete: [{kind: Deployment, name: d}]}]}\n",
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, annotations: {reprieve.dev/run-seconds: \"1\"}}\nspec: {parallelism: 2, completions: 4, template: {spec: {restartPolicy: Never, containers: [{name: c}]}}}\n---\n" +
			twoNodes + "---\napiVersion: reprieve.dev/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {end: 1m, actions: [{at: 2s, removeNode: n1}, {at: 3s, createNodes: {count: 2, template: {metadata: {name: w}, status: {allocatable: {cpu: 1}}}}}]}\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		set := manifest.NewSet()
		if err := set.AddBytes("s", data); err != nil {
			return // the loader's own fuzzers check its errors
		}
		sc, err := NewScenarioWith(set, Limits{MaxObjects: 200})
		if err != nil {
			if !errors.Is(err, manifest.ErrInput) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("bad error %q", err)
			}
			return
		}
		if sc.Estimate.Objects > 50 || sc.End > time.Hour {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if _, err := Run(ctx, sc, Options{}); err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, manifest.ErrInput) {
			t.Fatalf("run: %v", err)
		}
	})
}

// FuzzScenarioFields fuzzes the counts, durations and quantities of a
// well-formed scenario, so that inputs get past the loader to the checks
// and the run: no panic, refusals are one line of manifest.ErrInput, and a
// small run finishes or stops at its deadline.
func FuzzScenarioFields(f *testing.F) {
	f.Add(int64(5), int32(2), int32(1), int32(1), "1s", "5m", "3", "1Gi", "n1")
	f.Add(int64(100000000000), int32(-3), int32(-2), int32(0), "soon", "10m", "-1", "1e30", "nope")
	f.Add(int64(1), int32(2000000000), int32(2), int32(-1), "-1s", "0s", "1e20", "-5Gi", "ghost")
	f.Add(int64(3), int32(1), int32(4), int32(2), "2m", "1h", "9223372036854776", "100", "w-00002")
	f.Fuzz(func(t *testing.T, count int64, replicas, parallelism, completions int32, at, end, cpu, mem, target string) {
		doc := fmt.Sprintf(`apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "20"}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, resources: {limits: {cpu: %q, memory: %q}}}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch, annotations: {reprieve.dev/run-seconds: "2"}}
spec:
  parallelism: %d
  completions: %d
  template:
    spec: {restartPolicy: Never, containers: [{name: c, resources: {requests: {cpu: %q}}}]}
---
apiVersion: reprieve.dev/v1alpha1
kind: Simulation
metadata: {name: s}
spec:
  end: %q
  actions:
  - at: %q
    createPods: {count: %d, template: {metadata: {name: p}, spec: {containers: [{name: c, resources: {requests: {cpu: %q, memory: %q}}}]}}}
  - at: %q
    createNodes: {count: 2, template: {metadata: {name: w}, status: {allocatable: {cpu: %q, memory: %q}}}}
  - {at: %q, cordon: %q}
  - {at: %q, scale: {kind: Job, name: batch, replicas: %d}}
  - {at: %q, delete: [{kind: Pod, name: %q}]}
`, replicas, cpu, mem, parallelism, completions, cpu, end, at, count, cpu, mem, at, cpu, mem, at, target, at, replicas, at, target)
		set := manifest.NewSet()
		if err := set.AddBytes("s", []byte(doc)); err != nil {
			if !errors.Is(err, manifest.ErrInput) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("bad load error %q", err)
			}
			return
		}
		sc, err := NewScenarioWith(set, Limits{MaxObjects: 300})
		if err != nil {
			if !errors.Is(err, manifest.ErrInput) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("bad error %q", err)
			}
			return
		}
		if sc.Estimate.Objects > 300 {
			t.Fatalf("accepted %d objects over the limit of 300", sc.Estimate.Objects)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if _, err := Run(ctx, sc, Options{}); err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, manifest.ErrInput) {
			t.Fatalf("run: %v", err)
		}
	})
}
