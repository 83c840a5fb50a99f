package snapshot

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodParts is a pod kept in two parts, as a lean load keeps the pods of a
// large cluster: Shape, which the pods of one workload share, and the few
// fields each pod has of its own. A v1.Pod takes 1,240 bytes before any of
// its contents; the parts of a pod whose shape is shared take about 200.
//
// Neither part is written once made: the pods that share a shape share its
// labels, containers and the rest of its spec.
type PodParts struct {
	// Shape is the pod with the fields below, and its annotations and
	// managed fields, zero.
	Shape *v1.Pod
	// Name, UID, ResourceVersion and CreationTimestamp are the pod's
	// metadata of the same names.
	Name              string
	UID               types.UID
	ResourceVersion   string
	CreationTimestamp metav1.Time
	// NodeName and Volumes are spec.nodeName and spec.volumes.
	NodeName string
	Volumes  []v1.Volume
	// Status is the pod's status.
	Status PartStatus
}

// PartStatus is a v1.PodStatus without the room of the fields a running
// pod rarely has: those are in Rest, nil when they are all zero.
type PartStatus struct {
	ObservedGeneration int64
	Phase              v1.PodPhase
	NominatedNodeName  string
	QOSClass           v1.PodQOSClass
	StartTime          *metav1.Time
	Conditions         []v1.PodCondition
	ContainerStatuses  []v1.ContainerStatus
	// Rest holds every other field of the status (those above zero), or
	// is nil when they are all zero.
	Rest *v1.PodStatus
}

// SplitPod moves obj's own fields (those of PodParts, its annotations and
// managed fields are dropped) out of obj, which becomes the shape.
func SplitPod(obj *v1.Pod) *PodParts {
	p := &PodParts{
		Shape: obj, Name: obj.Name, UID: obj.UID, ResourceVersion: obj.ResourceVersion,
		CreationTimestamp: obj.CreationTimestamp, NodeName: obj.Spec.NodeName, Volumes: obj.Spec.Volumes,
	}
	p.Status.Set(&obj.Status)
	obj.Name, obj.UID, obj.ResourceVersion, obj.CreationTimestamp = "", "", "", metav1.Time{}
	obj.Annotations, obj.ManagedFields = nil, nil
	obj.Spec.NodeName, obj.Spec.Volumes = "", nil
	obj.Status = v1.PodStatus{}
	return p
}

// Into writes the whole pod into dst. dst shares the parts' contents.
func (p *PodParts) Into(dst *v1.Pod) {
	*dst = *p.Shape
	p.ownInto(dst)
}

// ownInto writes the pod's own fields into dst, which holds its shape.
func (p *PodParts) ownInto(dst *v1.Pod) {
	dst.Name, dst.UID, dst.ResourceVersion, dst.CreationTimestamp = p.Name, p.UID, p.ResourceVersion, p.CreationTimestamp
	dst.Spec.NodeName, dst.Spec.Volumes = p.NodeName, p.Volumes
	p.Status.Into(&dst.Status)
}

// Pod returns the whole pod, newly made; it shares the parts' contents and
// must not be written.
func (p *PodParts) Pod() *v1.Pod {
	out := &v1.Pod{}
	p.Into(out)
	return out
}

// Set makes s st. The slices and pointers of st are shared.
func (s *PartStatus) Set(st *v1.PodStatus) {
	*s = PartStatus{
		ObservedGeneration: st.ObservedGeneration, Phase: st.Phase, NominatedNodeName: st.NominatedNodeName, QOSClass: st.QOSClass,
		StartTime: st.StartTime, Conditions: st.Conditions, ContainerStatuses: st.ContainerStatuses,
	}
	if !zeroRestStatus(st) {
		rest := new(v1.PodStatus)
		*rest = *st
		rest.ObservedGeneration, rest.Phase, rest.NominatedNodeName, rest.QOSClass = 0, "", "", ""
		rest.StartTime, rest.Conditions, rest.ContainerStatuses = nil, nil, nil
		s.Rest = rest
	}
}

// Into writes the whole status into dst.
func (s *PartStatus) Into(dst *v1.PodStatus) {
	if s.Rest != nil {
		*dst = *s.Rest
	} else {
		*dst = v1.PodStatus{}
	}
	dst.ObservedGeneration, dst.Phase, dst.NominatedNodeName, dst.QOSClass = s.ObservedGeneration, s.Phase, s.NominatedNodeName, s.QOSClass
	dst.StartTime, dst.Conditions, dst.ContainerStatuses = s.StartTime, s.Conditions, s.ContainerStatuses
}

// zeroRestStatus reports whether every field of st that PartStatus does
// not hold itself is zero (TestPartStatusFields holds the list to
// v1.PodStatus). Only nil counts as zero: an empty slice or map, where the
// input wrote [] or {}, is kept in Rest as it came.
func zeroRestStatus(st *v1.PodStatus) bool {
	return st.Message == "" && st.Reason == "" && st.HostIP == "" && st.PodIP == "" &&
		st.Resize == "" && st.HostIPs == nil && st.PodIPs == nil && st.InitContainerStatuses == nil &&
		st.EphemeralContainerStatuses == nil && st.ResourceClaimStatuses == nil &&
		st.ExtendedResourceClaimStatus == nil && st.AllocatedResources == nil && st.Resources == nil &&
		st.NodeAllocatableResourceClaimStatuses == nil && st.VolumeHealth == nil
}
