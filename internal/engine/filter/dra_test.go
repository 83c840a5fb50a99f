package filter_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

const (
	classGPU = `device.driver == "gpu.example.com"`
	classBig = `device.driver == "gpu.example.com" && device.capacity["gpu.example.com"].memory.compareTo(quantity("64Gi")) >= 0`
)

// draCluster is three nodes: n1 with an a100 (40Gi) and an h100 (80Gi), n2
// with a t4, n3 without devices; classes gpu and gpu-big.
func draCluster(claims []*resourceapi.ResourceClaim, pods ...*v1.Pod) snapshot.Objects {
	return snapshot.Objects{
		Nodes: []*v1.Node{rt.Node("n1").CPU("4").Obj(), rt.Node("n2").CPU("4").Obj(), rt.Node("n3").CPU("4").Obj()},
		Pods:  pods,
		ResourceSlices: []*resourceapi.ResourceSlice{
			rt.GPUSlice("n1", rt.GPU{Name: "g0", Model: "a100", Memory: "40Gi"}, rt.GPU{Name: "g1", Model: "h100", Memory: "80Gi"}),
			rt.GPUSlice("n2", rt.GPU{Name: "g0", Model: "t4", Memory: "16Gi"}),
		},
		DeviceClasses:  []*resourceapi.DeviceClass{rt.DeviceClass("gpu", classGPU), rt.DeviceClass("gpu-big", classBig)},
		ResourceClaims: claims,
	}
}

func unresolvable(reason string) filter.Status {
	return filter.Status{Code: filter.UnschedulableAndUnresolvable, Plugin: filter.DynamicResources, Reasons: []string{reason}}
}

// TestDynamicResources checks DynamicResources' PreFilter and Filter: which
// nodes can allocate the pod's claims, and upstream's statuses where not.
func TestDynamicResources(t *testing.T) {
	cannot := unresolvable(filter.ReasonCannotAllocate)
	notHere := unresolvable(filter.ReasonClaimNotAvailable)
	running := rt.Pod("default", "running").Req("1", "").On("n1").Obj()
	other := rt.Pod("default", "other").Req("1", "").On("n1").Obj()
	tests := map[string]struct {
		claims []*resourceapi.ResourceClaim
		pods   []*v1.Pod
		pod    *v1.Pod
		// wantPreFilter is the PreFilter rejection, applied to every node.
		wantPreFilter filter.Status
		// want is every node's status (Success: feasible).
		want map[string]filter.Status
	}{
		"no claims: the plugin does nothing": {
			pod:  rt.Pod("default", "p").Req("1", "").Obj(),
			want: map[string]filter.Status{"n1": {}, "n2": {}, "n3": {}},
		},
		"one GPU: nodes with a device": {
			claims: []*resourceapi.ResourceClaim{rt.Claim("default", "c", "gpu").Obj()},
			pod:    rt.Pod("default", "p").Claim("c").Obj(),
			want:   map[string]filter.Status{"n1": {}, "n2": {}, "n3": cannot},
		},
		"two GPUs: only n1 has two": {
			claims: []*resourceapi.ResourceClaim{rt.Claim("default", "c", "gpu").Count(2).Obj()},
			pod:    rt.Pod("default", "p").Claim("c").Obj(),
			want:   map[string]filter.Status{"n1": {}, "n2": cannot, "n3": cannot},
		},
		"all GPUs of a node: any node with at least one": {
			claims: []*resourceapi.ResourceClaim{rt.Claim("default", "c", "gpu").All().Obj()},
			pod:    rt.Pod("default", "p").Claim("c").Obj(),
			want:   map[string]filter.Status{"n1": {}, "n2": {}, "n3": cannot},
		},
		"capacity comparison in the class": {
			claims: []*resourceapi.ResourceClaim{rt.Claim("default", "c", "gpu-big").Obj()},
			pod:    rt.Pod("default", "p").Claim("c").Obj(),
			want:   map[string]filter.Status{"n1": {}, "n2": cannot, "n3": cannot},
		},
		"model selector in the request": {
			claims: []*resourceapi.ResourceClaim{rt.Claim("default", "c", "gpu").Selector(`device.attributes["gpu.example.com"].model == "t4"`).Obj()},
			pod:    rt.Pod("default", "p").Claim("c").Obj(),
			want:   map[string]filter.Status{"n1": cannot, "n2": {}, "n3": cannot},
		},
		"devices held by a running pod's claim are in use": {
			claims: []*resourceapi.ResourceClaim{
				rt.Claim("default", "held", "gpu").Count(2).AllocatedOn("n1", "g0", "g1").ReservedFor(running).Obj(),
				rt.Claim("default", "c", "gpu").Obj(),
			},
			pods: []*v1.Pod{running},
			pod:  rt.Pod("default", "p").Claim("c").Obj(),
			want: map[string]filter.Status{"n1": cannot, "n2": {}, "n3": cannot},
		},
		"an allocated claim shared with running pods: its node only": {
			claims: []*resourceapi.ResourceClaim{rt.Claim("default", "shared", "gpu").AllocatedOn("n1", "g0").ReservedFor(running, other).Obj()},
			pods:   []*v1.Pod{running, other},
			pod:    rt.Pod("default", "p").Claim("shared").Obj(),
			want:   map[string]filter.Status{"n1": {}, "n2": notHere, "n3": notHere},
		},
		"an allocated claim and one to allocate: allocation failure first": {
			claims: []*resourceapi.ResourceClaim{
				rt.Claim("default", "shared", "gpu").AllocatedOn("n2", "g0").Obj(),
				rt.Claim("default", "big", "gpu-big").Obj(),
			},
			pod:  rt.Pod("default", "p").Claim("shared").Claim("big").Obj(),
			want: map[string]filter.Status{"n1": notHere, "n2": cannot, "n3": cannot},
		},
		"a claim made from a template, owned by the pod": {
			claims: []*resourceapi.ResourceClaim{rt.Claim("default", "p-gpu", "gpu").OwnedBy(rt.Pod("default", "p").Obj()).Obj()},
			pod:    rt.Pod("default", "p").ClaimTemplate("tmpl", "p-gpu").Obj(),
			want:   map[string]filter.Status{"n1": {}, "n2": {}, "n3": cannot},
		},
		"missing claim": {
			pod:           rt.Pod("default", "p").Claim("nope").Obj(),
			wantPreFilter: unresolvable(`could not find ResourceClaim "default/nope"`),
		},
		"claim from a template not created yet": {
			pod:           rt.Pod("default", "p").ClaimTemplate("tmpl", "").Obj(),
			wantPreFilter: unresolvable(`pod "default/p": ResourceClaim not created yet`),
		},
		"generated claim owned by another pod": {
			claims:        []*resourceapi.ResourceClaim{rt.Claim("default", "p-gpu", "gpu").OwnedBy(other).Obj()},
			pod:           rt.Pod("default", "p").ClaimTemplate("tmpl", "p-gpu").Obj(),
			wantPreFilter: unresolvable("ResourceClaim default/p-gpu was not created for Pod default/p (Pod is not owner)"),
		},
		"claim being deleted": {
			claims: []*resourceapi.ResourceClaim{func() *resourceapi.ResourceClaim {
				c := rt.Claim("default", "c", "gpu").Obj()
				c.DeletionTimestamp = &metav1.Time{Time: rt.BaseTime}
				return c
			}()},
			pod:           rt.Pod("default", "p").Claim("c").Obj(),
			wantPreFilter: unresolvable(`resourceclaim "c" is being deleted`),
		},
		"device class that does not exist": {
			claims:        []*resourceapi.ResourceClaim{rt.Claim("default", "c", "tpu").Obj()},
			pod:           rt.Pod("default", "p").Claim("c").Obj(),
			wantPreFilter: unresolvable("request gpu: device class tpu does not exist"),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			snap, err := snapshot.New(draCluster(tc.claims, tc.pods...))
			if err != nil {
				t.Fatal(err)
			}
			pod, err := snap.NewPod(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			c := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1})
			if diff := cmp.Diff(tc.wantPreFilter, c.PreFilterStatus()); diff != "" {
				t.Errorf("PreFilter (-want +got):\n%s", diff)
			}
			if tc.want == nil {
				return
			}
			if len(tc.pod.Spec.ResourceClaims) > 0 && c.ResourcesOnly() {
				t.Errorf("ResourcesOnly() = true for a pod with claims: a dry run would not see DynamicResources")
			}
			res := c.FilterAll()
			got := map[string]filter.Status{}
			for i, n := range snap.Nodes {
				got[n.Name] = res.Statuses[i]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDRAExtendedResources checks extended resources backed by DRA: on a
// node that offers the resource through its allocatable NodeResourcesFit
// decides; elsewhere a DeviceClass that maps the name hands it to
// DynamicResources, which allocates devices of the class.
func TestDRAExtendedResources(t *testing.T) {
	gpuName := "example.com/gpu"
	mapped := rt.DeviceClass("gpu", classGPU)
	mapped.Spec.ExtendedResourceName = &gpuName
	cannot := unresolvable(filter.ReasonCannotAllocate)
	insufficientGPU := filter.Status{Code: filter.UnschedulableAndUnresolvable, Plugin: filter.NodeResourcesFit, Reasons: []string{"Insufficient example.com/gpu"}}
	tests := map[string]struct {
		classes []*resourceapi.DeviceClass
		pod     *v1.Pod
		want    map[string]filter.Status
	}{
		"explicit name: device plugin on n1, DRA on n2, nothing on n3": {
			classes: []*resourceapi.DeviceClass{mapped},
			pod:     rt.Pod("default", "p").ReqRes("example.com/gpu", "1").Obj(),
			want:    map[string]filter.Status{"n1": {}, "n2": {}, "n3": cannot},
		},
		"explicit name, more devices than n2 has": {
			classes: []*resourceapi.DeviceClass{mapped},
			pod:     rt.Pod("default", "p").ReqRes("example.com/gpu", "2").Obj(),
			want:    map[string]filter.Status{"n1": {}, "n2": cannot, "n3": cannot},
		},
		"implicit name of a class with a capacity selector": {
			classes: []*resourceapi.DeviceClass{rt.DeviceClass("gpu-big", classBig)},
			pod:     rt.Pod("default", "p").ReqRes("deviceclass.resource.kubernetes.io/gpu-big", "1").Obj(),
			want:    map[string]filter.Status{"n1": cannot, "n2": {}, "n3": cannot},
		},
		"no class maps the name: NodeResourcesFit alone": {
			classes: []*resourceapi.DeviceClass{rt.DeviceClass("gpu", classGPU)},
			pod:     rt.Pod("default", "p").ReqRes("example.com/gpu", "1").Obj(),
			want:    map[string]filter.Status{"n1": {}, "n2": insufficientGPU, "n3": insufficientGPU},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			snap, err := snapshot.New(extendedCluster(tc.classes...))
			if err != nil {
				t.Fatal(err)
			}
			pod, err := snap.NewPod(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			res := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1}).FilterAll()
			got := map[string]filter.Status{}
			for i, n := range snap.Nodes {
				got[n.Name] = res.Statuses[i]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDRAParallelMatchesSequential filters a GPU pod on a cluster big
// enough for parallel filtering (the per-node DynamicResources verdicts
// are computed concurrently) and checks the answer is the sequential one.
func TestDRAParallelMatchesSequential(t *testing.T) {
	var objs snapshot.Objects
	objs.DeviceClasses = []*resourceapi.DeviceClass{rt.DeviceClass("gpu", classGPU)}
	for i := range 700 {
		node := fmt.Sprintf("n%04d", i)
		objs.Nodes = append(objs.Nodes, rt.Node(node).CPU("4").Obj())
		var gpus []rt.GPU
		for d := range i % 3 {
			gpus = append(gpus, rt.GPU{Name: fmt.Sprintf("g%d", d), Model: "a100", Memory: "40Gi"})
		}
		objs.ResourceSlices = append(objs.ResourceSlices, rt.GPUSlice(node, gpus...))
	}
	objs.ResourceClaims = []*resourceapi.ResourceClaim{rt.Claim("default", "want", "gpu").Count(2).Obj()}
	snap, err := snapshot.New(objs)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := snap.NewPod(rt.Pod("default", "p").Req("1", "").Claim("want").Obj())
	if err != nil {
		t.Fatal(err)
	}
	seq, par := filterSequentialAndParallel(snap, pod)
	if diff := cmp.Diff(seq, par); diff != "" {
		t.Errorf("parallel differs (-sequential +parallel):\n%s", diff)
	}
	feasible := 0
	for _, s := range seq {
		if s.IsSuccess() {
			feasible++
		}
	}
	if feasible != 233 {
		t.Errorf("%d feasible nodes, want 233 (the nodes with two GPUs)", feasible)
	}
}

// TestDRAAllocationExtendedClaim: Reserve on a node that serves a pod's
// extended resource through DRA hands PreBind the claim to create (named by
// generateName after the pod, owned by it, annotated, with one request per
// container), its allocation on the node, and which request serves which
// container — an init container reusing the request of a later container;
// on a node whose device plugin serves the resource there is nothing to
// create.
func TestDRAAllocationExtendedClaim(t *testing.T) {
	gpuName := "example.com/gpu"
	mapped := rt.DeviceClass("gpu", classGPU)
	mapped.Spec.ExtendedResourceName = &gpuName
	snap, err := snapshot.New(extendedCluster(mapped))
	if err != nil {
		t.Fatal(err)
	}
	obj := rt.Pod("default", "train").ReqRes("example.com/gpu", "1").Obj()
	obj.UID = "uid-train"
	init := obj.Spec.Containers[0].DeepCopy()
	init.Name = "warmup"
	obj.Spec.InitContainers = []v1.Container{*init}
	pod, err := snap.NewPod(obj)
	if err != nil {
		t.Fatal(err)
	}
	c := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1})
	c.FilterAll()
	if a, err := c.DRAAllocation(snap.Node("n1")); err != nil || a != nil {
		t.Errorf("n1 (device plugin): DRAAllocation = %+v, %v; want nothing to write", a, err)
	}
	a, err := c.DRAAllocation(snap.Node("n2"))
	if err != nil || a == nil || len(a.Claims) != 1 {
		t.Fatalf("n2: DRAAllocation = %+v, %v; want the extended resource claim", a, err)
	}
	dc := a.Claims[0]
	claim := dc.Claim
	if claim.GenerateName != "train-extended-resources-" || claim.Annotations[resourceapi.ExtendedResourceClaimAnnotation] != "true" ||
		!metav1.IsControlledBy(claim, obj) {
		t.Errorf("claim metadata %+v, want generateName train-extended-resources-, the annotation and the pod as controller", claim.ObjectMeta)
	}
	var requests []string
	for _, r := range claim.Spec.Devices.Requests {
		requests = append(requests, fmt.Sprintf("%s %s x%d", r.Name, r.Exactly.DeviceClassName, r.Exactly.Count))
	}
	if diff := cmp.Diff([]string{"container-1-request-0 gpu x1"}, requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if dc.Allocation == nil || len(dc.Allocation.Devices.Results) != 1 || dc.Allocation.Devices.Results[0].Device != "g0" {
		t.Errorf("allocation %+v, want g0 on n2", dc.Allocation)
	}
	want := []v1.ContainerExtendedResourceRequest{
		{ContainerName: obj.Spec.Containers[0].Name, ResourceName: gpuName, RequestName: "container-1-request-0"},
		{ContainerName: "warmup", ResourceName: gpuName, RequestName: "container-1-request-0"},
	}
	if diff := cmp.Diff(want, dc.Extended); diff != "" {
		t.Errorf("mappings (-want +got):\n%s", diff)
	}
}

// extendedCluster is draCluster where n1 offers example.com/gpu through a
// device plugin, n2 one h100 through DRA, n3 nothing, with classes.
func extendedCluster(classes ...*resourceapi.DeviceClass) snapshot.Objects {
	objs := draCluster(nil)
	objs.Nodes[0] = rt.Node("n1").CPU("4").Alloc("example.com/gpu", "2").Obj()
	objs.ResourceSlices = []*resourceapi.ResourceSlice{rt.GPUSlice("n2", rt.GPU{Name: "g0", Model: "h100", Memory: "80Gi"})}
	objs.DeviceClasses = classes
	return objs
}

// TestDeviceScore checks DynamicResources' Score: a request with
// alternatives scores 8 on a node where the allocator takes its first
// choice, 7 where it takes its second; an exact request and an allocated
// claim alone score nothing.
func TestDeviceScore(t *testing.T) {
	running := rt.Pod("default", "running").Req("1", "").On("n1").Obj()
	tests := map[string]struct {
		claims []*resourceapi.ResourceClaim
		pod    *v1.Pod
		want   map[string]int64
	}{
		"big first: n1 has one, n2 only a small one": {
			claims: []*resourceapi.ResourceClaim{rt.Claim("default", "c", "").FirstAvailable("gpu-big", "gpu").Obj()},
			pod:    rt.Pod("default", "p").Claim("c").Obj(),
			want:   map[string]int64{"n1": 8, "n2": 7, "n3": 0},
		},
		"small first: every node takes it": {
			claims: []*resourceapi.ResourceClaim{rt.Claim("default", "c", "").FirstAvailable("gpu", "gpu-big").Obj()},
			pod:    rt.Pod("default", "p").Claim("c").Obj(),
			want:   map[string]int64{"n1": 8, "n2": 8, "n3": 0},
		},
		"two claims add up": {
			claims: []*resourceapi.ResourceClaim{
				rt.Claim("default", "a", "").FirstAvailable("gpu-big", "gpu").Obj(),
				rt.Claim("default", "b", "").FirstAvailable("gpu-big", "gpu").Obj(),
			},
			pod:  rt.Pod("default", "p").Claim("a").Claim("b").Obj(),
			want: map[string]int64{"n1": 15, "n2": 0, "n3": 0},
		},
		"an exact request": {
			claims: []*resourceapi.ResourceClaim{rt.Claim("default", "c", "gpu").Obj()},
			pod:    rt.Pod("default", "p").Claim("c").Obj(),
			want:   map[string]int64{"n1": 0, "n2": 0, "n3": 0},
		},
		"an allocated claim alone: nothing allocated in the cycle": {
			claims: []*resourceapi.ResourceClaim{rt.Claim("default", "c", "gpu").AllocatedOn("n1", "g0").ReservedFor(running).Obj()},
			pod:    rt.Pod("default", "p").Claim("c").Obj(),
			want:   map[string]int64{"n1": 0, "n2": 0, "n3": 0},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			snap, err := snapshot.New(draCluster(tc.claims, running))
			if err != nil {
				t.Fatal(err)
			}
			pod, err := snap.NewPod(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			c := filter.NewCycle(snap, pod, filter.Options{Parallelism: 1})
			c.FilterAll()
			got := map[string]int64{}
			for _, n := range snap.Nodes {
				got[n.Name] = c.DeviceScore(n)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DeviceScore (-want +got):\n%s", diff)
			}
		})
	}
}
