package sim

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// TestCreateNodesLinear: createNodes takes time in proportion to its count.
// Eight times the nodes must take at most 24 times the CPU time (the
// process's, less exposed than wall time to the machine's other work);
// laying the whole node list out again for each node added took 50 times
// (900,000 nodes were still being added after a minute).
func TestCreateNodesLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("times two runs of thousands of nodes")
	}
	elapsed := func(n int) time.Duration {
		t.Helper()
		sc, err := scenarioOf(t, fmt.Sprintf(simulationYAML("nodes", "1m")+`  actions:
  - at: 1s
    createNodes:
      count: %d
      template:
        metadata: {name: w}
        status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
`, n), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		best := time.Duration(1<<63 - 1)
		for range 3 {
			start := cpuTime(t)
			res, err := Run(context.Background(), sc, Options{Costs: free()})
			if err != nil {
				t.Fatal(err)
			}
			best = min(best, cpuTime(t)-start)
			if len(res.Nodes) != n {
				t.Fatalf("%d nodes added, want %d", len(res.Nodes), n)
			}
		}
		return best
	}
	small, large := elapsed(4000), elapsed(32000)
	t.Logf("4,000 nodes in %s of CPU time, 32,000 in %s", small, large)
	if large > 24*small {
		t.Errorf("4,000 nodes took %s and 32,000 took %s (%.1f times as long); want at most 24 times", small, large, float64(large)/float64(small))
	}
}

// cpuTime is the CPU time the process has used.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
