package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
)

// free returns the cost model of the tests of a mechanism: their times are
// the mechanism's own (TestCosts checks the cost model).
func free() *CostModel {
	c := FreeCosts()
	return &c
}

func runFile(t *testing.T, path string) *Result {
	t.Helper()
	sc, err := LoadScenario(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Options{Costs: free()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// runYAML runs the scenario doc at no cost per cycle or API call.
func runYAML(t *testing.T, doc string) *Result {
	t.Helper()
	return runYAMLWith(t, doc, Options{Costs: free()})
}

// find returns the first event at or after index from matching reason and
// object prefix and message substring, or -1.
func find(events []Event, from int, reason, object, msg string) int {
	for i := from; i < len(events); i++ {
		e := events[i]
		if e.Reason == reason && strings.HasPrefix(e.Object, object) && strings.Contains(e.Message, msg) {
			return i
		}
	}
	return -1
}

// TestStory runs the bundled example end to end and checks that its story
// happens in order, at the right virtual times.
func TestStory(t *testing.T) {
	res := runFile(t, "../../../examples/simulate/story.yaml")
	steps := []struct {
		at                  time.Duration
		reason, object, msg string
	}{
		{30 * time.Second, "Preempted", "pod/batch-", "Preempted by pod"},
		{30 * time.Second, "FailedScheduling", "pod/urgent-report", "found a potential placement for pod on node node-1, preempting 2 victims"},
		{30 * time.Second, "SuccessfulCreate", "replicaset/batch-", "Created pod"},
		{60 * time.Second, "FailedScheduling", "pod/critical-fix", "found a potential placement for pod on node node-1"},
		{150 * time.Second, "Scheduled", "pod/critical-fix", "to node-1"},
		{150 * time.Second, "FailedScheduling", "pod/urgent-report", "No preemption victims found"},
		{300 * time.Second, "Scheduled", "pod/urgent-report", "to node-3"},
	}
	i := 0
	for _, s := range steps {
		j := find(res.Events, i, s.reason, s.object, s.msg)
		if j < 0 {
			t.Fatalf("missing, after event %d: %s %s %q", i, s.reason, s.object, s.msg)
		}
		if res.Events[j].Time != s.at {
			t.Errorf("%s %s at %s, want %s", s.reason, s.object, res.Events[j].Time, s.at)
		}
		i = j
	}
	// The urgent pod lost its nomination to critical-fix at 1:00.
	for _, p := range res.Pods {
		if p.Pod == "finance/urgent-report" {
			if len(p.Nominations) != 1 || p.Nominations[0].Outcome != "lost" || *p.Nominations[0].To != 60 {
				t.Errorf("urgent-report nominations = %+v, want one lost at 60s", p.Nominations)
			}
		}
	}
	// The re-created batch pods end up pending.
	s := res.Summary
	if s.PodsPendingAtEnd != 2 || s.NominationsLost != 1 || s.Preemptions != 2 || s.Victims != 4 {
		t.Errorf("summary = %+v", s)
	}
}

func TestDeterministic(t *testing.T) {
	a, _ := json.Marshal(runFile(t, "../../../examples/simulate/story.yaml"))
	b, _ := json.Marshal(runFile(t, "../../../examples/simulate/story.yaml"))
	if !bytes.Equal(a, b) {
		t.Error("two runs of the same scenario differ")
	}
}

var twoNodes = "\n" + nodeYAML("n1", "2") + `---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
`

func TestTerminationTiming(t *testing.T) {
	res := runYAML(t, twoNodes+`
---
apiVersion: v1
kind: Pod
metadata: {name: slow, annotations: {reprieve.dev/shutdown-seconds: "45"}}
spec:
  nodeName: n1
  terminationGracePeriodSeconds: 600
  containers: [{name: c, resources: {requests: {cpu: "2"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: quick}
spec:
  nodeName: n1
  terminationGracePeriodSeconds: 0
  containers: [{name: c}]
---
`+simulationYAML("t", "5m")+`  actions:
  - at: 10s
    delete: [{kind: Pod, name: slow}, {kind: Pod, name: quick}]
`)
	gone := map[string]float64{}
	for _, p := range res.Pods {
		if p.Gone != nil {
			gone[p.Pod] = *p.Gone
		}
	}
	if gone["default/slow"] != 55 || gone["default/quick"] != 10 {
		t.Errorf("gone at %v, want slow at 10+45=55 (shutdown annotation below grace), quick at 10", gone)
	}
}

func TestControllersReplaceAndJobsFinish(t *testing.T) {
	res := runYAML(t, twoNodes+`
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: vip}
value: 2000
---
apiVersion: batch/v1
kind: Job
metadata: {name: crunch, annotations: {reprieve.dev/run-seconds: "60"}}
spec:
  completions: 2
  parallelism: 1
  template:
    metadata: {labels: {job: crunch}}
    spec:
      restartPolicy: Never
      priorityClassName: high
      containers: [{name: c, resources: {requests: {cpu: "1"}}}]
---
`+controllerYAML("ReplicaSet", "web", 1, `{terminationGracePeriodSeconds: 5, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}`)+`---
`+simulationYAML("t", "10m")+`  actions:
  - at: 30s
    create:
    - apiVersion: v1
      kind: Pod
      metadata: {name: vip}
      spec:
        priorityClassName: vip
        containers: [{name: c, resources: {requests: {cpu: "1"}}}]
`)
	var jobDone, created []string
	for _, e := range res.Events {
		if e.Reason == "Completed" {
			jobDone = append(jobDone, fmt.Sprint(e.Time))
		}
		if e.Reason == "SuccessfulCreate" {
			created = append(created, e.Object+"@"+fmt.Sprint(e.Time))
		}
	}
	// The VIP preempts the web pod (the job's pods have a higher priority
	// than web's); the ReplicaSet replaces it at once.
	var preempted []string
	for _, p := range res.Pods {
		if p.Preempted != nil {
			preempted = append(preempted, p.Pod)
		}
	}
	if len(preempted) != 1 || !strings.HasPrefix(preempted[0], "default/web-") {
		t.Fatalf("preempted %v, want the web pod", preempted)
	}
	if !slices.Contains(created, "replicaset/web@30s") {
		t.Errorf("no replacement created at 30s: %v", created)
	}
	// The job's two pods run one after the other, 60s each.
	if !slices.Equal(jobDone, []string{"2m0s"}) {
		t.Errorf("job completion events at %v, want [2m0s]", jobDone)
	}
	// The replacement waits until the job is done and frees its CPU.
	for _, p := range res.Pods {
		if strings.HasPrefix(p.Pod, "default/web-") && p.Preempted == nil && (p.Bound == nil || *p.Bound != 120) {
			t.Errorf("web replacement %s bound at %v, want 120s", p.Pod, p.Bound)
		}
	}
}

func TestBadScenarios(t *testing.T) {
	tests := map[string]struct{ doc, want string }{
		"no simulation":   {twoNodes, "no Simulation document"},
		"no end":          {twoNodes + "---\napiVersion: reprieve.dev/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {}\n", "spec.end: must be a positive duration"},
		"action past end": {twoNodes + "---\napiVersion: reprieve.dev/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {end: 1m, actions: [{at: 2m, cordon: n1}]}\n", "spec.actions[0].at: 2m0s is outside"},
		"empty action":    {twoNodes + "---\napiVersion: reprieve.dev/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {end: 1m, actions: [{at: 1s}]}\n", "spec.actions[0]: says nothing to do"},
		"unknown field":   {twoNodes + "---\napiVersion: reprieve.dev/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {end: 1m, bogus: 1}\n", `unknown field "spec.bogus"`},
		"bad scale kind":  {twoNodes + "---\napiVersion: reprieve.dev/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: {end: 1m, actions: [{at: 1s, scale: {kind: Pod, name: x, replicas: 1}}]}\n", `spec.actions[0].scale.kind: "Pod" cannot be scaled`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			set := manifest.NewSet()
			if err := set.AddBytes("s.yaml", []byte(tc.doc)); err != nil {
				t.Fatal(err)
			}
			_, err := NewScenario(set)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line containing %q", err, tc.want)
			}
		})
	}
}
