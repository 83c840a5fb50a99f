package sim

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestCreateNodesLinear: createNodes takes time in proportion to its count.
// Four times the nodes must take at most eight times as long; laying the
// whole node list out again for each node added took sixteen times and more
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
		for range 2 {
			start := time.Now()
			res, err := Run(context.Background(), sc, Options{Costs: free()})
			if err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
			if len(res.Nodes) != n {
				t.Fatalf("%d nodes added, want %d", len(res.Nodes), n)
			}
		}
		return best
	}
	small, large := elapsed(8000), elapsed(32000)
	t.Logf("8,000 nodes in %s, 32,000 in %s", small, large)
	if large > 8*small {
		t.Errorf("8,000 nodes took %s and 32,000 took %s (%.1f times as long); want at most 8 times", small, large, float64(large)/float64(small))
	}
}
