package whatif_test

import (
	"fmt"
	"testing"

	resourceapi "k8s.io/api/resource/v1"

	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
	"github.com/reprieve/reprieve/internal/whatif"
)

// BenchmarkWhatifDRA decides a GPU pod on 1,000 full nodes with four GPUs
// each, three of them held by the claims of lower-priority pods: every node
// is dry-run and DynamicResources allocates once per node. Binary defaults
// (parallelism GOMAXPROCS, candidate budget as upstream's); with the
// DRAPreemption gate every node is a candidate, its GPU claims released.
func BenchmarkWhatifDRA(b *testing.B) {
	var objs snapshot.Objects
	objs.DeviceClasses = []*resourceapi.DeviceClass{rt.DeviceClass("gpu", `device.driver == "gpu.example.com"`)}
	for i := range 1000 {
		node := fmt.Sprintf("n%04d", i)
		objs.Nodes = append(objs.Nodes, rt.Node(node).CPU("8").Obj())
		var gpus []rt.GPU
		for d := range 4 {
			gpus = append(gpus, rt.GPU{Name: fmt.Sprintf("g%d", d), Model: "a100", Memory: "40Gi"})
		}
		objs.ResourceSlices = append(objs.ResourceSlices, rt.GPUSlice(node, gpus...))
		for d := range 3 {
			name := fmt.Sprintf("p-%s-%d", node, d)
			p := rt.Pod("default", name).Priority(1).Req("2", "").On(node).Claim(name).Obj()
			objs.Pods = append(objs.Pods, p)
			objs.ResourceClaims = append(objs.ResourceClaims, rt.Claim("default", name, "gpu").AllocatedOn(node, fmt.Sprintf("g%d", d)).ReservedFor(p).Obj())
		}
		objs.Pods = append(objs.Pods, rt.Pod("default", "cpu-"+node).Priority(1).Req("2", "").On(node).Obj())
	}
	objs.ResourceClaims = append(objs.ResourceClaims, rt.Claim("default", "want", "gpu").Count(2).Obj())
	snap, err := snapshot.New(objs)
	if err != nil {
		b.Fatal(err)
	}
	pod, err := snap.NewPod(rt.Pod("default", "gpu-job").Priority(100).Req("1", "").Claim("want").Obj())
	if err != nil {
		b.Fatal(err)
	}
	for _, gate := range []bool{false, true} {
		b.Run(fmt.Sprintf("DRAPreemption=%t", gate), func(b *testing.B) {
			var e whatif.Evaluator
			opts := whatif.Options{Now: now, Features: profile.Features{DRAPreemption: gate}}
			b.ReportAllocs()
			for b.Loop() {
				d, err := e.Evaluate(snap, pod, opts)
				if err != nil {
					b.Fatal(err)
				}
				if (d.NominatedNode != "") != gate {
					b.Fatalf("nominated %q with DRAPreemption=%t", d.NominatedNode, gate)
				}
			}
		})
	}
}
