package snapshot

import (
	"cmp"
	"slices"

	resourceapi "k8s.io/api/resource/v1"
)

// draObjects are the dynamic resource allocation objects of a snapshot
// (resource.k8s.io/v1): the devices nodes publish (ResourceSlices), the
// classes claims ask for (DeviceClasses) and the claims themselves. The
// maps are made on first use, so that a snapshot without DRA costs nothing.
type draObjects struct {
	slices  map[string]*resourceapi.ResourceSlice
	classes map[string]*resourceapi.DeviceClass
	// claims by "namespace/name".
	claims map[string]*resourceapi.ResourceClaim
}

// addDRA adds the DRA objects of objs to s, rejecting duplicates.
func (s *Snapshot) addDRA(objs Objects) error {
	for _, rs := range objs.ResourceSlices {
		if _, dup := s.dra.slices[rs.Name]; dup {
			return duplicateObject("ResourceSlice", "", rs.Name, rs)
		}
		s.SetResourceSlice(rs)
	}
	for _, dc := range objs.DeviceClasses {
		if _, dup := s.dra.classes[dc.Name]; dup {
			return duplicateObject("DeviceClass", "", dc.Name, dc)
		}
		s.SetDeviceClass(dc)
	}
	for _, rc := range objs.ResourceClaims {
		ns := namespaceOrDefault(rc.Namespace)
		if s.ResourceClaim(ns, rc.Name) != nil {
			return duplicateObject("ResourceClaim", ns, rc.Name, rc)
		}
		s.SetResourceClaim(rc)
	}
	return nil
}

// SetResourceSlice adds or replaces a ResourceSlice.
func (s *Snapshot) SetResourceSlice(rs *resourceapi.ResourceSlice) {
	if s.dra.slices == nil {
		s.dra.slices = map[string]*resourceapi.ResourceSlice{}
	}
	s.dra.slices[rs.Name] = rs
}

// RemoveResourceSlice removes the named ResourceSlice.
func (s *Snapshot) RemoveResourceSlice(name string) { delete(s.dra.slices, name) }

// ResourceSlices returns the ResourceSlices sorted by name.
func (s *Snapshot) ResourceSlices() []*resourceapi.ResourceSlice {
	return sortedValues(s.dra.slices)
}

// SetDeviceClass adds or replaces a DeviceClass.
func (s *Snapshot) SetDeviceClass(dc *resourceapi.DeviceClass) {
	if s.dra.classes == nil {
		s.dra.classes = map[string]*resourceapi.DeviceClass{}
	}
	s.dra.classes[dc.Name] = dc
}

// RemoveDeviceClass removes the named DeviceClass.
func (s *Snapshot) RemoveDeviceClass(name string) { delete(s.dra.classes, name) }

// DeviceClass returns the named DeviceClass, or nil.
func (s *Snapshot) DeviceClass(name string) *resourceapi.DeviceClass { return s.dra.classes[name] }

// DeviceClasses returns the DeviceClasses sorted by name.
func (s *Snapshot) DeviceClasses() []*resourceapi.DeviceClass { return sortedValues(s.dra.classes) }

// SetResourceClaim adds or replaces a ResourceClaim; a claim without a
// namespace is in "default". The claim is kept as given: defaulting
// (DefaultResourceClaim) is the job of whoever reads it from outside.
func (s *Snapshot) SetResourceClaim(rc *resourceapi.ResourceClaim) {
	if s.dra.claims == nil {
		s.dra.claims = map[string]*resourceapi.ResourceClaim{}
	}
	if rc.Namespace == "" {
		rc = rc.DeepCopy()
		rc.Namespace = namespaceOrDefault("")
	}
	s.dra.claims[rc.Namespace+"/"+rc.Name] = rc
}

// RemoveResourceClaim removes the ResourceClaim namespace/name.
func (s *Snapshot) RemoveResourceClaim(namespace, name string) {
	delete(s.dra.claims, namespaceOrDefault(namespace)+"/"+name)
}

// ResourceClaim returns the ResourceClaim namespace/name, or nil.
func (s *Snapshot) ResourceClaim(namespace, name string) *resourceapi.ResourceClaim {
	return s.dra.claims[namespaceOrDefault(namespace)+"/"+name]
}

// ResourceClaims returns every ResourceClaim, sorted by namespace and name.
func (s *Snapshot) ResourceClaims() []*resourceapi.ResourceClaim {
	out := make([]*resourceapi.ResourceClaim, 0, len(s.dra.claims))
	for _, rc := range s.dra.claims {
		out = append(out, rc)
	}
	slices.SortFunc(out, func(a, b *resourceapi.ResourceClaim) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// named is a cluster-scoped object keyed by name.
type named interface {
	*resourceapi.ResourceSlice | *resourceapi.DeviceClass
	GetName() string
}

func sortedValues[T named](m map[string]T) []T {
	out := make([]T, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b T) int { return cmp.Compare(a.GetName(), b.GetName()) })
	return out
}

// DefaultResourceClaim applies the API server's defaults to a claim read
// from a file or a cluster, in place: a request (or subrequest) without an
// allocation mode asks for ExactCount, ExactCount without a count for one
// device, and tolerations without an operator use Equal.
func DefaultResourceClaim(rc *resourceapi.ResourceClaim) {
	DefaultResourceClaimSpec(&rc.Spec)
	if a := rc.Status.Allocation; a != nil {
		for i := range a.Devices.Results {
			defaultTolerations(a.Devices.Results[i].Tolerations)
		}
	}
}

// DefaultResourceClaimSpec is DefaultResourceClaim for a claim's spec (also
// the spec of a ResourceClaimTemplate).
func DefaultResourceClaimSpec(spec *resourceapi.ResourceClaimSpec) {
	for i := range spec.Devices.Requests {
		r := &spec.Devices.Requests[i]
		if e := r.Exactly; e != nil {
			defaultCount(&e.AllocationMode, &e.Count)
			defaultTolerations(e.Tolerations)
		}
		for j := range r.FirstAvailable {
			sub := &r.FirstAvailable[j]
			defaultCount(&sub.AllocationMode, &sub.Count)
			defaultTolerations(sub.Tolerations)
		}
	}
}

func defaultCount(mode *resourceapi.DeviceAllocationMode, count *int64) {
	if *mode == "" {
		*mode = resourceapi.DeviceAllocationModeExactCount
	}
	if *mode == resourceapi.DeviceAllocationModeExactCount && *count == 0 {
		*count = 1
	}
}

func defaultTolerations(ts []resourceapi.DeviceToleration) {
	for i := range ts {
		if ts[i].Operator == "" {
			ts[i].Operator = resourceapi.DeviceTolerationOpEqual
		}
	}
}
