package sim

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkCreateNodes times a createNodes action of n nodes; ns/node
// stays about flat as n grows eightfold (laying the whole node list out
// again for each node added made it grow with n: 900,000 nodes were still
// being added after a minute). That Snapshot.AddNodes lays nodes out as
// AddNode does is TestAddNodesAsAddNode's.
//
//	go test -run NONE -bench CreateNodes ./internal/adapter/sim/
func BenchmarkCreateNodes(b *testing.B) {
	for _, n := range []int{4000, 32000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			sc, err := scenarioOf(b, fmt.Sprintf(simulationYAML("nodes", "1m")+`  actions:
  - at: 1s
    createNodes:
      count: %d
      template:
        metadata: {name: w}
        status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
`, n), Limits{})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				res, err := Run(context.Background(), sc, Options{Costs: free()})
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Nodes) != n {
					b.Fatalf("%d nodes added, want %d", len(res.Nodes), n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
		})
	}
}
