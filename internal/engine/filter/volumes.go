package filter

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// volumeState is what the PreFilters of the four volume plugins computed
// for the incoming pod (VolumeRestrictions, NodeVolumeLimits,
// VolumeBinding, VolumeZone). It is nil on a Cycle when the pod has no
// volume any of them looks at.
type volumeState struct {
	// restrictions is set when VolumeRestrictions was not skipped:
	// inlineDisks are the pod's GCE PD, AWS EBS, iSCSI and RBD volumes,
	// rwopClaims its ReadWriteOncePod claims (by name) and rwopInUse how
	// many of them pods on nodes use.
	restrictions bool
	inlineDisks  []*v1.Volume
	rwopClaims   map[string]bool
	rwopInUse    int

	// limits is set when NodeVolumeLimits was not skipped; newVolumes are
	// then the pod's attachable volumes on nodes without (0) and with (1)
	// a CSINode, the only thing of the node they depend on.
	limits     bool
	newVolumes [2]podVolumes
	// podVolumes caches, by *snapshot.Pod, the attachable volumes of the
	// snapshot's pods on nodes without (0) and with (1) a CSINode.
	podVolumes [2]sync.Map

	// binding holds VolumeBinding's PreFilter state when it was not skipped.
	binding *bindingState

	// zones are VolumeZone's PV topologies; nil when it was skipped.
	zones []pvTopology
}

// volumeOverlay is the volume plugins' part of a State: the change of
// VolumeRestrictions' ReadWriteOncePod conflict count.
type volumeOverlay struct {
	rwop int
}

// nodeVolumes is the volume plugins' part of a NodeView: what they read of
// the node's pods, kept up to date as pods are added and removed.
type nodeVolumes struct {
	csiNode *storagev1.CSINode
	// diskConflicts counts the node's pods whose inline disks conflict
	// with the incoming pod's.
	diskConflicts int

	// NodeVolumeLimits (nodevolumelimits.go): the pod's own attachable
	// volumes, and, when the node has limits, what is attached.
	limits *nodeLimits

	// static is VolumeBinding's and VolumeZone's verdict on the node,
	// which the node's pods do not change; staticDone says it is set.
	static     Status
	staticDone bool
}

// notFound is the error a lister returns for a missing object.
func notFound(resource, name string) error {
	return errors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}

func notFoundStorage(resource, name string) error {
	return errors.NewNotFound(schema.GroupResource{Group: "storage.k8s.io", Resource: resource}, name)
}

// newVolumeState runs the volume plugins' PreFilters in upstream's order.
// It returns nil state when every one of them skips.
func newVolumeState(snap *snapshot.Snapshot, pod *v1.Pod) (*volumeState, Status) {
	if len(pod.Spec.Volumes) == 0 {
		return nil, Status{}
	}
	vs := &volumeState{}
	if s := vs.preFilterRestrictions(snap, pod); !s.IsSuccess() {
		return nil, s
	}
	if vs.limits = limitsPreFilter(pod); vs.limits {
		vs.newVolumes[0] = newPodVolumes(snap, pod, nil)
		vs.newVolumes[1] = newPodVolumes(snap, pod, &storagev1.CSINode{})
	}
	var s Status
	if vs.binding, s = bindingPreFilter(snap, pod); !s.IsSuccess() {
		return nil, s
	}
	if vs.zones, s = zonePreFilter(snap, pod); !s.IsSuccess() {
		return nil, s
	}
	if !vs.restrictions && !vs.limits && vs.binding == nil && vs.zones == nil {
		return nil, Status{}
	}
	return vs, Status{}
}

// newNodeVolumes prepares the volume part of a view of node n.
func (c *Cycle) newNodeVolumes(n *snapshot.Node) *nodeVolumes {
	vs := c.vol
	nv := &nodeVolumes{csiNode: c.snap.CSINode(n.Name)}
	if vs.restrictions && len(vs.inlineDisks) > 0 {
		for _, p := range n.Pods {
			if vs.diskConflict(p.Volumes()) {
				nv.diskConflicts++
			}
		}
	}
	if vs.limits {
		nv.limits = c.newNodeLimits(nv.csiNode, n)
	}
	return nv
}

// updateVolumes records that p was added to (sign 1) or removed from
// (sign -1) node, in the overlays.
func (c *Cycle) updateVolumes(st *State, nv *NodeView, p *snapshot.Pod, node *snapshot.Node, sign int) {
	vs := c.vol
	if vs.restrictions && len(vs.rwopClaims) > 0 {
		st.volumes.rwop += sign * vs.rwopRefs(p.Volumes())
	}
	if nv == nil || nv.Node != node || nv.vol == nil {
		return
	}
	if len(vs.inlineDisks) > 0 && vs.diskConflict(p.Volumes()) {
		nv.vol.diskConflicts += sign
	}
	if nv.vol.limits != nil && nv.vol.limits.counting {
		c.updateLimits(nv.vol.limits, p, sign)
	}
}

// filterVolumes runs VolumeRestrictions, NodeVolumeLimits, VolumeBinding
// and VolumeZone on nv, in this order.
func (c *Cycle) filterVolumes(st *State, nv *NodeView) Status {
	vs := c.vol
	if nv.vol == nil {
		// A view not made by NodeViewOf: the node's pods as they are.
		nv.vol = c.newNodeVolumes(nv.Node)
	}
	if vs.restrictions {
		if nv.vol.diskConflicts > 0 {
			return statusDiskConflict
		}
		if vs.rwopInUse+st.volumes.rwop > 0 {
			return statusRWOPConflict
		}
	}
	if vs.limits {
		if s := c.filterLimits(nv); !s.IsSuccess() {
			return s
		}
	}
	if !nv.vol.staticDone {
		nv.vol.static = c.filterBindingAndZone(nv.Node)
		nv.vol.staticDone = true
	}
	return nv.vol.static
}

func (c *Cycle) filterBindingAndZone(n *snapshot.Node) Status {
	vs := c.vol
	if vs.binding != nil {
		if s := vs.binding.filter(c.snap, c.obj, n.Obj); !s.IsSuccess() {
			return s
		}
	}
	if vs.zones != nil {
		return filterZone(vs.zones, n.Obj)
	}
	return Status{}
}

// errorStatus is a Filter plugin's error, as the framework wraps it.
func errorStatus(plugin string, err error) Status {
	return reject(Error, plugin, fmt.Sprintf("running %q filter plugin: %v", plugin, err))
}

func preFilterError(plugin string, err error) Status {
	return reject(Error, plugin, fmt.Sprintf("running PreFilter plugin %q: %v", plugin, err))
}
