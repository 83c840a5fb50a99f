package sim

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"

	"github.com/reprieve/reprieve/pkg/loader"
)

// benchmarkScenario runs a scenario to completion b.N times and reports
// pods scheduled per second of wall time and the process's peak RSS.
func benchmarkScenario(b *testing.B, sc *Scenario, countPrefix string) {
	var res *Result
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var err error
		if res, err = Run(context.Background(), sc, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	perRun := b.Elapsed().Seconds() / float64(b.N)
	scheduled := 0
	for _, p := range res.Pods {
		if p.Bound != nil && (countPrefix == "" || len(p.Pod) > len(countPrefix) && p.Pod[:len(countPrefix)] == countPrefix) {
			scheduled++
		}
	}
	b.ReportMetric(float64(scheduled)/perRun, "scheduled/s")
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
	}
	runtime.KeepAlive(res)
}

// BenchmarkPreemptionBasic runs the bundled PreemptionBasic scenarios and
// reports preemptors scheduled per second.
func BenchmarkPreemptionBasic(b *testing.B) {
	for _, f := range []string{"preemption-basic-1000.yaml", "preemption-basic.yaml"} {
		b.Run(f, func(b *testing.B) {
			sc, err := LoadScenario("../../examples/simulate/" + f)
			if err != nil {
				b.Fatal(err)
			}
			benchmarkScenario(b, sc, "default/preemptor-")
		})
	}
}

// BenchmarkSimulate simulates 1,000 nodes and 50,000 pod arrivals under
// preemption pressure: four priorities arriving in waves, each wave larger
// than the room the lower ones leave.
func BenchmarkSimulate(b *testing.B) {
	doc := `apiVersion: reprieve.dev/v1alpha1
kind: Simulation
metadata: {name: pressure}
spec:
  end: 2h
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
	set := loader.NewSet()
	if err := set.AddBytes("pressure.yaml", []byte(doc)); err != nil {
		b.Fatal(err)
	}
	sc, err := NewScenario(set)
	if err != nil {
		b.Fatal(err)
	}
	benchmarkScenario(b, sc, "")
}
