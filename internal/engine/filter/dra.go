package filter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/nodedeclaredfeatures/features/draoptionalnodeoperations"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Upstream's reasons of DynamicResources that do not come from the allocator.
const (
	ReasonClaimNotAvailable = "resourceclaim not available on the node"
	ReasonCannotAllocate    = "cannot allocate all claims"
)

// draFeatures are the allocator features kube-scheduler v1.37.2 enables by
// default (its feature gates as the plugin maps them).
var draFeatures = structured.Features{
	AdminAccess:            true,
	ConsumableCapacity:     true,
	DeviceBindingAndStatus: true,
	DeviceTaints:           true,
	PartitionableDevices:   true,
	PrioritizedList:        true,
}

// newCELCache returns the cache of compiled CEL expressions upstream keeps
// (the 10 most recent), with the CEL features of its default gates.
func newCELCache() *cel.Cache {
	return cel.NewCache(10, cel.Features{EnableConsumableCapacity: draFeatures.ConsumableCapacity})
}

// draState is the PreFilter state of DynamicResources for the incoming pod:
// its claims, where the allocated ones are available, and an allocator for
// the others over the devices no claim holds. Its verdict on a node does not
// depend on the node's pods (the plugin has no PreFilterExtensions in
// v1.37, so removing pods never frees devices), so it is computed once per
// node and cached.
type draState struct {
	claims []*resourceapi.ResourceClaim
	// numUser is the number of the pod's own claims: claims[numUser], when
	// present, is the extended resource claim (ext.claim).
	numUser int
	ext     *draExtended
	// availableOn is, per claim, the node selector of its allocation (nil
	// when it is not allocated or has none).
	availableOn []*nodeaffinity.NodeSelector
	// toAllocate are the claims without an allocation, in pod order.
	toAllocate []*resourceapi.ResourceClaim
	allocator  structured.Allocator
	// verdicts caches the verdict per node index.
	verdicts []atomic.Pointer[draVerdict]
	// preempt is set with the DRAPreemption gate (dra_preemption.go).
	preempt *draPreemption
}

// newDRAState is the PreFilter of DynamicResources. It returns nil and
// Success when the plugin has nothing to do for the pod (Skip).
func newDRAState(snap *snapshot.Snapshot, pod *snapshot.Pod, obj *v1.Pod, request *snapshot.Resources, celCache *cel.Cache, draPreemption bool) (*draState, Status) {
	d, s := newDRAState137(snap, obj, request, celCache)
	if d != nil && draPreemption && d.allocator != nil {
		d.preempt = newDRAPreemption(snap, d, pod.Priority, celCache)
	}
	return d, s
}

// newDRAState137 is newDRAState as kube-scheduler v1.37 has it.
func newDRAState137(snap *snapshot.Snapshot, pod *v1.Pod, request *snapshot.Resources, celCache *cel.Cache) (*draState, Status) {
	ext := newDRAExtended(snap, pod, request)
	if len(pod.Spec.ResourceClaims) == 0 && ext == nil {
		return nil, Status{}
	}
	d := &draState{ext: ext}
	for i := range pod.Spec.ResourceClaims {
		podClaim := &pod.Spec.ResourceClaims[i]
		name, mustCheckOwner, err := resourceclaim.Name(pod, podClaim)
		if err != nil {
			return nil, draUnresolvable(err.Error())
		}
		if name == nil {
			// No claim was generated for the template; nothing to do.
			continue
		}
		claim := snap.ResourceClaim(pod.Namespace, *name)
		if claim == nil {
			// The scheduler's assume cache's words.
			return nil, draUnresolvable(fmt.Sprintf("could not find ResourceClaim %q", pod.Namespace+"/"+*name))
		}
		if claim.DeletionTimestamp != nil {
			return nil, draUnresolvable(fmt.Sprintf("resourceclaim %q is being deleted", claim.Name))
		}
		if mustCheckOwner {
			if err := resourceclaim.IsForPod(pod, claim, false); err != nil {
				return nil, draUnresolvable(err.Error())
			}
		}
		d.claims = append(d.claims, claim)
	}
	d.numUser = len(d.claims)
	if ext != nil {
		d.claims = append(d.claims, ext.claim)
	}
	if len(d.claims) == 0 {
		return nil, Status{}
	}

	d.availableOn = make([]*nodeaffinity.NodeSelector, len(d.claims))
	for i, claim := range d.claims {
		// resourceclaim.CanBeReserved puts no limit on sharing in v1.37:
		// a claim allocated and reserved for other pods can be shared.
		if a := claim.Status.Allocation; a != nil {
			if a.NodeSelector != nil {
				sel, err := nodeaffinity.NewNodeSelector(a.NodeSelector)
				if err != nil {
					return nil, draError(err.Error())
				}
				d.availableOn[i] = sel
			}
			continue
		}
		d.toAllocate = append(d.toAllocate, claim)
		if i == d.numUser {
			// The extended resource claim gets its requests per node.
			continue
		}
		for _, r := range claim.Spec.Devices.Requests {
			switch {
			case r.Exactly != nil:
				if s := validateDeviceClass(snap, r.Exactly.DeviceClassName, r.Name); !s.IsSuccess() {
					return nil, s
				}
			case len(r.FirstAvailable) > 0:
				for _, sub := range r.FirstAvailable {
					if s := validateDeviceClass(snap, sub.DeviceClassName, r.Name+"/"+sub.Name); !s.IsSuccess() {
						return nil, s
					}
				}
			default:
				return nil, draUnresolvable(fmt.Sprintf("resource claim %s/%s, request %s: unknown request type", claim.Namespace, claim.Name, r.Name))
			}
		}
	}
	if len(d.toAllocate) > 0 {
		alloc, err := structured.NewAllocator(context.Background(), draFeatures, allocatedState(snap.ResourceClaims(), nil),
			classLister{snap}, snap.ResourceSlices(), celCache)
		if err != nil {
			return nil, draError(err.Error())
		}
		d.allocator = alloc
	}
	d.verdicts = make([]atomic.Pointer[draVerdict], len(snap.Nodes))
	return d, Status{}
}

func validateDeviceClass(snap *snapshot.Snapshot, className, request string) Status {
	if className == "" {
		return draError(fmt.Sprintf("request %s: unsupported request type", request))
	}
	if snap.DeviceClass(className) == nil {
		return draUnresolvable(fmt.Sprintf("request %s: device class %s does not exist", request, className))
	}
	return Status{}
}

// allocatedState is what the allocated claims (but skipped ones) hold:
// devices allocated whole, shares of shareable devices and the capacity
// those shares consume. Devices allocated with admin access are not held.
func allocatedState(claims []*resourceapi.ResourceClaim, skip func(*resourceapi.ResourceClaim) bool) structured.AllocatedState {
	st := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, claim := range claims {
		if claim.Status.Allocation == nil || skip != nil && skip(claim) {
			continue
		}
		for _, r := range claim.Status.Allocation.Devices.Results {
			if r.AdminAccess != nil && *r.AdminAccess {
				continue
			}
			id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
			if draFeatures.ConsumableCapacity && r.ShareID != nil {
				st.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
				if r.ConsumedCapacity != nil {
					st.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
				}
				continue
			}
			st.AllocatedDevices.Insert(id)
		}
	}
	return st
}

// classLister serves the snapshot's DeviceClasses to the allocator.
type classLister struct{ snap *snapshot.Snapshot }

func (l classLister) List() ([]*resourceapi.DeviceClass, error) { return l.snap.DeviceClasses(), nil }

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	if dc := l.snap.DeviceClass(name); dc != nil {
		return dc, nil
	}
	return nil, fmt.Errorf("deviceclass %q not found", name)
}

// draVerdict is DynamicResources' Filter on one node and, where it
// accepts the node, its Score there (deviceScore).
type draVerdict struct {
	status Status
	score  int64
}

// filter is the Filter of DynamicResources for pod on node n; st is the
// dry-run overlay of DRA preemption (only read with the gate).
func (d *draState) filter(pod *v1.Pod, n *snapshot.Node, st *draOverlay) Status {
	if d.preempt != nil && st.released > 0 {
		return d.filterReleased(pod, n.Obj, st)
	}
	return d.verdict(pod, n).status
}

// verdict is the Filter (and Score) on n without DRA preemption's
// releases, computed once per node.
func (d *draState) verdict(pod *v1.Pod, n *snapshot.Node) draVerdict {
	if i := n.Index; i >= 0 && i < len(d.verdicts) {
		if v := d.verdicts[i].Load(); v != nil {
			return *v
		}
		v := d.decide(pod, n.Obj)
		d.verdicts[i].Store(&v)
		return v
	}
	return d.decide(pod, n.Obj)
}

func (d *draState) decide(pod *v1.Pod, node *v1.Node) draVerdict {
	s, results := d.decideAllocating(pod, node, d.allocator)
	if d.preempt != nil && s.Code == UnschedulableAndUnresolvable && slices.Equal(s.Reasons, statusCannotAllocate.Reasons) && d.resolvable(pod, node) {
		// Preemption may free the devices: a potential node.
		s.Code = Unschedulable
	}
	v := draVerdict{status: s}
	if s.IsSuccess() && d.allocator != nil {
		// Upstream's Filter keeps the allocation for its Score only where
		// it allocated.
		v.score = d.deviceScore(results)
	}
	return v
}

// decideWith is the Filter of DynamicResources with allocator alloc.
func (d *draState) decideWith(pod *v1.Pod, node *v1.Node, alloc structured.Allocator) Status {
	s, _ := d.decideAllocating(pod, node, alloc)
	return s
}

// decideAllocating is decideWith, returning too the allocations of the
// claims to allocate on the node (in nodeToAllocate's order) when it
// accepts the node.
func (d *draState) decideAllocating(pod *v1.Pod, node *v1.Node, alloc structured.Allocator) (Status, []resourceapi.AllocationResult) {
	toAllocate, skip, s := d.nodeToAllocate(pod, node)
	if skip || !s.IsSuccess() {
		return s, nil
	}
	unavailable := false
	for i, claim := range d.claims {
		if sel := d.availableOn[i]; sel != nil && !sel.Match(node) {
			unavailable = true
			continue
		}
		if requiresOptionalNodeOperations(claim.Status.Allocation) &&
			!slices.Contains(node.Status.DeclaredFeatures, draoptionalnodeoperations.DRAOptionalNodeOperationsFeatureGate) {
			unavailable = true
			continue
		}
		// A claim whose devices report a binding failure cannot be used.
		// (Upstream also gives up on a claim whose binding conditions are
		// still pending after the binding timeout; that needs the clock and
		// is not modelled.)
		if claim.Status.Allocation != nil && bindingFailed(claim) {
			unavailable = true
		}
	}
	var results []resourceapi.AllocationResult
	if alloc != nil {
		var err error
		results, err = alloc.Allocate(context.Background(), node, toAllocate)
		switch {
		case errors.Is(err, structured.ErrFailedAllocationOnNode):
			return draUnresolvable(err.Error()), nil
		case err != nil:
			return draError(err.Error()), nil
		case len(results) != len(toAllocate):
			return statusCannotAllocate, nil
		}
	}
	if unavailable {
		return statusClaimNotAvailable, nil
	}
	return Status{}, results
}

var (
	statusCannotAllocate    = reject(UnschedulableAndUnresolvable, DynamicResources, ReasonCannotAllocate)
	statusClaimNotAvailable = reject(UnschedulableAndUnresolvable, DynamicResources, ReasonClaimNotAvailable)
)

func requiresOptionalNodeOperations(a *resourceapi.AllocationResult) bool {
	if a == nil {
		return false
	}
	for _, r := range a.Devices.Results {
		if len(r.SkipNodeOperations) > 0 {
			return true
		}
	}
	return false
}

// bindingFailed reports whether a device of the claim's allocation has one
// of its binding failure conditions true.
func bindingFailed(claim *resourceapi.ResourceClaim) bool {
	for _, r := range claim.Status.Allocation.Devices.Results {
		if len(r.BindingConditions) == 0 {
			continue
		}
		var conds []metav1.Condition
		for _, dev := range claim.Status.Devices {
			if dev.Driver == r.Driver && dev.Pool == r.Pool && dev.Device == r.Device {
				conds = dev.Conditions
				break
			}
		}
		for _, c := range r.BindingFailureConditions {
			if apimeta.IsStatusConditionTrue(conds, c) {
				return true
			}
		}
	}
	return false
}

// draUnresolvable is upstream's statusUnschedulable: every DynamicResources
// rejection is UnschedulableAndUnresolvable.
func draUnresolvable(reason string) Status {
	return reject(UnschedulableAndUnresolvable, DynamicResources, reason)
}

func draError(msg string) Status {
	return Status{Code: Error, Plugin: DynamicResources, Reasons: []string{strings.TrimSpace(msg)}}
}
