package reprievetest

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// GPUDriver is the driver of the devices GPUSlice publishes; its name is
// also the domain of their attributes and capacities.
const GPUDriver = "gpu.example.com"

// GPU is a device of a GPUSlice: a name, a "model" attribute and a "memory"
// capacity.
type GPU struct {
	Name, Model, Memory string
}

// GPUSlice is a ResourceSlice of driver GPUDriver on node, in a pool named
// after the node, with the given devices.
func GPUSlice(node string, gpus ...GPU) *resourceapi.ResourceSlice {
	rs := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-gpu", UID: types.UID("uid-slice-" + node)},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   GPUDriver,
			Pool:     resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			NodeName: &node,
		},
	}
	for _, g := range gpus {
		model := g.Model
		rs.Spec.Devices = append(rs.Spec.Devices, resourceapi.Device{
			Name:       g.Name,
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"model": {StringValue: &model}},
			Capacity:   map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: resource.MustParse(g.Memory)}},
		})
	}
	return rs
}

// DeviceClass is a DeviceClass with one CEL selector.
func DeviceClass(name, expr string) *resourceapi.DeviceClass {
	return &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-deviceclass-" + name)},
		Spec:       resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: expr}}}},
	}
}

// ClaimBuilder builds a resource.k8s.io/v1 ResourceClaim.
type ClaimBuilder struct{ c *resourceapi.ResourceClaim }

// Claim starts a claim with one request "gpu" for one device of class
// (defaults spelled out, as the API server stores it).
func Claim(ns, name, class string) *ClaimBuilder {
	return &ClaimBuilder{c: &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-claim-" + ns + "-" + name)},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: "gpu",
			Exactly: &resourceapi.ExactDeviceRequest{
				DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1,
			},
		}}}},
	}}
}

// Count asks for n devices.
func (b *ClaimBuilder) Count(n int64) *ClaimBuilder {
	b.c.Spec.Devices.Requests[0].Exactly.Count = n
	return b
}

// All asks for all matching devices of a node.
func (b *ClaimBuilder) All() *ClaimBuilder {
	e := b.c.Spec.Devices.Requests[0].Exactly
	e.AllocationMode, e.Count = resourceapi.DeviceAllocationModeAll, 0
	return b
}

// FirstAvailable turns the request into a list of alternatives, one
// device of each class in order of preference, the sub-requests named
// after their classes.
func (b *ClaimBuilder) FirstAvailable(classes ...string) *ClaimBuilder {
	r := &b.c.Spec.Devices.Requests[0]
	r.Exactly = nil
	for _, class := range classes {
		r.FirstAvailable = append(r.FirstAvailable, resourceapi.DeviceSubRequest{
			Name: class, DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1,
		})
	}
	return b
}

// Selector adds a CEL selector to the request.
func (b *ClaimBuilder) Selector(expr string) *ClaimBuilder {
	e := b.c.Spec.Devices.Requests[0].Exactly
	e.Selectors = append(e.Selectors, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: expr}})
	return b
}

// AllocatedOn records an allocation of the named devices of GPUSlice(node),
// available on node only.
func (b *ClaimBuilder) AllocatedOn(node string, devices ...string) *ClaimBuilder {
	a := &resourceapi.AllocationResult{NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{node}}},
	}}}}
	for _, d := range devices {
		a.Devices.Results = append(a.Devices.Results, resourceapi.DeviceRequestAllocationResult{Request: "gpu", Driver: GPUDriver, Pool: node, Device: d})
	}
	b.c.Status.Allocation = a
	return b
}

// ReservedFor reserves the claim for pods (built with Pod, whose UIDs it
// knows from their namespace and name).
func (b *ClaimBuilder) ReservedFor(pods ...*v1.Pod) *ClaimBuilder {
	for _, p := range pods {
		b.c.Status.ReservedFor = append(b.c.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: p.Name, UID: p.UID})
	}
	return b
}

// OwnedBy makes pod the claim's controller, as for a claim made from a
// ResourceClaimTemplate.
func (b *ClaimBuilder) OwnedBy(pod *v1.Pod) *ClaimBuilder {
	yes := true
	b.c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: &yes}}
	return b
}

// Obj returns the claim.
func (b *ClaimBuilder) Obj() *resourceapi.ResourceClaim { return b.c }

// Claim adds spec.resourceClaims entry "claim-N" naming an existing claim.
func (b *PodBuilder) Claim(name string) *PodBuilder {
	b.p.Spec.ResourceClaims = append(b.p.Spec.ResourceClaims, v1.PodResourceClaim{
		Name: fmt.Sprintf("claim-%d", len(b.p.Spec.ResourceClaims)), ResourceClaimName: &name,
	})
	return b
}

// ClaimTemplate adds spec.resourceClaims entry "claim-N" made from template;
// generated, when not empty, is the name of the claim the resource-claim
// controller made for it (in status.resourceClaimStatuses).
func (b *PodBuilder) ClaimTemplate(template, generated string) *PodBuilder {
	name := fmt.Sprintf("claim-%d", len(b.p.Spec.ResourceClaims))
	b.p.Spec.ResourceClaims = append(b.p.Spec.ResourceClaims, v1.PodResourceClaim{Name: name, ResourceClaimTemplateName: &template})
	if generated != "" {
		b.p.Status.ResourceClaimStatuses = append(b.p.Status.ResourceClaimStatuses, v1.PodResourceClaimStatus{Name: name, ResourceClaimName: &generated})
	}
	return b
}
