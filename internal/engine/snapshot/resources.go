package snapshot

import (
	"math"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Resources is an amount of schedulable resources in the units kube-scheduler
// compares them in: millicores for CPU, bytes for memory and ephemeral
// storage, and whole units for every scalar resource (extended resources,
// hugepages, attachable volumes, prefixed native resources).
//
// Scalar amounts are kept by name in a small sorted slice; a node rarely has
// more than a handful, so a slice is both smaller and faster than a map.
type Resources struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	// AllowedPods is the "pods" allocatable of a node; zero for pod requests.
	AllowedPods int64
	// Scalars holds the scalar resources, sorted by name, without duplicates.
	Scalars []ScalarAmount
}

// ScalarAmount is one scalar resource and its amount.
type ScalarAmount struct {
	Name  v1.ResourceName
	Value int64
}

// NewResources converts a ResourceList the way the scheduler's
// framework.Resource does: CPU in millicores, the rest rounded up to whole
// units, "pods" into AllowedPods, and unknown non-scalar names dropped.
func NewResources(rl v1.ResourceList) Resources {
	var r Resources
	for name, q := range rl {
		switch name {
		case v1.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case v1.ResourceMemory:
			r.Memory += q.Value()
		case v1.ResourcePods:
			r.AllowedPods += q.Value()
		case v1.ResourceEphemeralStorage:
			r.EphemeralStorage += q.Value()
		default:
			if IsScalarResourceName(name) {
				r.addScalar(name, q.Value())
			}
		}
	}
	return r
}

// Scalar returns the amount of the named scalar resource (zero if absent).
func (r *Resources) Scalar(name v1.ResourceName) int64 {
	for _, s := range r.Scalars {
		if s.Name == name {
			return s.Value
		}
	}
	return 0
}

// IsZero reports whether r requests nothing at all. A scalar entry of zero
// still counts as a request, as it does upstream.
func (r *Resources) IsZero() bool {
	return r.MilliCPU == 0 && r.Memory == 0 && r.EphemeralStorage == 0 && len(r.Scalars) == 0
}

func (r *Resources) addScalar(name v1.ResourceName, v int64) {
	for i := range r.Scalars {
		if r.Scalars[i].Name == name {
			r.Scalars[i].Value += v
			return
		}
	}
	i := 0
	for i < len(r.Scalars) && r.Scalars[i].Name < name {
		i++
	}
	r.Scalars = append(r.Scalars, ScalarAmount{})
	copy(r.Scalars[i+1:], r.Scalars[i:])
	r.Scalars[i] = ScalarAmount{Name: name, Value: v}
}

// Add adds sign*o to r (sign is +1 or -1). AllowedPods is not touched.
func (r *Resources) Add(o *Resources, sign int64) {
	r.MilliCPU += sign * o.MilliCPU
	r.Memory += sign * o.Memory
	r.EphemeralStorage += sign * o.EphemeralStorage
	for _, s := range o.Scalars {
		r.addScalar(s.Name, sign*s.Value)
	}
}

// Clone returns a copy of r that shares nothing with it.
func (r Resources) Clone() Resources {
	if r.Scalars != nil {
		r.Scalars = append([]ScalarAmount(nil), r.Scalars...)
	}
	return r
}

// IsScalarResourceName reports whether the scheduler accounts name as a
// scalar resource: an extended resource, hugepages, an attachable-volumes
// resource or a kubernetes.io-prefixed native resource.
func IsScalarResourceName(name v1.ResourceName) bool {
	return IsExtendedResourceName(name) ||
		strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix) ||
		strings.Contains(string(name), v1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(string(name), v1.ResourceAttachableVolumesPrefix)
}

// IsExtendedResourceName reports whether name is an extended resource: a
// domain-qualified name outside kubernetes.io that is valid as a quota name.
func IsExtendedResourceName(name v1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, v1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(v1.DefaultResourceRequestsPrefix+s)) == 0
}

// Usage is what NodeResourcesFit weighs besides scalar resources: CPU in
// millicores, memory, ephemeral storage and a number of pods. As a node's
// allocatable, Pods is the pods it allows; as what it runs, the pods.
type Usage struct{ MilliCPU, Memory, EphemeralStorage, Pods int64 }

// Usage returns r's amounts with pods as the pod count.
func (r *Resources) Usage(pods int64) Usage {
	return Usage{r.MilliCPU, r.Memory, r.EphemeralStorage, pods}
}

// Add adds one pod's requests (sign 1) or removes them (sign -1).
func (u *Usage) Add(milliCPU, memory, ephemeralStorage, sign int64) {
	u.MilliCPU += sign * milliCPU
	u.Memory += sign * memory
	u.EphemeralStorage += sign * ephemeralStorage
	u.Pods += sign
}

// Fits reports whether a pod requesting req, apart from scalar resources,
// fits next to u on a node whose allocatable is alloc.
func (u *Usage) Fits(req *Resources, alloc *Usage) bool {
	return u.Pods+1 <= alloc.Pods &&
		(req.MilliCPU <= 0 || req.MilliCPU <= alloc.MilliCPU-u.MilliCPU) &&
		(req.Memory <= 0 || req.Memory <= alloc.Memory-u.Memory) &&
		(req.EphemeralStorage <= 0 || req.EphemeralStorage <= alloc.EphemeralStorage-u.EphemeralStorage)
}

// Headroom returns the most a node whose allocatable is u may run for a
// pod requesting req (apart from scalar resources) to fit beside it, so
// that a loop over many uses compares each with fixed bounds: for every
// use v whose amounts are not negative, v.Fits(req, u) is v.Within(&h).
// ok is false when an amount of u lies outside [0, 2⁶²) or one of req is
// 2⁶² or more, where the subtractions of the two forms could overflow
// differently (a negative request counts as none, as in Fits).
func (u *Usage) Headroom(req *Resources) (h Usage, ok bool) {
	const limit = 1 << 62
	in := func(a int64) bool { return a >= 0 && a < limit }
	if !in(u.MilliCPU) || !in(u.Memory) || !in(u.EphemeralStorage) || !in(u.Pods) ||
		req.MilliCPU >= limit || req.Memory >= limit || req.EphemeralStorage >= limit {
		return Usage{}, false
	}
	room := func(alloc, request int64) int64 {
		if request <= 0 {
			return math.MaxInt64
		}
		return alloc - request
	}
	return Usage{MilliCPU: room(u.MilliCPU, req.MilliCPU), Memory: room(u.Memory, req.Memory),
		EphemeralStorage: room(u.EphemeralStorage, req.EphemeralStorage), Pods: u.Pods - 1}, true
}

// Within reports whether every amount of u is at most h's.
func (u *Usage) Within(h *Usage) bool {
	return u.Pods <= h.Pods && u.MilliCPU <= h.MilliCPU && u.Memory <= h.Memory && u.EphemeralStorage <= h.EphemeralStorage
}
