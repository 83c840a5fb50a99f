package filter

import (
	"context"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// DRA preemption (the DRAPreemption gate, beyond upstream v1.37): in a dry
// run, a claim whose every consumer (status.reservedFor) has been removed
// releases its devices, so that a GPU pod can preempt lower-priority GPU
// pods. A claim is released whole or not at all: shared with a pod that
// stays, it keeps its devices. Claims reserved for nobody, and the incoming
// pod's own claims, are never released. On the unchanged node the plugin
// answers Unschedulable instead of UnschedulableAndUnresolvable when
// releasing the claims of the node's lower-priority pods would let the
// allocation succeed, so that the node is dry-run.

// draPreemption is what the gate needs beyond the v1.37 state.
type draPreemption struct {
	snap     *snapshot.Snapshot
	celCache *cel.Cache
	priority int32
	// claims are the releasable claims; consumers[i] is the number of
	// pods claims[i] is reserved for.
	claims    []*resourceapi.ResourceClaim
	consumers []int
	// byPod lists, by pod UID, the releasable claims reserved for it.
	byPod map[types.UID][]int
	// nodeSlices are the slices of each node; shared are those of no one
	// node (all nodes, or a node selector). An allocation on a node only
	// needs these two.
	nodeSlices map[string][]*resourceapi.ResourceSlice
	shared     []*resourceapi.ResourceSlice
	// allocated are the snapshot's allocated claims, by the pools of their
	// devices (a claim under each of its pools).
	allocated map[string][]*resourceapi.ResourceClaim
}

// draOverlay is the dry-run state of DRA preemption: how many consumers of
// each releasable claim were removed, and how many claims are released.
type draOverlay struct {
	removed  map[int]int
	released int
}

func newDRAPreemption(snap *snapshot.Snapshot, d *draState, priority int32, celCache *cel.Cache) *draPreemption {
	own := map[*resourceapi.ResourceClaim]bool{}
	for _, c := range d.claims {
		own[c] = true
	}
	x := &draPreemption{snap: snap, celCache: celCache, priority: priority, byPod: map[types.UID][]int{},
		nodeSlices: map[string][]*resourceapi.ResourceSlice{}, allocated: map[string][]*resourceapi.ResourceClaim{}}
	for _, rs := range snap.ResourceSlices() {
		if rs.Spec.NodeName != nil && *rs.Spec.NodeName != "" {
			x.nodeSlices[*rs.Spec.NodeName] = append(x.nodeSlices[*rs.Spec.NodeName], rs)
		} else {
			x.shared = append(x.shared, rs)
		}
	}
	for _, c := range snap.ResourceClaims() {
		if c.Status.Allocation != nil {
			pools := map[string]bool{}
			for _, r := range c.Status.Allocation.Devices.Results {
				if !pools[r.Pool] {
					pools[r.Pool] = true
					x.allocated[r.Pool] = append(x.allocated[r.Pool], c)
				}
			}
		}
		if c.Status.Allocation == nil || len(c.Status.ReservedFor) == 0 || own[c] {
			continue
		}
		i := len(x.claims)
		x.claims = append(x.claims, c)
		x.consumers = append(x.consumers, len(c.Status.ReservedFor))
		for _, ref := range c.Status.ReservedFor {
			x.byPod[ref.UID] = append(x.byPod[ref.UID], i)
		}
	}
	return x
}

// update records that p was added (sign 1) or removed (sign -1).
func (x *draPreemption) update(st *draOverlay, p *snapshot.Pod, sign int) {
	idx := x.byPod[p.UID()]
	if len(idx) == 0 {
		return
	}
	if st.removed == nil {
		st.removed = map[int]int{}
	}
	for _, i := range idx {
		before := st.removed[i] == x.consumers[i]
		st.removed[i] -= sign
		after := st.removed[i] == x.consumers[i]
		switch {
		case after && !before:
			st.released++
		case before && !after:
			st.released--
		}
	}
}

// allocatorWithout is an allocator for node over the devices held by claims
// other than the released ones.
func (x *draPreemption) allocatorWithout(node string, released func(i int) bool) (structured.Allocator, error) {
	skip := map[*resourceapi.ResourceClaim]bool{}
	for i, c := range x.claims {
		if released(i) {
			skip[c] = true
		}
	}
	// Only the devices of the slices the node can use matter: the claims
	// holding devices of their pools, each once.
	sl := slices.Concat(x.nodeSlices[node], x.shared)
	var claims []*resourceapi.ResourceClaim
	seen := map[*resourceapi.ResourceClaim]bool{}
	for _, rs := range sl {
		for _, c := range x.allocated[rs.Spec.Pool.Name] {
			if !seen[c] {
				seen[c] = true
				claims = append(claims, c)
			}
		}
	}
	return structured.NewAllocator(context.Background(), draFeatures, allocatedState(claims, func(c *resourceapi.ResourceClaim) bool { return skip[c] }),
		classLister{x.snap}, sl, x.celCache)
}

// filterReleased is the Filter on node with the overlay's claims released.
func (d *draState) filterReleased(pod *v1.Pod, node *v1.Node, st *draOverlay) Status {
	alloc, err := d.preempt.allocatorWithout(node.Name, func(i int) bool { return st.removed[i] == d.preempt.consumers[i] })
	if err != nil {
		return draError(err.Error())
	}
	return d.decideWith(pod, node, alloc)
}

// resolvable reports whether releasing the claims whose consumers all are
// lower-priority pods on node would let the allocation succeed there.
func (d *draState) resolvable(pod *v1.Pod, node *v1.Node) bool {
	x := d.preempt
	any := false
	releasable := func(i int) bool {
		for _, ref := range x.claims[i].Status.ReservedFor {
			p := x.snap.Pod(x.claims[i].Namespace + "/" + ref.Name)
			if p == nil || p.UID() != ref.UID || p.NodeName() != node.Name || p.Priority >= x.priority {
				return false
			}
		}
		any = true
		return true
	}
	alloc, err := x.allocatorWithout(node.Name, releasable)
	if err != nil || !any {
		return false
	}
	return d.decideWith(pod, node, alloc).IsSuccess()
}

// DeviceHolds says, for each of victims, which of its claims the dry run
// releases under the DRAPreemption gate once all of victims are gone: the
// claims whose every consumer is among them (not the cycle's pod's own).
// Victims releasing none are absent; it is nil without the gate or when
// the pod needs no devices.
func (c *Cycle) DeviceHolds(victims []*snapshot.Pod) map[*snapshot.Pod][]*resourceapi.ResourceClaim {
	if c.dra == nil || c.dra.preempt == nil {
		return nil
	}
	x := c.dra.preempt
	var st draOverlay
	for _, v := range victims {
		x.update(&st, v, -1)
	}
	var out map[*snapshot.Pod][]*resourceapi.ResourceClaim
	for _, v := range victims {
		for _, i := range x.byPod[v.UID()] {
			if st.removed[i] == x.consumers[i] {
				if out == nil {
					out = map[*snapshot.Pod][]*resourceapi.ResourceClaim{}
				}
				out[v] = append(out[v], x.claims[i])
			}
		}
	}
	return out
}
