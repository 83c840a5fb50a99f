package whatif_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/reprieve/reprieve/internal/snapshot"
	"github.com/reprieve/reprieve/pkg/whatif"
)

// BenchmarkWhatifCold measures the first evaluation on a freshly built
// snapshot with a fresh evaluator, as a one-shot `reprieve whatif` runs it
// (the snapshot is built, and its garbage collected, outside the timer);
// BenchmarkWhatif's figures are for later evaluations.
func BenchmarkWhatifCold(b *testing.B) {
	for _, nodes := range []int{500, 5000} {
		for _, constraints := range []bool{false, true} {
			name := "resources"
			if constraints {
				name = "constraints"
			}
			b.Run(fmt.Sprintf("%s/nodes=%d", name, nodes), func(b *testing.B) {
				objs, podObj := benchCluster(nodes, 30, constraints)
				opts := whatif.Options{Now: now}
				b.ReportAllocs()
				// CPU time of the evaluations alone: on a shared machine
				// wall time also counts waiting for a core.
				var cpu time.Duration
				for b.Loop() {
					b.StopTimer()
					snap, err := snapshot.New(objs)
					if err != nil {
						b.Fatal(err)
					}
					pod, err := snap.NewPod(podObj)
					if err != nil {
						b.Fatal(err)
					}
					// The build's garbage is collected before the timer
					// starts: it is the load's cost, not the evaluation's.
					runtime.GC()
					b.StartTimer()
					start := cpuTime(b)
					var e whatif.Evaluator
					if d, err := e.Evaluate(snap, pod, opts); err != nil || d.NominatedNode == "" {
						b.Fatalf("no preemption: %v %v", d, err)
					}
					cpu += cpuTime(b) - start
				}
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkWhatifWarmAfterGC is BenchmarkWhatif with a garbage collection
// before each evaluation, outside the timer, as BenchmarkWhatifCold has
// one: the same snapshot and evaluator, warmed up, so that what it adds to
// BenchmarkWhatif is the collection's alone (the caches it evicts, the
// allocator's spans it takes back). It is the floor under
// BenchmarkWhatifCold.
func BenchmarkWhatifWarmAfterGC(b *testing.B) {
	for _, nodes := range []int{500, 5000} {
		for _, constraints := range []bool{false, true} {
			name := "resources"
			if constraints {
				name = "constraints"
			}
			b.Run(fmt.Sprintf("%s/nodes=%d", name, nodes), func(b *testing.B) {
				objs, podObj := benchCluster(nodes, 30, constraints)
				snap, err := snapshot.New(objs)
				if err != nil {
					b.Fatal(err)
				}
				pod, err := snap.NewPod(podObj)
				if err != nil {
					b.Fatal(err)
				}
				opts := whatif.Options{Now: now}
				var e whatif.Evaluator
				for range 2 {
					if _, err := e.Evaluate(snap, pod, opts); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				var cpu time.Duration
				for b.Loop() {
					b.StopTimer()
					runtime.GC()
					b.StartTimer()
					start := cpuTime(b)
					if d, err := e.Evaluate(snap, pod, opts); err != nil || d.NominatedNode == "" {
						b.Fatalf("no preemption: %v %v", d, err)
					}
					cpu += cpuTime(b) - start
				}
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
