package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestListDRA checks that List reads the DRA kinds, defaults claims as the
// API server stores them, and only warns when they cannot be listed.
func TestListDRA(t *testing.T) {
	claim := rt.Claim("default", "c", "gpu").Obj()
	claim.Spec.Devices.Requests[0].Exactly.AllocationMode, claim.Spec.Devices.Requests[0].Exactly.Count = "", 0
	client := fake.NewClientset(rt.GPUSlice("n1"), rt.DeviceClass("gpu", "true"), claim)
	objs, warnings, err := List(context.Background(), client)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("List: %v, warnings %v", err, warnings)
	}
	if len(objs.ResourceSlices) != 1 || len(objs.DeviceClasses) != 1 || len(objs.ResourceClaims) != 1 {
		t.Fatalf("got %d slices, %d classes, %d claims; want 1 each", len(objs.ResourceSlices), len(objs.DeviceClasses), len(objs.ResourceClaims))
	}
	if e := objs.ResourceClaims[0].Spec.Devices.Requests[0].Exactly; e.AllocationMode != resourceapi.DeviceAllocationModeExactCount || e.Count != 1 {
		t.Errorf("claim not defaulted: %s %d", e.AllocationMode, e.Count)
	}

	client.PrependReactor("list", "resourceslices", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("forbidden")
	})
	objs, warnings, err = List(context.Background(), client)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "cannot list resourceslices (forbidden)") {
		t.Errorf("warnings %v, want one about resourceslices", warnings)
	}
	if len(objs.ResourceClaims) != 0 {
		t.Errorf("DRA objects listed although slices could not be")
	}
}
