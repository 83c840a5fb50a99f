package whatif_test

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/whatif"
)

// A snapshot built from objects (or loaded from manifests with
// loader.Load), a pod that does not exist yet, and kube-scheduler's
// decision for it.
func ExampleEvaluate() {
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a"},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("16Gi"), v1.ResourcePods: resource.MustParse("110"),
		}},
	}
	pod := func(namespace, name string, priority int32, cpu string) *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: v1.PodSpec{Priority: &priority, Containers: []v1.Container{{Name: "app", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("1Gi")},
			}}}},
		}
	}
	running := func(p *v1.Pod, started time.Time) *v1.Pod {
		p.Spec.NodeName = "node-a"
		p.Status = v1.PodStatus{Phase: v1.PodRunning, StartTime: &metav1.Time{Time: started}}
		return p
	}
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

	snap, err := whatif.NewSnapshot(whatif.Objects{
		Nodes: []*v1.Node{node},
		Pods: []*v1.Pod{
			running(pod("batch", "report", 10, "3"), now.Add(-time.Hour)),
			running(pod("shop", "cache", 1000, "1"), now.Add(-time.Minute)),
		},
	})
	if err != nil {
		panic(err)
	}
	checkout, err := snap.NewPod(pod("shop", "checkout", 500, "2"))
	if err != nil {
		panic(err)
	}
	d, err := whatif.Evaluate(snap, checkout, whatif.Options{
		Now: now, // required: the engine never reads the clock
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
	// preempts 1 pod on node-a
	// evicts batch/report from node-a
	// 0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement for pod on node node-a, preempting 1 victims
}
