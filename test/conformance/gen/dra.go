package gen

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DRA is the profile of GPU clusters published with dynamic resource
// allocation (resource.k8s.io/v1): besides everything of Everything, most
// nodes publish a ResourceSlice of one to four GPUs with model and memory
// attributes; DeviceClasses select them with CEL, capacity comparisons
// included; running pods hold claims allocated to and reserved for them
// (some shared by two pods, some allocated but reserved for nobody); the
// preemptor asks, through a claim of its own or one made from a template,
// for a count of GPUs, a model, a memory size, all GPUs of a node, a claim
// some running pod already holds, a claim that does not exist (yet) or a
// class that does not exist.
//
// DRA is not one of Profiles(): TestDifferentialDRA runs it. Its random
// stream is seeded as if it were the sixth profile.
const DRA Profile = "dra"

// draLevel is DRA's level: above Everything, whose features it has.
const draLevel = 5

// The generated devices.
const (
	gpuDriver = "gpu.example.com"
	// draRequest is the name of every generated claim's (first) request.
	draRequest = "gpu"
)

var gpuModels = []string{"t4", "a100", "h100"}

// gpuMemory is the memory of each model's devices, in GiB.
var gpuMemory = map[string][]int{"t4": {16}, "a100": {40, 80}, "h100": {80}}

// draClasses are the generated DeviceClasses: name and CEL selector.
var draClasses = []struct{ name, expr string }{
	{"gpu", `device.driver == "gpu.example.com"`},
	{"gpu-a100", `device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "a100"`},
	{"gpu-big", `device.driver == "gpu.example.com" && device.capacity["gpu.example.com"].memory.compareTo(quantity("64Gi")) >= 0`},
	{"gpu-fast", `device.attributes["gpu.example.com"].model in ["a100", "h100"]`},
}

// draDevice is a generated device and whether a claim holds it.
type draDevice struct {
	name  string
	model string
	held  bool
	// tainted devices have a NoSchedule taint; shared ones allow multiple
	// allocations, each consuming some of their memory (freeMem GiB left).
	tainted, shared bool
	freeMem         int
}

// Device taints and capacity shares.
const (
	taintUnhealthy = "example.com/unhealthy"
	sharedMemory   = 80 // GiB of a shared device
)

// genDRA publishes devices on the nodes, gives some bound pods claims
// allocated on their node, and the preemptor its claims.
func (g *generator) genDRA() {
	for i, c := range draClasses {
		if c.name != "gpu" && !g.chance(0.85) {
			continue
		}
		dc := &resourceapi.DeviceClass{
			TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"},
			ObjectMeta: metav1.ObjectMeta{Name: c.name, UID: types.UID("uid-deviceclass-" + c.name),
				CreationTimestamp: minutesAgo(1000 - i)},
			Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: c.expr}}}},
		}
		if c.name == "gpu" && g.chance(0.3) {
			// example.com/gpu, which some nodes offer through a device
			// plugin, is backed by DRA on the others.
			name := string(gpuResource)
			dc.Spec.ExtendedResourceName = &name
		}
		g.s.DeviceClasses = append(g.s.DeviceClasses, dc)
	}
	devices := map[*nodeState][]*draDevice{}
	for _, ns := range g.nodes {
		if !g.chance(0.8) {
			continue
		}
		model := pick(g, gpuModels...)
		mem := pick(g, gpuMemory[model]...)
		slice := &resourceapi.ResourceSlice{
			TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceSlice"},
			ObjectMeta: metav1.ObjectMeta{Name: ns.name + "-gpu", UID: types.UID("uid-slice-" + ns.name)},
			Spec: resourceapi.ResourceSliceSpec{
				Driver:   gpuDriver,
				Pool:     resourceapi.ResourcePool{Name: ns.name, Generation: 1, ResourceSliceCount: 1},
				NodeName: &ns.name,
			},
		}
		for i := range g.between(1, 4) {
			if g.chance(0.2) {
				// Mixed nodes.
				model = pick(g, gpuModels...)
				mem = pick(g, gpuMemory[model]...)
			}
			d := &draDevice{name: fmt.Sprintf("gpu-%d", i), model: model}
			devices[ns] = append(devices[ns], d)
			dev := resourceapi.Device{
				Name: d.name,
				Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
					"model": {StringValue: &d.model},
					"index": {IntValue: ptrTo(int64(i))},
				},
				Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
					"memory": {Value: resource.MustParse(fmt.Sprintf("%dGi", mem))},
				},
			}
			if g.chance(0.1) {
				d.tainted = true
				dev.Taints = []resourceapi.DeviceTaint{{Key: taintUnhealthy, Value: "true", Effect: resourceapi.DeviceTaintEffectNoSchedule, TimeAdded: ptrTo(minutesAgo(30))}}
			}
			slice.Spec.Devices = append(slice.Spec.Devices, dev)
		}
		if g.chance(0.25) {
			// A device several claims share, each with some of its memory.
			d := &draDevice{name: "shared-0", model: "a100", shared: true, freeMem: sharedMemory}
			devices[ns] = append(devices[ns], d)
			slice.Spec.Devices = append(slice.Spec.Devices, resourceapi.Device{
				Name:                     d.name,
				AllowMultipleAllocations: ptrTo(true),
				Attributes:               map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"model": {StringValue: &d.model}},
				Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
					"memory": {Value: resource.MustParse(fmt.Sprintf("%dGi", sharedMemory))},
				},
			})
		}
		g.s.ResourceSlices = append(g.s.ResourceSlices, slice)
	}

	// Claims of running pods: each allocated on the pod's node and reserved
	// for it; sometimes shared with a second pod of the node, sometimes
	// left allocated after its pod is gone.
	for _, ns := range g.nodes {
		devs := devices[ns]
		if len(devs) == 0 {
			continue
		}
		for _, p := range ns.pods {
			if p.DeletionTimestamp != nil || !g.chance(0.45) {
				continue
			}
			if sh := sharedDevice(devs); sh != nil && sh.freeMem >= 20 && g.chance(0.35) {
				mem := pick(g, 20, 40)
				mem = min(mem, sh.freeMem)
				sh.freeMem -= mem
				g.s.ResourceClaims = append(g.s.ResourceClaims, g.sharedClaim(p, ns, sh, mem))
				addClaimRef(p, p.Name+"-gpu")
				continue
			}
			free := freeDevices(devs)
			if len(free) == 0 {
				break
			}
			n := 1
			if len(free) > 1 && g.chance(0.25) {
				n = 2
			}
			claim := g.allocatedClaim(p.Name+"-gpu", p.Namespace, ns, free[:n])
			claim.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{podRef(p)}
			addClaimRef(p, claim.Name)
			if g.chance(0.2) {
				for _, q := range ns.pods {
					if q != p && q.Namespace == p.Namespace && q.DeletionTimestamp == nil && len(q.Spec.ResourceClaims) == 0 {
						claim.Status.ReservedFor = append(claim.Status.ReservedFor, podRef(q))
						addClaimRef(q, claim.Name)
						break
					}
				}
			}
			g.s.ResourceClaims = append(g.s.ResourceClaims, claim)
		}
		if free := freeDevices(devs); len(free) > 0 && g.chance(0.1) {
			g.s.ResourceClaims = append(g.s.ResourceClaims, g.allocatedClaim(g.nextName("orphan-gpu"), pick(g, g.namespaces...), ns, free[:1]))
		}
	}
	g.preemptorClaims()
}

func ptrTo[T any](v T) *T { return &v }

func sharedDevice(devs []*draDevice) *draDevice {
	for _, d := range devs {
		if d.shared {
			return d
		}
	}
	return nil
}

// sharedClaim is p's claim for mem GiB of the shared device sh, allocated
// and reserved for p.
func (g *generator) sharedClaim(p *v1.Pod, ns *nodeState, sh *draDevice, mem int) *resourceapi.ResourceClaim {
	q := resource.MustParse(fmt.Sprintf("%dGi", mem))
	req := exactRequest("gpu", 1)
	req.Exactly.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{"memory": q}}
	claim := g.claim(p.Name+"-gpu", p.Namespace, req)
	share := types.UID(fmt.Sprintf("share-%s-%s", p.Namespace, p.Name))
	claim.Status.Allocation = &resourceapi.AllocationResult{
		NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{ns.name}}},
		}}},
		Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{{
			Request: draRequest, Driver: gpuDriver, Pool: ns.name, Device: sh.name, ShareID: &share,
			ConsumedCapacity: map[resourceapi.QualifiedName]resource.Quantity{"memory": q},
		}}},
	}
	claim.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{podRef(p)}
	return claim
}

func freeDevices(devs []*draDevice) []*draDevice {
	var out []*draDevice
	for _, d := range devs {
		if !d.held && !d.tainted && !d.shared {
			out = append(out, d)
		}
	}
	return out
}

func podRef(p *v1.Pod) resourceapi.ResourceClaimConsumerReference {
	return resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: p.Name, UID: p.UID}
}

func addClaimRef(p *v1.Pod, claim string) {
	p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: draRequest, ResourceClaimName: &claim})
}

// allocatedClaim is a claim for len(devs) GPUs of class gpu, allocated to
// devs on node ns; it marks them held.
func (g *generator) allocatedClaim(name, namespace string, ns *nodeState, devs []*draDevice) *resourceapi.ResourceClaim {
	claim := g.claim(name, namespace, exactRequest("gpu", int64(len(devs))))
	alloc := &resourceapi.AllocationResult{
		NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{ns.name}}},
		}}},
	}
	for _, d := range devs {
		d.held = true
		alloc.Devices.Results = append(alloc.Devices.Results, resourceapi.DeviceRequestAllocationResult{
			Request: draRequest, Driver: gpuDriver, Pool: ns.name, Device: d.name,
		})
	}
	claim.Status.Allocation = alloc
	return claim
}

func (g *generator) claim(name, namespace string, requests ...resourceapi.DeviceRequest) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-claim-" + namespace + "-" + name)},
		Spec:       resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: requests}},
	}
}

// exactRequest asks for count devices of class, with the API server's
// defaults spelled out.
func exactRequest(class string, count int64) resourceapi.DeviceRequest {
	return resourceapi.DeviceRequest{Name: draRequest, Exactly: &resourceapi.ExactDeviceRequest{
		DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count,
	}}
}

// preemptorClaims gives the preemptor its claims (most of the time).
func (g *generator) preemptorClaims() {
	p := g.s.Preemptor
	if !g.chance(0.85) {
		return
	}
	switch x := g.r.Float64(); {
	case x < 0.06:
		// A claim that does not exist.
		addClaimRef(p, p.Name+"-missing")
		return
	case x < 0.12 && len(g.s.ResourceClaims) > 0:
		// A claim some running pod holds (shared, on its node only).
		c := pick(g, g.s.ResourceClaims...)
		if c.Namespace == p.Namespace {
			addClaimRef(p, c.Name)
			return
		}
	case x < 0.2:
		// Devices asked for as an extended resource: the class's implicit
		// name (or example.com/gpu, which the gpu class may back).
		name := v1.ResourceName(resourceapi.ResourceDeviceClassPrefix + pick(g, "gpu", "gpu-fast", "gpu-big"))
		if g.chance(0.3) {
			name = gpuResource
		}
		c := &p.Spec.Containers[0]
		if c.Resources.Requests == nil {
			c.Resources.Requests = v1.ResourceList{}
		}
		q := resource.MustParse(fmt.Sprint(g.between(1, 2)))
		c.Resources.Requests[name] = q
		if c.Resources.Limits == nil {
			c.Resources.Limits = v1.ResourceList{}
		}
		// Extended resources must have limits equal to requests.
		c.Resources.Limits[name] = q
		if !g.chance(0.4) {
			return
		}
	case x < 0.23:
		// Made from a template, but not created yet.
		tmpl := p.Name + "-tmpl"
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: draRequest, ResourceClaimTemplateName: &tmpl})
		return
	}
	var req resourceapi.DeviceRequest
	switch x := g.r.Float64(); {
	case x < 0.35:
		req = exactRequest("gpu", int64(g.between(1, 3)))
	case x < 0.5:
		req = exactRequest(pick(g, "gpu-a100", "gpu-big", "gpu-fast"), int64(g.between(1, 2)))
	case x < 0.65:
		req = exactRequest("gpu", int64(g.between(1, 2)))
		req.Exactly.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
			Expression: fmt.Sprintf(`device.attributes["gpu.example.com"].model == %q`, pick(g, gpuModels...)),
		}}}
	case x < 0.75:
		req = exactRequest("gpu", 1)
		req.Exactly.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
			Expression: fmt.Sprintf(`device.capacity["gpu.example.com"].memory.compareTo(quantity("%dGi")) >= 0`, pick(g, 16, 40, 80)),
		}}}
	case x < 0.87:
		req = resourceapi.DeviceRequest{Name: draRequest, Exactly: &resourceapi.ExactDeviceRequest{
			DeviceClassName: pick(g, "gpu", "gpu-fast"), AllocationMode: resourceapi.DeviceAllocationModeAll,
		}}
	case x < 0.95:
		// A prioritized list: a big GPU, else two small ones.
		req = resourceapi.DeviceRequest{Name: draRequest, FirstAvailable: []resourceapi.DeviceSubRequest{
			{Name: "big", DeviceClassName: "gpu-big", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
			{Name: "small", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 2},
		}}
	default:
		req = exactRequest("no-such-class", 1)
	}
	if e := req.Exactly; e != nil && e.AllocationMode == resourceapi.DeviceAllocationModeExactCount {
		if g.chance(0.3) {
			// Some memory of a device, which a shared device can give.
			e.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{
				"memory": resource.MustParse(fmt.Sprintf("%dGi", pick(g, 16, 20, 40, 64))),
			}}
		}
		if g.chance(0.25) {
			e.Tolerations = []resourceapi.DeviceToleration{{Key: taintUnhealthy, Operator: resourceapi.DeviceTolerationOpExists, Effect: resourceapi.DeviceTaintEffectNoSchedule}}
		}
	}
	claim := g.claim(p.Name+"-gpu", p.Namespace, req)
	if g.chance(0.3) {
		// Made from a template by the resource-claim controller: owned by
		// the pod and named in its status.
		tmpl := p.Name + "-tmpl"
		claim.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID, Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}}
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: draRequest, ResourceClaimTemplateName: &tmpl})
		p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses, v1.PodResourceClaimStatus{Name: draRequest, ResourceClaimName: &claim.Name})
	} else {
		addClaimRef(p, claim.Name)
	}
	g.s.ResourceClaims = append(g.s.ResourceClaims, claim)
}
