package sim

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/adapter/manifest"

	"github.com/reprieve/reprieve/internal/scheduler"
)

func scenarioOf(t *testing.T, doc string, limits Limits) (*Scenario, error) {
	t.Helper()
	set := manifest.NewSet()
	if err := set.AddBytes("s.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	return NewScenarioWith(set, limits)
}

// cancelAfter cancels a run's context at its n-th scheduling attempt and
// counts the attempts made after that.
type cancelAfter struct {
	n, attempts int
	cancel      context.CancelFunc
}

func (c *cancelAfter) Attempt(*v1.Pod, scheduler.AttemptResult, time.Duration) {
	c.attempts++
	if c.attempts == c.n {
		c.cancel()
	}
}
func (c *cancelAfter) Scheduled(*v1.Pod, string, int, time.Duration)             {}
func (c *cancelAfter) Preemption(*v1.Pod, string, []*v1.Pod, int, time.Duration) {}

// TestRunStopsWhenCancelled checks that a cancelled run stops at once, not
// at the end of its virtual time: no scheduling attempt follows the
// cancellation and the error says where it stopped.
func TestRunStopsWhenCancelled(t *testing.T) {
	sc, err := scenarioOf(t, twoNodes+`
---
`+simulationYAML("big", "1000h")+`  actions:
  - at: 1s
    createPods:
      count: 5000
      template:
        metadata: {name: p}
        spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
`, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := &cancelAfter{n: 10, cancel: cancel}
	_, err = Run(ctx, sc, Options{Observer: obs, Costs: free()})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "simulation stopped at virtual time 1s") {
		t.Errorf("error %v, want context.Canceled at 1s", err)
	}
	if obs.attempts != obs.n {
		t.Errorf("%d attempts, want none after the %dth (the cancellation)", obs.attempts, obs.n)
	}

	// A context cancelled before the run stops it before any attempt.
	obs = &cancelAfter{n: -1}
	if _, err := Run(ctx, sc, Options{Observer: obs, Costs: free()}); !errors.Is(err, context.Canceled) || obs.attempts != 0 {
		t.Errorf("pre-cancelled: %v after %d attempts", err, obs.attempts)
	}
}

func TestEstimate(t *testing.T) {
	doc := twoNodes + `
---
` + controllerYAML("Deployment", "web", 3, "{containers: [{name: c}]}") + `---
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  completions: 7
  parallelism: 2
  template:
    spec: {restartPolicy: Never, containers: [{name: c}]}
---
` + simulationYAML("e", "10m") + `  actions:
  - {at: 1m, scale: {kind: Deployment, name: web, replicas: 10}}
  - at: 2m
    createPods: {count: 100, template: {metadata: {name: p}, spec: {containers: [{name: c}]}}}
  - at: 3m
    createNodes: {count: 4, template: {metadata: {name: w}}}
`
	sc, err := scenarioOf(t, doc, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// node + class + 2 controllers + 10 (scaled) + 7 (completions) + 100 pods + 4 nodes.
	want := Estimate{Objects: 1 + 1 + 2 + 10 + 7 + 100 + 4, Pods: 117, Attempts: 117 * 3}
	if sc.Estimate != want {
		t.Errorf("estimate %+v, want %+v", sc.Estimate, want)
	}
	if _, err := scenarioOf(t, doc, Limits{MaxObjects: 124}); !errors.Is(err, ErrTooBig) || !errors.Is(err, manifest.ErrInput) ||
		!strings.Contains(err.Error(), "s.yaml#5: Simulation e: spec.actions[1].createPods.count: the scenario creates up to 125 objects") {
		t.Errorf("over the limit: %v", err)
	}
	// A long run of many pending pods is bounded by its attempts.
	long := strings.Replace(doc, "end: 10m", "end: 100000h", 1)
	if _, err := scenarioOf(t, long, Limits{MaxObjects: 200}); !errors.Is(err, ErrTooBig) || !strings.Contains(err.Error(), "spec.end: 117 pods retried every 5m0s") {
		t.Errorf("long run: %v", err)
	}
}

// TestWorkQueueJob checks a Job with parallelism and no completions: its
// pods run in parallel and none is created once one has succeeded.
func TestWorkQueueJob(t *testing.T) {
	res := runYAML(t, twoNodes+`
---
apiVersion: batch/v1
kind: Job
metadata: {name: queue, annotations: {reprieve.dev/run-seconds: "60"}}
spec:
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, resources: {requests: {cpu: "500m"}}}]
---
`+simulationYAML("q", "10m")+`  actions:
  - {at: 5m, cordon: n1}
`)
	if res.Summary.PodsCreated != 2 || res.Summary.PodsScheduled != 2 {
		t.Errorf("created %d scheduled %d, want 2 and 2 (a work queue of 2, never replaced)", res.Summary.PodsCreated, res.Summary.PodsScheduled)
	}
}

// TestScaleDefaultNamespace checks that a scale action without a
// namespace finds its controller in "default".
func TestScaleDefaultNamespace(t *testing.T) {
	res := runYAML(t, twoNodes+`
---
`+controllerYAML("ReplicaSet", "web", 1, "{containers: [{name: c}]}")+`---
`+simulationYAML("s", "10m")+`  actions:
  - {at: 1m, scale: {kind: ReplicaSet, name: web, replicas: 3}}
`)
	if res.Summary.PodsCreated != 3 {
		t.Errorf("created %d pods, want 3", res.Summary.PodsCreated)
	}
	for _, e := range res.Events {
		if e.Reason == "ActionFailed" {
			t.Errorf("action failed: %s", e.Message)
		}
	}
}
