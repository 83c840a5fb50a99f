package scheduler

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// BenchmarkPreemptionCycle measures one scheduling cycle of a preemptor on
// 500 full nodes (upstream's dry run visits 100 of them), without an
// observer and with a DetailObserver, which has the cycle count its
// plugin evaluations (scheduler_plugin_evaluation_total). Each iteration
// adds a new preemptor and deletes it after its cycle, so that every cycle
// sees the same cluster.
func BenchmarkPreemptionCycle(b *testing.B) {
	for _, bc := range []struct {
		name     string
		observer Observer
	}{{"observer=none", nil}, {"observer=detail", &queueEvents{arrivals: map[string]int{}}}} {
		b.Run(bc.name, func(b *testing.B) {
			c := NewCore(testingclock.NewFakeClock(t0), Options{Seed: 1, Parallelism: 1, Observer: bc.observer})
			for i := range 500 {
				node := fmt.Sprintf("n%03d", i)
				c.OnNodeAdd(rt.Node(node).CPU("4").Obj())
				for j := range 8 {
					c.OnPodAdd(rt.Pod("ns", fmt.Sprintf("p%03d-%d", i, j)).Priority(int32(j%3)).Req("500m", "").StartedAt(j).On(node).Obj())
				}
			}
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				p := rt.Pod("ns", fmt.Sprint("preemptor-", i)).Priority(100).Req("1500m", "").Obj()
				p.Spec.SchedulerName = v1.DefaultSchedulerName
				i++
				c.OnPodAdd(p)
				if a := c.Cycle(); a == nil || a.Preemption == nil {
					b.Fatalf("actions %s, want a preemption", describe(a))
				}
				c.OnPodDelete(p)
			}
		})
	}
}
