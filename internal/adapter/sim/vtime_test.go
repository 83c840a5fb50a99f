package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
)

// TestLongTimesAreNever: a time past the run's end, however far (up to the
// largest the API server accepts), is one that does not come: a victim
// whose grace period or shutdown time is that long is still terminating at
// the end, a Job whose run time is that long never finishes, and a client
// rate limit that slow lets the burst through and nothing after it.
// Overflowing (time.Duration(seconds) * time.Second) made them come at once.
func TestLongTimesAreNever(t *testing.T) {
	victim := func(grace, shutdown string) string {
		doc := "apiVersion: v1\nkind: Pod\nmetadata: {name: victim"
		if shutdown != "" {
			doc += fmt.Sprintf(", annotations: {reprieve.dev/shutdown-seconds: %q}", shutdown)
		}
		doc += "}\nspec:\n  nodeName: n1\n"
		if grace != "" {
			doc += "  terminationGracePeriodSeconds: " + grace + "\n"
		}
		return doc + "  containers: [{name: c, resources: {requests: {cpu: \"2\"}}}]\n"
	}
	scenario := func(pod string) string {
		return docs(twoNodes[1:], pod, simulationYAML("long", "1h")+"  actions:\n  - at: 10s\n    delete: [{kind: Pod, name: victim}]\n")
	}
	const maxInt64 = "9223372036854775807"
	for name, tc := range map[string]struct {
		pod      string
		wantGone float64 // 0: still terminating at the end
	}{
		"grace period of MaxInt64 seconds":             {pod: victim(maxInt64, "")},
		"grace period past the end":                    {pod: victim("7200", "")},
		"grace period before the end":                  {pod: victim("600", ""), wantGone: 610},
		"shutdown of MaxInt64 seconds, grace past end": {pod: victim(maxInt64, maxInt64)},
		"shutdown of 1e300 seconds, grace 60":          {pod: victim("60", "1e300"), wantGone: 70},
		"shutdown of MaxInt64 seconds, grace 60":       {pod: victim("60", maxInt64), wantGone: 70},
		"shutdown of 30 seconds, grace MaxInt64":       {pod: victim(maxInt64, "30"), wantGone: 40},
	} {
		t.Run(name, func(t *testing.T) {
			res := runYAML(t, scenario(tc.pod))
			for _, p := range res.Pods {
				if p.Pod != "default/victim" {
					continue
				}
				switch {
				case p.Terminating == nil || *p.Terminating != 10:
					t.Errorf("terminating from %v, want 10s", p.Terminating)
				case tc.wantGone == 0 && p.Gone != nil:
					t.Errorf("gone at %vs, want still terminating at the end (3600s)", *p.Gone)
				case tc.wantGone != 0 && p.Gone == nil:
					t.Errorf("still terminating at the end, want gone at %vs", tc.wantGone)
				case tc.wantGone != 0 && *p.Gone != tc.wantGone:
					t.Errorf("gone at %vs, want %vs", *p.Gone, tc.wantGone)
				}
			}
		})
	}

	t.Run("a Job that runs for MaxInt64 seconds", func(t *testing.T) {
		res := runYAML(t, docs(twoNodes[1:], `apiVersion: batch/v1
kind: Job
metadata: {name: forever, annotations: {reprieve.dev/run-seconds: "`+maxInt64+`"}}
spec:
  template:
    spec: {restartPolicy: Never, containers: [{name: c}]}
`, simulationYAML("long", "1h")))
		for _, p := range res.Pods {
			if p.Finished != nil {
				t.Errorf("%s finished at %vs, want running at the end", p.Pod, *p.Finished)
			}
		}
	})

	t.Run("an API rate limit of 1e-12 calls per second", func(t *testing.T) {
		res := runYAMLWith(t, docs(twoNodes[1:], simulationYAML("slow", "1h")+`  costs: {apiQPS: 1e-12, apiBurst: 2}
  actions:
  - at: 1s
    createPods: {count: 5, template: {metadata: {name: p}, spec: {containers: [{name: c}]}}}
`), Options{})
		if s := res.Summary; s.PodsScheduled != 2 || s.PodsPendingAtEnd != 3 {
			t.Errorf("%d pods scheduled and %d pending at the end, want the burst of 2 bound and 3 waiting for the next token (in 3e4 years)", s.PodsScheduled, s.PodsPendingAtEnd)
		}
	})
}

// TestBadTimeAnnotations: the simulator's annotations must be non-negative
// numbers of seconds; any other value is refused at load, naming the file,
// the object and the annotation, in one line (they were ignored).
func TestBadTimeAnnotations(t *testing.T) {
	pod := func(value string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {reprieve.dev/shutdown-seconds: %q}}\nspec: {containers: [{name: c}]}\n", value)
	}
	job := func(value string) string {
		return fmt.Sprintf("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, annotations: {reprieve.dev/run-seconds: %q}}\nspec:\n  template:\n    spec: {restartPolicy: Never, containers: [{name: c}]}\n", value)
	}
	template := func(value string) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {reprieve.dev/shutdown-seconds: %q}}
    spec: {containers: [{name: c}]}
`, value)
	}
	createPods := func(value string) string {
		return fmt.Sprintf(`  actions:
  - at: 1s
    createPods:
      count: 2
      template:
        metadata: {name: p, annotations: {reprieve.dev/shutdown-seconds: %q}}
        spec: {containers: [{name: c}]}
`, value)
	}
	tests := map[string]struct {
		doc  string
		want string // "" when accepted
	}{
		"a pod's shutdown in words": {doc: docs(pod("soon"), simulationYAML("s", "1h")),
			want: `s.yaml#1: Pod default/p: metadata.annotations[reprieve.dev/shutdown-seconds]: "soon" is not a number of seconds: want a non-negative number such as 30 or 2.5`},
		"a negative shutdown": {doc: docs(pod("-5"), simulationYAML("s", "1h")),
			want: `s.yaml#1: Pod default/p: metadata.annotations[reprieve.dev/shutdown-seconds]: "-5" is negative`},
		"NaN":      {doc: docs(pod("NaN"), simulationYAML("s", "1h")), want: `"NaN" is not a number of seconds`},
		"infinity": {doc: docs(pod("+Inf"), simulationYAML("s", "1h")), want: `"+Inf" is not a number of seconds`},
		"too large to be a float": {doc: docs(pod("1e400"), simulationYAML("s", "1h")),
			want: `"1e400" is not a number of seconds`},
		"a Job's run time": {doc: docs(job("1h"), simulationYAML("s", "1h")),
			want: `s.yaml#1: Job default/j: metadata.annotations[reprieve.dev/run-seconds]: "1h" is not a number of seconds`},
		"a Deployment's template": {doc: docs(template("x"), simulationYAML("s", "1h")),
			want: `s.yaml#1: Deployment default/web: spec.template.metadata.annotations[reprieve.dev/shutdown-seconds]: "x" is not a number of seconds`},
		"createPods' template": {doc: docs(simulationYAML("s", "1h") + createPods("-1")),
			want: `s.yaml: Simulation s: spec.actions[0].createPods.template.metadata.annotations[reprieve.dev/shutdown-seconds]: "-1" is negative`},
		"a pod an action creates": {doc: docs(simulationYAML("s", "1h") + "  actions:\n  - at: 1s\n    create:\n    - {apiVersion: v1, kind: Pod, metadata: {name: p, annotations: {reprieve.dev/shutdown-seconds: \"ten\"}}, spec: {containers: [{name: c}]}}\n"),
			want: `s.yaml spec.actions[0].create[0]: Pod default/p: metadata.annotations[reprieve.dev/shutdown-seconds]: "ten" is not a number of seconds`},
		"huge but a number": {doc: docs(pod("9223372036854775807"), simulationYAML("s", "1h"))},
		"a fraction":        {doc: docs(pod("2.5"), job("0.5"), simulationYAML("s", "1h"))},
		"zero":              {doc: docs(pod("0"), simulationYAML("s", "1h"))},
		"exponent":          {doc: docs(pod("1e3"), simulationYAML("s", "1h"))},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := scenarioOf(t, tc.doc, Limits{})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want == "":
			case err == nil:
				t.Errorf("accepted, want an error containing %q", tc.want)
			case !errors.Is(err, manifest.ErrInput) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n"):
				t.Errorf("error %q, want one line, an input error, containing %q", err, tc.want)
			}
		})
	}
}

// TestSaturatingSeconds: seconds convert to a duration without wrapping
// round: anything past the largest duration is the largest.
func TestSaturatingSeconds(t *testing.T) {
	for _, tc := range []struct {
		seconds float64
		want    time.Duration
	}{
		{0, 0},
		{2.5, 2500 * time.Millisecond},
		{1e9, 1e9 * time.Second},
		{9223372036.854775807, maxDuration}, // 2^63 ns as a float
		{9223372037, maxDuration},
		{math.MaxInt64, maxDuration},
		{1e300, maxDuration},
		{math.Inf(1), maxDuration},
		{-1, 0},
		{math.NaN(), 0},
	} {
		if got := Seconds(tc.seconds); got != tc.want {
			t.Errorf("Seconds(%v) = %v, want %v", tc.seconds, got, tc.want)
		}
	}
	for _, tc := range []struct {
		seconds int64
		want    time.Duration
	}{
		{30, 30 * time.Second},
		{math.MaxInt64, maxDuration},
		{9223372037, maxDuration},
		{-1, 0},
	} {
		if got := wholeSeconds(tc.seconds); got != tc.want {
			t.Errorf("wholeSeconds(%v) = %v, want %v", tc.seconds, got, tc.want)
		}
	}
}

// TestStartFromObjects: without spec.start, a run starts at the latest
// timestamp of the scenario's objects (here a node's heartbeat), so that a
// snapshot's pods have started before it and a victim's lost runtime is
// the time it ran; with a spec.start before a pod started, that pod lost
// nothing, never a negative time. Before, every run started on 2026-01-01
// and a victim that started later lost -15996h.
func TestStartFromObjects(t *testing.T) {
	cluster := docs(`apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}, creationTimestamp: "2027-01-01T00:00:00Z"}
status:
  allocatable: {cpu: "2", memory: 8Gi, pods: "10"}
  conditions:
  - {type: Ready, status: "True", lastHeartbeatTime: "2027-11-30T12:00:00Z", lastTransitionTime: "2027-01-01T00:00:00Z"}
`, `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
`, `apiVersion: v1
kind: Pod
metadata: {name: old, creationTimestamp: "2027-11-30T10:00:00Z"}
spec:
  nodeName: n1
  terminationGracePeriodSeconds: 0
  containers: [{name: c, resources: {requests: {cpu: "2"}}}]
status:
  phase: Running
  startTime: "2027-11-30T11:00:00Z"
`)
	urgent := `  actions:
  - at: 10s
    create:
    - apiVersion: v1
      kind: Pod
      metadata: {name: urgent}
      spec:
        priorityClassName: high
        containers: [{name: c, resources: {requests: {cpu: "2"}}}]
`
	for name, tc := range map[string]struct {
		start       string
		wantStart   time.Time
		wantRuntime float64
	}{
		"latest timestamp": {wantStart: time.Date(2027, 11, 30, 12, 0, 0, 0, time.UTC), wantRuntime: 3600 + 10},
		"spec.start before the pod started": {start: "2026-01-01T00:00:00Z",
			wantStart: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), wantRuntime: 0},
	} {
		t.Run(name, func(t *testing.T) {
			sim := simulationYAML("start", "1m")
			if tc.start != "" {
				sim += "  start: " + tc.start + "\n"
			}
			sc, err := scenarioOf(t, docs(cluster, sim+urgent), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !sc.Start.Equal(tc.wantStart) {
				t.Errorf("starts at %s, want %s", sc.Start, tc.wantStart)
			}
			res, err := Run(context.Background(), sc, Options{Costs: free()})
			if err != nil {
				t.Fatal(err)
			}
			if res.Summary.PodsPreempted != 1 || res.Summary.VictimRuntimeLostS != tc.wantRuntime {
				t.Errorf("%d preempted, %vs of runtime lost; want 1 and %vs", res.Summary.PodsPreempted, res.Summary.VictimRuntimeLostS, tc.wantRuntime)
			}
		})
	}
	// Without timestamps, the default start.
	sc, err := scenarioOf(t, docs(nodeYAML("n1", "1"), simulationYAML("start", "1m")), Limits{})
	if err != nil || !sc.Start.Equal(DefaultStart) {
		t.Errorf("a scenario without timestamps starts at %v (%v), want %s", sc.Start, err, DefaultStart)
	}
}
