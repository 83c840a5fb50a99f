package filter

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/resource"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	"k8s.io/klog/v2"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Extended resources backed by DRA (DRAExtendedResource, on by default in
// v1.37): a DeviceClass with spec.extendedResourceName, or any class through
// its implicit name "deviceclass.resource.kubernetes.io/<class>", lets pods
// ask for devices as an extended resource. On a node that does not publish
// the resource in its allocatable, NodeResourcesFit leaves it to
// DynamicResources, which allocates it through a claim of its own.

// specialClaimName is the name upstream gives the in-memory claim for a
// pod's DRA-backed extended resources (not a valid object name on purpose).
const specialClaimName = "<extended-resources>"

// draExtended is the pod's part in DRA-backed extended resources.
type draExtended struct {
	resolver *extendedresourcecache.ExtendedResourceCache
	// podScalars are the pod's scalar requests, as the plugin computes them.
	podScalars map[v1.ResourceName]int64
	// delegable are the pod's requested scalars that map to a class, sorted.
	delegable []v1.ResourceName
	// requests are the pod's NodeResourcesFit requests without the delegable
	// resources absent from a node, by bit mask over delegable.
	requests []snapshot.Resources
	// claim is the extended resource claim: an earlier cycle's or the
	// in-memory one (no requests; each node gets its own copy).
	claim *resourceapi.ResourceClaim
}

// newDRAExtended returns the pod's DRA-backed extended resources, or nil when
// it requests none.
func newDRAExtended(snap *snapshot.Snapshot, pod *v1.Pod, request *snapshot.Resources) *draExtended {
	if len(request.Scalars) == 0 {
		return nil
	}
	classes := snap.DeviceClasses()
	if len(classes) == 0 {
		return nil
	}
	// The scheduler's cache of the mappings, fed the classes as its
	// informer would (by name here; only equal creation timestamps of two
	// classes naming the same resource make the order matter, and then the
	// name decides).
	resolver := extendedresourcecache.NewExtendedResourceCache(klog.Background())
	for _, dc := range classes {
		resolver.OnAdd(dc, true)
	}
	reqs := resource.PodRequests(pod, resource.PodResourcesOptions{})
	x := &draExtended{resolver: resolver, podScalars: map[v1.ResourceName]int64{}}
	mapped := false
	for name, q := range reqs {
		if !snapshot.IsScalarResourceName(name) {
			continue
		}
		x.podScalars[name] = q.Value()
		if !q.IsZero() && isDRAExtendedResourceName(name) && resolver.GetDeviceClass(name) != nil {
			mapped = true
		}
	}
	if !mapped {
		return nil
	}
	for _, s := range request.Scalars {
		if s.Value > 0 && resolver.GetDeviceClass(s.Name) != nil {
			x.delegable = append(x.delegable, s.Name)
		}
	}
	if len(x.delegable) > 16 {
		x.delegable = x.delegable[:16]
	}
	x.requests = make([]snapshot.Resources, 1<<len(x.delegable))
	for mask := range x.requests {
		r := *request
		r.Scalars = slices.DeleteFunc(slices.Clone(request.Scalars), func(s snapshot.ScalarAmount) bool {
			i := slices.Index(x.delegable, s.Name)
			return i >= 0 && mask&(1<<i) != 0
		})
		x.requests[mask] = r
	}
	x.claim = existingExtendedClaim(snap, pod)
	if x.claim == nil {
		yes := true
		x.claim = &resourceapi.ResourceClaim{}
		x.claim.Namespace, x.claim.Name = pod.Namespace, specialClaimName
		x.claim.GenerateName = pod.Name + "-extended-resources-"
		x.claim.UID = types.UID("uid-extended-resources-" + string(pod.UID))
		x.claim.OwnerReferences = append(x.claim.OwnerReferences, ownerRef(pod, &yes))
		x.claim.Annotations = map[string]string{resourceapi.ExtendedResourceClaimAnnotation: "true"}
	}
	return x
}

// isDRAExtendedResourceName is upstream's schedutil.IsDRAExtendedResourceName.
func isDRAExtendedResourceName(name v1.ResourceName) bool {
	return snapshot.IsExtendedResourceName(name) || strings.HasPrefix(string(name), resourceapi.ResourceDeviceClassPrefix)
}

// existingExtendedClaim is the extended resource claim an earlier cycle
// made for pod.
func existingExtendedClaim(snap *snapshot.Snapshot, pod *v1.Pod) *resourceapi.ResourceClaim {
	for _, c := range snap.ResourceClaims() {
		if IsExtendedResourceClaimOf(c, pod) {
			return c
		}
	}
	return nil
}

// IsExtendedResourceClaimOf reports whether c is the claim made for pod's
// extended resources backed by DRA: annotated so, and controlled by the pod.
func IsExtendedResourceClaimOf(c *resourceapi.ResourceClaim, pod *v1.Pod) bool {
	if c.Annotations[resourceapi.ExtendedResourceClaimAnnotation] != "true" {
		return false
	}
	ref := metav1.GetControllerOf(c)
	return ref != nil && ref.UID == pod.UID && ref.Name == pod.Name
}

// requestFor is the pod's request as NodeResourcesFit checks it on n: the
// delegable resources n does not offer are left to DynamicResources.
func (x *draExtended) requestFor(n *snapshot.Node, full *snapshot.Resources) *snapshot.Resources {
	mask := 0
	for i, name := range x.delegable {
		if n.Allocatable.Scalar(name) <= 0 {
			mask |= 1 << i
		}
	}
	if mask == 0 {
		return full
	}
	return &x.requests[mask]
}

// nodeClaim is upstream's filterExtendedResources: the extended resource
// claim to allocate on node (nil when the node's allocatable serves them
// all), or a rejection. skip reports that the plugin has nothing more to do.
func (x *draExtended) nodeClaim(pod *v1.Pod, node *v1.Node, noUserClaims bool) (claim *resourceapi.ResourceClaim, skip bool, s Status) {
	claim, _, skip, s = x.nodeClaimAndMappings(pod, node, noUserClaims)
	return claim, skip, s
}

// nodeClaimAndMappings is nodeClaim with the container requests the claim
// serves (the pod's status.extendedResourceClaimStatus).
func (x *draExtended) nodeClaimAndMappings(pod *v1.Pod, node *v1.Node, noUserClaims bool) (*resourceapi.ResourceClaim, []v1.ContainerExtendedResourceRequest, bool, Status) {
	if x.claim.Spec.Devices.Requests != nil {
		// An earlier cycle's claim: upstream's PostFilter deletes it first.
		return nil, nil, false, draUnresolvable("cannot schedule extended resource claim")
	}
	extended := map[v1.ResourceName]int64{}
	for name, q := range x.podScalars {
		if !isDRAExtendedResourceName(name) || q == 0 {
			continue
		}
		alloc, ok := node.Status.Allocatable[name]
		if x.resolver.GetDeviceClass(name) != nil && alloc.Value() == 0 {
			extended[name] = q
		} else if !ok {
			return nil, nil, false, draUnresolvable("cannot fit resource")
		}
	}
	if noUserClaims && len(extended) == 0 {
		return nil, nil, true, Status{}
	}
	if x.claim.Status.Allocation != nil {
		return nil, nil, false, Status{}
	}
	c := x.claim.DeepCopy()
	var mappings []v1.ContainerExtendedResourceRequest
	c.Spec.Devices.Requests, mappings = x.requestsAndMappings(pod, extended)
	return c, mappings, false, Status{}
}

// requestsAndMappings is upstream's createRequestsAndMappings: per
// resource, one request per long-lived container (sidecars and regular
// containers) and one for the largest need of the init containers that the
// later long-lived ones do not already cover, sorted by request name; and
// which request serves each container's need (an init container's mapped
// to the requests it reuses and to the largest init request).
func (x *draExtended) requestsAndMappings(pod *v1.Pod, extended map[v1.ResourceName]int64) ([]resourceapi.DeviceRequest, []v1.ContainerExtendedResourceRequest) {
	containers := slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers)
	numInit := len(pod.Spec.InitContainers)
	var long, short []int
	for i, c := range containers {
		if i < numInit && (c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways) {
			short = append(short, i)
		} else {
			long = append(long, i)
		}
	}
	names := make([]v1.ResourceName, 0, len(extended))
	for name := range extended {
		names = append(names, name)
	}
	slices.Sort(names)
	var out []resourceapi.DeviceRequest
	var mappings []v1.ContainerExtendedResourceRequest
	for _, name := range names {
		class := x.resolver.GetDeviceClass(name)
		if class == nil {
			continue
		}
		longReqs := make([]*resourceapi.DeviceRequest, len(containers))
		var longMaps, shortMaps []v1.ContainerExtendedResourceRequest
		for _, i := range long {
			var m []v1.ContainerExtendedResourceRequest
			longReqs[i], m = containerRequest(i, &containers[i], name, class.Name, nil)
			longMaps = append(longMaps, m...)
		}
		var maxShort *resourceapi.DeviceRequest
		shortNames := map[string]bool{}
		for _, i := range short {
			r, m := containerRequest(i, &containers[i], name, class.Name, longReqs[i:])
			shortMaps = append(shortMaps, m...)
			if r != nil {
				shortNames[r.Name] = true
				if maxShort == nil || maxShort.Exactly.Count < r.Exactly.Count {
					maxShort = r
				}
			}
		}
		if maxShort != nil && len(shortNames) > 1 {
			// The init containers run one after another: all use the
			// largest init request.
			for i := range shortMaps {
				if shortNames[shortMaps[i].RequestName] {
					shortMaps[i].RequestName = maxShort.Name
				}
			}
		}
		if maxShort != nil {
			out = append(out, *maxShort)
		}
		for _, r := range longReqs {
			if r != nil {
				out = append(out, *r)
			}
		}
		mappings = append(append(mappings, longMaps...), shortMaps...)
	}
	slices.SortStableFunc(out, func(a, b resourceapi.DeviceRequest) int { return strings.Compare(a.Name, b.Name) })
	return out, mappings
}

// containerRequest is the request container i needs for resource name of
// class beyond what reusable (requests of later long-lived containers)
// covers, or nil, and the requests that serve the container.
func containerRequest(i int, c *v1.Container, name v1.ResourceName, class string, reusable []*resourceapi.DeviceRequest) (*resourceapi.DeviceRequest, []v1.ContainerExtendedResourceRequest) {
	q, ok := c.Resources.Requests[name]
	if !ok {
		return nil, nil
	}
	want, ok := q.AsInt64()
	if !ok || want == 0 {
		return nil, nil
	}
	var mappings []v1.ContainerExtendedResourceRequest
	covered := int64(0)
	for _, r := range reusable {
		if r != nil {
			mappings = append(mappings, v1.ContainerExtendedResourceRequest{ContainerName: c.Name, ResourceName: string(name), RequestName: r.Name})
			if covered += r.Exactly.Count; covered >= want {
				return nil, mappings
			}
		}
	}
	keys := make([]string, 0, len(c.Resources.Requests))
	for k := range c.Resources.Requests {
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	r := &resourceapi.DeviceRequest{
		Name: fmt.Sprintf("container-%d-request-%d", i, max(0, slices.Index(keys, string(name)))),
		Exactly: &resourceapi.ExactDeviceRequest{
			DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: want - covered,
		},
	}
	return r, append(mappings, v1.ContainerExtendedResourceRequest{ContainerName: c.Name, ResourceName: string(name), RequestName: r.Name})
}

// ownerRef is a controller reference to pod.
func ownerRef(pod *v1.Pod, controller *bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: controller}
}

// resourceRequest is the request NodeResourcesFit checks on n: the pod's,
// without the extended resources left to DynamicResources there.
func (c *Cycle) resourceRequest(n *snapshot.Node) *snapshot.Resources {
	if c.dra == nil || c.dra.ext == nil {
		return &c.request
	}
	return c.dra.ext.requestFor(n, &c.request)
}
