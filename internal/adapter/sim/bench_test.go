package sim

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/adapter/manifest"

	"github.com/reprieve/reprieve/internal/scheduler"
)

// phaseTimer measures, in wall time, the phase of a run from the first
// scheduling attempt of a pod whose key has the prefix to the last time
// such a pod is bound.
type phaseTimer struct {
	prefix      string
	first, last time.Time
	scheduled   int
}

func (p *phaseTimer) match(pod *v1.Pod) bool {
	return strings.HasPrefix(pod.Namespace+"/"+pod.Name, p.prefix)
}

func (p *phaseTimer) Attempt(pod *v1.Pod, _ scheduler.AttemptResult, _ time.Duration) {
	if p.first.IsZero() && p.match(pod) {
		p.first = time.Now()
	}
}

func (p *phaseTimer) Scheduled(pod *v1.Pod, _ string, _ int, _ time.Duration) {
	if p.match(pod) {
		p.last = time.Now()
		p.scheduled++
	}
}

func (p *phaseTimer) Preemption(*v1.Pod, string, []*v1.Pod, int, time.Duration) {}

// benchmarkScenario runs a scenario to completion b.N times and reports
// the pods with the prefix scheduled per second of wall time during their
// phase, and the process's peak RSS.
func benchmarkScenario(b *testing.B, sc *Scenario, prefix, unit string) {
	var phase time.Duration
	var scheduled int
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		pt := &phaseTimer{prefix: prefix}
		res, err := Run(context.Background(), sc, Options{Observer: pt})
		if err != nil {
			b.Fatal(err)
		}
		phase += pt.last.Sub(pt.first)
		scheduled = pt.scheduled
		runtime.KeepAlive(res)
	}
	b.StopTimer()
	b.ReportMetric(float64(scheduled)/(phase.Seconds()/float64(b.N)), unit)
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
	}
}

// BenchmarkPreemptionBasic runs the bundled PreemptionBasic scenarios and
// reports preemptors scheduled per second.
func BenchmarkPreemptionBasic(b *testing.B) {
	for _, f := range []string{"preemption-basic-1000.yaml", "preemption-basic.yaml"} {
		b.Run(f, func(b *testing.B) {
			sc, err := LoadScenario("../../../examples/simulate/" + f)
			if err != nil {
				b.Fatal(err)
			}
			benchmarkScenario(b, sc, "default/preemptor-", "preemptors/s")
		})
	}
}

// BenchmarkSimulate simulates 1,000 nodes and 50,000 pod arrivals under
// preemption pressure: four priorities arriving in waves, each wave larger
// than the room the lower ones leave. The scheduler has scheduler_perf's
// client (QPS and burst 5000), as in the PreemptionBasic scenarios, so that
// the benchmark measures the simulator rather than a rate-limited client
// (at kube-scheduler's default QPS 50 the waves take most of the 2 hours).
func BenchmarkSimulate(b *testing.B) {
	doc := simulationYAML("pressure", "2h") + `  costs: {apiQPS: 5000, apiBurst: 5000}
  actions:
  - at: 0s
    createNodes:
      count: 1000
      template:
        metadata: {name: node}
        status: {allocatable: {cpu: "16", memory: 64Gi, pods: "110"}}
`
	for i, w := range []struct {
		prio, count int
		cpu         string
	}{{0, 20000, "700m"}, {100, 12000, "1"}, {1000, 10000, "1500m"}, {10000, 8000, "2"}} {
		doc += fmt.Sprintf(`  - at: %dm
    createPods:
      count: %d
      template:
        metadata: {name: wave%d, namespace: default}
        spec:
          priority: %d
          terminationGracePeriodSeconds: 30
          containers: [{name: c, image: pause, resources: {requests: {cpu: "%s", memory: 256Mi}}}]
`, i*10, w.count, i, w.prio, w.cpu)
	}
	set := manifest.NewSet()
	if err := set.AddBytes("pressure.yaml", []byte(doc)); err != nil {
		b.Fatal(err)
	}
	sc, err := NewScenario(set)
	if err != nil {
		b.Fatal(err)
	}
	benchmarkScenario(b, sc, "", "scheduled/s")
}
