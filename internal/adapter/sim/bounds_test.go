package sim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/adapter/manifest"

	"github.com/reprieve/reprieve/internal/scheduler"
)

func scenarioOf(t testing.TB, doc string, limits Limits) (*Scenario, error) {
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
	got := sc.Estimate
	got.Bytes = 0
	if got != want {
		t.Errorf("estimate %+v, want %+v", sc.Estimate, want)
	}
	// Each pod costs podBytes and twice its template's JSON (under 500
	// bytes here, defaulted), each other object objectBytes and twice its
	// template's.
	if low := int64(117*podBytes + 8*objectBytes); sc.Estimate.Bytes < low || sc.Estimate.Bytes > low+124*1000 {
		t.Errorf("estimate of %d bytes, want %d and up to 1000 more per object", sc.Estimate.Bytes, low)
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

// TestMemoryBound: a scenario whose objects need more memory than the
// process may use is refused before it runs, in one line naming the file,
// the Simulation and the field that asks for the most memory.
func TestMemoryBound(t *testing.T) {
	doc := func(pods, fatPods int) string {
		return docs(nodeYAML("n1", "1"), simulationYAML("big", "10m")+fmt.Sprintf(`  actions:
  - at: 1s
    createPods:
      count: %d
      template:
        metadata: {name: p}
        spec: {containers: [{name: c}]}
  - at: 2s
    createPods:
      count: %d
      template:
        metadata: {name: fat, annotations: {note: %q}}
        spec: {containers: [{name: c}]}
`, pods, fatPods, strings.Repeat("x", 20000)))
	}
	tests := map[string]struct {
		doc       string
		limits    Limits
		wantError string
	}{
		"900,000 pods in 1 GiB": {doc: doc(900000, 1), limits: Limits{MaxBytes: 1 << 30},
			wantError: "s.yaml#2: Simulation big: spec.actions[0].createPods.count: the scenario creates up to 900002 objects over its run, which need about 4.9 GiB of memory, more than the 1.0 GiB this process may use (the limit given)"},
		"fewer pods that weigh more": {doc: doc(100000, 40000), limits: Limits{MaxBytes: 1 << 30},
			wantError: "s.yaml#2: Simulation big: spec.actions[1].createPods.count: "},
		"900,000 pods in 8 GiB": {doc: doc(900000, 1), limits: Limits{MaxBytes: 8 << 30}},
		"no bound":              {doc: doc(900000, 40000), limits: Limits{MaxBytes: -1}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := scenarioOf(t, tc.doc, tc.limits)
			switch {
			case tc.wantError == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.wantError == "":
			case !errors.Is(err, ErrTooBig) || !errors.Is(err, manifest.ErrInput):
				t.Errorf("error %v, want ErrTooBig, an input error", err)
			case !strings.HasPrefix(err.Error(), tc.wantError) || strings.Contains(err.Error(), "\n"):
				t.Errorf("error %q, want one line starting %q", err, tc.wantError)
			}
		})
	}
}

// TestMemoryLimit: what a process may use is GOMEMLIMIT when set, else its
// cgroup's limit (v2, else v1; its own cgroup, else the root as a
// container sees it), else 3/4 of MemTotal; never above the cgroup's limit.
func TestMemoryLimit(t *testing.T) {
	const meminfo = "MemTotal:       16777216 kB\nMemFree:         1000 kB\n"
	const unset = math.MaxInt64
	tests := map[string]struct {
		files   map[string]string
		goLimit int64
		want    memoryLimit
	}{
		"physical memory only": {files: map[string]string{"/proc/meminfo": meminfo}, goLimit: unset,
			want: memoryLimit{12 << 30, "3/4 of physical memory; set GOMEMLIMIT to allow more"}},
		"cgroup v2 at the root": {goLimit: unset, files: map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": "0::/\n",
			"/sys/fs/cgroup/memory.max": "2147483648\n"}, want: memoryLimit{2 << 30, "the cgroup's memory limit"}},
		"cgroup v2, the process's own": {goLimit: unset, files: map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": "0::/user.slice/job\n",
			"/sys/fs/cgroup/user.slice/job/memory.max": "1073741824\n", "/sys/fs/cgroup/memory.max": "max\n"}, want: memoryLimit{1 << 30, "the cgroup's memory limit"}},
		"cgroup v2 without a limit": {goLimit: unset, files: map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": "0::/\n",
			"/sys/fs/cgroup/memory.max": "max\n"}, want: memoryLimit{12 << 30, "3/4 of physical memory; set GOMEMLIMIT to allow more"}},
		"cgroup v1": {goLimit: unset, files: map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": "4:memory:/job\n0::/\n",
			"/sys/fs/cgroup/memory/job/memory.limit_in_bytes": "3221225472\n"}, want: memoryLimit{3 << 30, "the cgroup's memory limit"}},
		"cgroup v1 unlimited": {goLimit: unset, files: map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": "4:memory:/\n",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, want: memoryLimit{12 << 30, "3/4 of physical memory; set GOMEMLIMIT to allow more"}},
		"GOMEMLIMIT above 3/4 of physical memory": {files: map[string]string{"/proc/meminfo": meminfo}, goLimit: 15 << 30,
			want: memoryLimit{15 << 30, "GOMEMLIMIT"}},
		"GOMEMLIMIT under the cgroup's limit": {goLimit: 1 << 30, files: map[string]string{"/sys/fs/cgroup/memory.max": "2147483648"},
			want: memoryLimit{1 << 30, "GOMEMLIMIT"}},
		"GOMEMLIMIT over the cgroup's limit": {goLimit: 4 << 30, files: map[string]string{"/sys/fs/cgroup/memory.max": "2147483648"},
			want: memoryLimit{2 << 30, "the cgroup's memory limit"}},
		"nothing known": {goLimit: unset, want: memoryLimit{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := memorySources{goLimit: tc.goLimit, readFile: func(name string) ([]byte, error) {
				if data, ok := tc.files[name]; ok {
					return []byte(data), nil
				}
				return nil, fs.ErrNotExist
			}}
			if got := m.limit(); got != tc.want {
				t.Errorf("limit %+v, want %+v", got, tc.want)
			}
		})
	}
}
