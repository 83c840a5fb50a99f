package gen

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Resource units: every generated quantity is a multiple of its unit, so that
// exact fits are common.
const (
	cpuUnit = 100       // millicores
	memUnit = 128 << 20 // bytes
	ephUnit = 512 << 20 // bytes

	// gpuResource is the extended resource some nodes offer.
	gpuResource v1.ResourceName = "example.com/gpu"
)

// res is an amount of the resources the generator uses.
type res struct {
	cpu int64 // millicores
	mem int64 // bytes
	eph int64 // bytes of ephemeral-storage
	gpu int64 // devices of gpuResource
}

func (a res) add(b res) res { return res{a.cpu + b.cpu, a.mem + b.mem, a.eph + b.eph, a.gpu + b.gpu} }
func (a res) sub(b res) res { return res{a.cpu - b.cpu, a.mem - b.mem, a.eph - b.eph, a.gpu - b.gpu} }
func (a res) max(b res) res {
	return res{max(a.cpu, b.cpu), max(a.mem, b.mem), max(a.eph, b.eph), max(a.gpu, b.gpu)}
}

// fitsIn reports whether every amount of a is at most the one of b.
func (a res) fitsIn(b res) bool {
	return a.cpu <= b.cpu && a.mem <= b.mem && a.eph <= b.eph && a.gpu <= b.gpu
}

func (a res) isZero() bool { return a == res{} }

// list returns a as a ResourceList without zero entries; nil when a is zero,
// so that objects survive a YAML round trip unchanged.
func (a res) list() v1.ResourceList {
	if a.isZero() {
		return nil
	}
	l := v1.ResourceList{}
	if a.cpu > 0 {
		l[v1.ResourceCPU] = *resource.NewMilliQuantity(a.cpu, resource.DecimalSI)
	}
	if a.mem > 0 {
		l[v1.ResourceMemory] = *resource.NewQuantity(a.mem, resource.BinarySI)
	}
	if a.eph > 0 {
		l[v1.ResourceEphemeralStorage] = *resource.NewQuantity(a.eph, resource.BinarySI)
	}
	if a.gpu > 0 {
		l[gpuResource] = *resource.NewQuantity(a.gpu, resource.DecimalSI)
	}
	return l
}

// fromList reads the resources the generator uses from l.
func fromList(l v1.ResourceList) res {
	var r res
	if q, ok := l[v1.ResourceCPU]; ok {
		r.cpu = q.MilliValue()
	}
	if q, ok := l[v1.ResourceMemory]; ok {
		r.mem = q.Value()
	}
	if q, ok := l[v1.ResourceEphemeralStorage]; ok {
		r.eph = q.Value()
	}
	if q, ok := l[gpuResource]; ok {
		r.gpu = q.Value()
	}
	return r
}

// isSidecar reports whether c is a restartable init container.
func isSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// podRequests is the pod's effective request the way the scheduler computes
// it (component-helpers resource.PodRequests): containers and sidecars add
// up; a regular init container needs its own request plus the sidecars
// started before it; the pod needs the larger of the two; pod-level requests
// replace the container sums for cpu and memory; overhead is added last.
func podRequests(p *v1.Pod) res {
	var sum res
	for i := range p.Spec.Containers {
		sum = sum.add(fromList(p.Spec.Containers[i].Resources.Requests))
	}
	var sidecars, initMax res
	for i := range p.Spec.InitContainers {
		c := &p.Spec.InitContainers[i]
		r := fromList(c.Resources.Requests)
		if isSidecar(c) {
			sum = sum.add(r)
			sidecars = sidecars.add(r)
			initMax = initMax.max(sidecars)
		} else {
			initMax = initMax.max(r.add(sidecars))
		}
	}
	sum = sum.max(initMax)
	if p.Spec.Resources != nil {
		pl := p.Spec.Resources.Requests
		if q, ok := pl[v1.ResourceCPU]; ok {
			sum.cpu = q.MilliValue()
		}
		if q, ok := pl[v1.ResourceMemory]; ok {
			sum.mem = q.Value()
		}
	}
	return sum.add(fromList(p.Spec.Overhead))
}

// qosClass is the QoS class the API server records in status.qosClass: a
// simplified pkg/apis/core/helper/qos.GetPodQOS for the shapes the generator
// produces.
func qosClass(p *v1.Pod) v1.PodQOSClass {
	set, guaranteed := false, true
	check := func(c *v1.Container) {
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[name]
			lim, hasLim := c.Resources.Limits[name]
			if hasReq || hasLim {
				set = true
			}
			if !hasLim || (hasReq && req.Cmp(lim) != 0) {
				guaranteed = false
			}
		}
	}
	for i := range p.Spec.InitContainers {
		check(&p.Spec.InitContainers[i])
	}
	for i := range p.Spec.Containers {
		check(&p.Spec.Containers[i])
	}
	if p.Spec.Resources != nil && len(p.Spec.Resources.Requests) > 0 {
		set, guaranteed = true, false
	}
	switch {
	case !set:
		return v1.PodQOSBestEffort
	case guaranteed:
		return v1.PodQOSGuaranteed
	default:
		return v1.PodQOSBurstable
	}
}

// nodeAllocatable reads the node's allocatable resources and pods count.
func nodeAllocatable(n *v1.Node) (res, int64) {
	pods := n.Status.Allocatable[v1.ResourcePods]
	return fromList(n.Status.Allocatable), pods.Value()
}
