package loader

import (
	resourceapi "k8s.io/api/resource/v1"

	"github.com/reprieve/reprieve/pkg/snapshot"
)

// draAPIVersion is the apiVersion of the dynamic resource allocation kinds.
const draAPIVersion = "resource.k8s.io/v1"

// draKinds are the dynamic resource allocation kinds the engine reads, and
// whether each is namespaced.
var draKinds = map[string]bool{
	"ResourceSlice": false,
	"DeviceClass":   false,
	"ResourceClaim": true,
}

// newDRAObject returns an empty object of a DRA kind, or nil.
func newDRAObject(kind string) any {
	switch kind {
	case "ResourceSlice":
		return &resourceapi.ResourceSlice{}
	case "DeviceClass":
		return &resourceapi.DeviceClass{}
	case "ResourceClaim":
		return &resourceapi.ResourceClaim{}
	}
	return nil
}

// addDRAObject adds a decoded DRA object to the set, with the API server's
// defaults applied to claims; ns is the claim's namespace (defaulted).
func (s *Set) addDRAObject(obj any, ns string) {
	switch o := obj.(type) {
	case *resourceapi.ResourceSlice:
		s.Objects.ResourceSlices = append(s.Objects.ResourceSlices, o)
	case *resourceapi.DeviceClass:
		s.Objects.DeviceClasses = append(s.Objects.DeviceClasses, o)
	case *resourceapi.ResourceClaim:
		o.Namespace = ns
		snapshot.DefaultResourceClaim(o)
		s.Objects.ResourceClaims = append(s.Objects.ResourceClaims, o)
	}
}

// numDRAObjects counts the DRA objects of o.
func numDRAObjects(o *snapshot.Objects) int {
	return len(o.ResourceSlices) + len(o.DeviceClasses) + len(o.ResourceClaims)
}
