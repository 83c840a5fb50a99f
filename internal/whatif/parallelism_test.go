package whatif_test

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/reprieve/reprieve/internal/whatif"
)

// goroutinesCreated returns how many goroutines the process has created.
func goroutinesCreated(t *testing.T) uint64 {
	t.Helper()
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatalf("metric %s not supported", s[0].Name)
	}
	return s[0].Value.Uint64()
}

// TestParallelismOneStartsNoGoroutine checks that an evaluation with
// Parallelism 1 runs on the caller's goroutine alone — PreFilter,
// filtering, the dry run and the explanations of a cluster big enough for
// each of them to split its work otherwise — and that with more it does
// start goroutines (so that the count can tell).
func TestParallelismOneStartsNoGoroutine(t *testing.T) {
	objs, podObj := benchCluster(1500, 10, true)
	snap, pod := benchSnapshot(t, objs, podObj)
	// The collector starts its workers on its first cycle: have it done,
	// and keep it from running meanwhile.
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	count := func(parallelism int) (uint64, *whatif.Decision) {
		before := goroutinesCreated(t)
		d, err := whatif.Evaluate(snap, pod, whatif.Options{Parallelism: parallelism, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return goroutinesCreated(t) - before, d
	}
	serial, d1 := count(1)
	if serial != 0 {
		t.Errorf("Parallelism 1: %d goroutines created, want none", serial)
	}
	if d1.NominatedNode == "" {
		t.Fatalf("the test cluster does not make the pod preempt: %s", d1.Summary)
	}
	parallel, d4 := count(4)
	if parallel == 0 {
		t.Errorf("Parallelism 4: no goroutine created; the cluster is too small to tell")
	}
	if d1.Summary != d4.Summary {
		t.Errorf("Parallelism changed the decision: %q vs %q", d1.Summary, d4.Summary)
	}
}
