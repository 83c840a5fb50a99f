package reprieve_test

import (
	"fmt"
	"time"

	"github.com/reprieve/reprieve/pkg/reprieve"
)

// The bundled example cluster, and an urgent pod that fits nowhere:
// preemption evicts the two best-effort batch pods on node-a.
func Example() {
	snap, err := reprieve.LoadSnapshot("../../examples/cluster")
	if err != nil {
		panic(err)
	}
	pods, err := reprieve.LoadPods("../../examples/pods/urgent.yaml")
	if err != nil {
		panic(err)
	}
	d, err := reprieve.Evaluate(snap, pods[0], reprieve.Options{
		Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), // required: the engine never reads the clock
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Summary)
	for _, v := range d.Victims {
		fmt.Println("evicts", v.Pod, "from", v.Node)
	}
	fmt.Println(d.Message)
	// Output:
	// preempts 2 pods on node-a
	// evicts jobs/batch-1 from node-a
	// evicts jobs/batch-2 from node-a
	// 0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 Insufficient cpu. preemption: found a potential placement for pod on node node-a, preempting 2 victims
}
