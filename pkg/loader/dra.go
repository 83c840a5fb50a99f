package loader

import (
	"fmt"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/cel"

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
// defaults applied to claims; ns is the claim's namespace (defaulted). It
// refuses what the API server's validation would refuse and the engine
// relies on: CEL selectors that do not compile, and requests that are not
// exactly one of "exactly" and "firstAvailable".
func (s *Set) addDRAObject(obj any, ns string) *InputError {
	if rc, ok := obj.(*resourceapi.ResourceClaim); ok {
		rc.Namespace = ns
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
	}
	return nil
}

func validateDRA(obj any) *InputError {
	celError := func(id, field string, selectors []resourceapi.DeviceSelector) *InputError {
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
	switch o := obj.(type) {
	case *resourceapi.DeviceClass:
		return celError(objectName("DeviceClass", "", o.Name), "spec", o.Spec.Selectors)
	case *resourceapi.ResourceClaim:
		id := objectName("ResourceClaim", o.Namespace, o.Name)
		for i, r := range o.Spec.Devices.Requests {
			field := fmt.Sprintf("spec.devices.requests[%d]", i)
			if (r.Exactly == nil) == (len(r.FirstAvailable) == 0) {
				return &InputError{Object: id, Field: field, Detail: "exactly one of exactly and firstAvailable is required"}
			}
			if r.Exactly != nil {
				if err := celError(id, field+".exactly", r.Exactly.Selectors); err != nil {
					return err
				}
			}
			for j, sub := range r.FirstAvailable {
				if err := celError(id, fmt.Sprintf("%s.firstAvailable[%d]", field, j), sub.Selectors); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// numDRAObjects counts the DRA objects of o.
func numDRAObjects(o *snapshot.Objects) int {
	return len(o.ResourceSlices) + len(o.DeviceClasses) + len(o.ResourceClaims)
}
