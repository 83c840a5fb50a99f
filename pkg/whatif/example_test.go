package whatif_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/pkg/preemption"
	rt "github.com/reprieve/reprieve/pkg/reprievetest"
	"github.com/reprieve/reprieve/pkg/snapshot"
	"github.com/reprieve/reprieve/pkg/whatif"
)

// A snapshot built from objects (or loaded from manifests with
// loader.Load), a pod that does not exist yet, and kube-scheduler's
// decision for it.
func ExampleEvaluate() {
	snap, err := snapshot.New(snapshot.Objects{
		Nodes: []*v1.Node{rt.Node("node-a").CPU("4").Memory("16Gi").Obj()},
		Pods: []*v1.Pod{
			rt.Pod("batch", "report").Priority(10).Req("3", "1Gi").On("node-a").StartedAt(10).Obj(),
			rt.Pod("shop", "cache").Priority(1000).Req("1", "1Gi").On("node-a").StartedAt(20).Obj(),
		},
	})
	if err != nil {
		panic(err)
	}
	pod, err := snap.NewPod(rt.Pod("shop", "checkout").Priority(500).Req("2", "1Gi").Obj())
	if err != nil {
		panic(err)
	}
	d, err := whatif.Evaluate(snap, pod, whatif.Options{Preemption: preemption.Options{
		Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), // required: the engine never reads the clock
	}})
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Summary)
	for _, v := range d.Victims {
		fmt.Println("evicts", v.Pod, "from", v.Node)
	}
	fmt.Println(d.Message)
	// Output:
	// preempts 1 pod on node-a
	// evicts batch/report from node-a
	// 0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement for pod on node node-a, preempting 1 victims
}
