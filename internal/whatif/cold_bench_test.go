package whatif_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/whatif"
)

// BenchmarkWhatifCold measures the first evaluation on a freshly built
// snapshot with a fresh evaluator, as a one-shot `reprieve whatif` runs it:
// the snapshot is built outside the timer and evaluated right after, as the
// CLI does. The garbage of the iteration before is collected before the
// build, so that no collection the benchmark's own earlier iterations made
// due runs during the evaluation (the CLI's load leaves none due: it puts
// collection off through the first decision); a collection that does run
// there is counted in gcs/op. BenchmarkWhatif's figures are for later
// evaluations.
func BenchmarkWhatifCold(b *testing.B) {
	eachColdCluster(b, func(b *testing.B, objs snapshot.Objects, podObj *v1.Pod) {
		opts := whatif.Options{Now: now}
		b.ReportAllocs()
		// CPU time of the evaluations alone: on a shared machine wall
		// time also counts waiting for a core.
		var cpu time.Duration
		var gcs uint32
		var ms runtime.MemStats
		for b.Loop() {
			b.StopTimer()
			runtime.GC()
			snap, pod := benchSnapshot(b, objs, podObj)
			runtime.ReadMemStats(&ms)
			before := ms.NumGC
			b.StartTimer()
			var e whatif.Evaluator
			cpu += evaluateTimed(b, &e, snap, pod, opts)
			b.StopTimer()
			runtime.ReadMemStats(&ms)
			gcs += ms.NumGC - before
			b.StartTimer()
		}
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(gcs)/float64(b.N), "gcs/op")
	})
}

// BenchmarkWhatifWarmAfterGC is BenchmarkWhatif with a garbage collection
// before each evaluation, outside the timer: the same snapshot and
// evaluator, warmed up, so that what it adds to BenchmarkWhatif is the
// collection's alone (the caches it evicts, the allocator's spans it takes
// back) — what an evaluation pays when the process has just collected, as
// a long-running caller may have.
func BenchmarkWhatifWarmAfterGC(b *testing.B) {
	eachColdCluster(b, func(b *testing.B, objs snapshot.Objects, podObj *v1.Pod) {
		snap, pod := benchSnapshot(b, objs, podObj)
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
			cpu += evaluateTimed(b, &e, snap, pod, opts)
		}
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	})
}

// eachColdCluster runs f as a sub-benchmark on each cluster the cold
// benchmarks measure: both profiles at 500 and 5,000 nodes.
func eachColdCluster(b *testing.B, f func(b *testing.B, objs snapshot.Objects, podObj *v1.Pod)) {
	for _, nodes := range []int{500, 5000} {
		for _, constraints := range []bool{false, true} {
			name := "resources"
			if constraints {
				name = "constraints"
			}
			b.Run(fmt.Sprintf("%s/nodes=%d", name, nodes), func(b *testing.B) {
				objs, podObj := benchCluster(nodes, 30, constraints)
				f(b, objs, podObj)
			})
		}
	}
}

// benchSnapshot builds objs' snapshot and podObj's pod in it.
func benchSnapshot(tb testing.TB, objs snapshot.Objects, podObj *v1.Pod) (*snapshot.Snapshot, *snapshot.Pod) {
	tb.Helper()
	snap, err := snapshot.New(objs)
	if err != nil {
		tb.Fatal(err)
	}
	pod, err := snap.NewPod(podObj)
	if err != nil {
		tb.Fatal(err)
	}
	return snap, pod
}

// evaluateTimed evaluates pod with e, which must nominate a node, and
// returns the CPU time it took.
func evaluateTimed(b *testing.B, e *whatif.Evaluator, snap *snapshot.Snapshot, pod *snapshot.Pod, opts whatif.Options) time.Duration {
	start := cpuTime(b)
	if d, err := e.Evaluate(snap, pod, opts); err != nil || d.NominatedNode == "" {
		b.Fatalf("no preemption: %v %v", d, err)
	}
	return cpuTime(b) - start
}
