package sim

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reprieve/reprieve/pkg/loader"
)

// FuzzScenario fuzzes the Simulation format: loading must not panic, a
// refusal is one line of loader.ErrInput, and a small accepted scenario
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
		set := loader.NewSet()
		if err := set.AddBytes("s", data); err != nil {
			return // the loader's own fuzzers check its errors
		}
		sc, err := NewScenarioWith(set, Limits{MaxObjects: 200})
		if err != nil {
			if !errors.Is(err, loader.ErrInput) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("bad error %q", err)
			}
			return
		}
		if sc.Estimate.Objects > 50 || sc.End > time.Hour {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if _, err := Run(ctx, sc, Options{}); err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, loader.ErrInput) {
			t.Fatalf("run: %v", err)
		}
	})
}
