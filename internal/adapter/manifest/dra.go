package manifest

import (
	"fmt"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/cel"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// draAPIVersion is the apiVersion of the dynamic resource allocation kinds.
const draAPIVersion = "resource.k8s.io/v1"

// draKinds are the dynamic resource allocation kinds the engine reads, and
// whether each is namespaced.
var draKinds = map[string]bool{
	"ResourceSlice": false,
	"DeviceClass":   false,
	"ResourceClaim": true,
	// ResourceClaimTemplate is read for the simulator's resource-claim
	// controller; whatif does not use it.
	"ResourceClaimTemplate": true,
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
	case "ResourceClaimTemplate":
		return &resourceapi.ResourceClaimTemplate{}
	}
	return nil
}

// addDRAObject adds a decoded DRA object to the set, with the API server's
// defaults applied to claims; ns is the claim's namespace (defaulted). It
// refuses what the API server's validation would refuse and the engine
// relies on: CEL selectors that do not compile, and requests that are not
// exactly one of "exactly" and "firstAvailable".
func (s *Set) addDRAObject(obj any, ns string) *InputError {
	switch o := obj.(type) {
	case *resourceapi.ResourceClaim:
		o.Namespace = ns
	case *resourceapi.ResourceClaimTemplate:
		o.Namespace = ns
	}
	if err := validateDRA(obj); err != nil {
		return err
	}
	switch o := obj.(type) {
	case *resourceapi.ResourceSlice:
		s.Objects.ResourceSlices = append(s.Objects.ResourceSlices, o)
	case *resourceapi.DeviceClass:
		s.Objects.DeviceClasses = append(s.Objects.DeviceClasses, o)
	case *resourceapi.ResourceClaim:
		snapshot.DefaultResourceClaim(o)
		s.Objects.ResourceClaims = append(s.Objects.ResourceClaims, o)
	case *resourceapi.ResourceClaimTemplate:
		snapshot.DefaultResourceClaimSpec(&o.Spec.Spec)
		s.ResourceClaimTemplates = append(s.ResourceClaimTemplates, o)
	}
	return nil
}

func validateDRA(obj any) *InputError {
	switch o := obj.(type) {
	case *resourceapi.DeviceClass:
		return celSelectorsError(objectName("DeviceClass", "", o.Name), "spec", o.Spec.Selectors)
	case *resourceapi.ResourceClaim:
		return validateClaimSpec(objectName("ResourceClaim", o.Namespace, o.Name), "spec", &o.Spec)
	case *resourceapi.ResourceClaimTemplate:
		return validateClaimSpec(objectName("ResourceClaimTemplate", o.Namespace, o.Name), "spec.spec", &o.Spec.Spec)
	}
	return nil
}

// validateClaimSpec checks the requests of a claim's spec (at path of
// object id): exactly one of exactly and firstAvailable, and selectors
// that compile.
func validateClaimSpec(id, path string, spec *resourceapi.ResourceClaimSpec) *InputError {
	for i, r := range spec.Devices.Requests {
		field := fmt.Sprintf("%s.devices.requests[%d]", path, i)
		if (r.Exactly == nil) == (len(r.FirstAvailable) == 0) {
			return &InputError{Object: id, Field: field, Detail: "exactly one of exactly and firstAvailable is required"}
		}
		if r.Exactly != nil {
			if err := celSelectorsError(id, field+".exactly", r.Exactly.Selectors); err != nil {
				return err
			}
		}
		for j, sub := range r.FirstAvailable {
			if err := celSelectorsError(id, fmt.Sprintf("%s.firstAvailable[%d]", field, j), sub.Selectors); err != nil {
				return err
			}
		}
	}
	return nil
}

// celSelectorsError is the first CEL selector of selectors (at field of
// object id) that does not compile, or nil.
func celSelectorsError(id, field string, selectors []resourceapi.DeviceSelector) *InputError {
	for i, sel := range selectors {
		if sel.CEL == nil {
			continue
		}
		res := cel.GetCompiler(cel.Features{EnableConsumableCapacity: true}).CompileCELExpression(sel.CEL.Expression, cel.Options{})
		if res.Error != nil {
			return &InputError{Object: id, Field: fmt.Sprintf("%s.selectors[%d].cel.expression", field, i), Detail: oneLine(res.Error.Error())}
		}
	}
	return nil
}

// numDRAObjects counts the DRA objects of o.
func numDRAObjects(o *snapshot.Objects) int {
	return len(o.ResourceSlices) + len(o.DeviceClasses) + len(o.ResourceClaims)
}
