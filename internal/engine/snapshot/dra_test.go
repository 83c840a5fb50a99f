package snapshot_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	resourceapi "k8s.io/api/resource/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestDRAObjects checks building, changing and listing the DRA objects.
func TestDRAObjects(t *testing.T) {
	snap, err := snapshot.New(snapshot.Objects{
		ResourceSlices: []*resourceapi.ResourceSlice{rt.GPUSlice("n2"), rt.GPUSlice("n1")},
		DeviceClasses:  []*resourceapi.DeviceClass{rt.DeviceClass("gpu", "true")},
		ResourceClaims: []*resourceapi.ResourceClaim{rt.Claim("b", "c", "gpu").Obj(), rt.Claim("", "c", "gpu").Obj(), rt.Claim("a", "c", "gpu").Obj()},
	})
	if err != nil {
		t.Fatal(err)
	}
	var slices, claims []string
	for _, rs := range snap.ResourceSlices() {
		slices = append(slices, rs.Name)
	}
	for _, rc := range snap.ResourceClaims() {
		claims = append(claims, rc.Namespace+"/"+rc.Name)
	}
	if diff := cmp.Diff([]string{"n1-gpu", "n2-gpu"}, slices); diff != "" {
		t.Errorf("slices (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a/c", "b/c", "default/c"}, claims); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	snap.RemoveResourceClaim("", "c")
	snap.RemoveDeviceClass("gpu")
	snap.RemoveResourceSlice("n1-gpu")
	if snap.ResourceClaim("default", "c") != nil || snap.DeviceClass("gpu") != nil || len(snap.ResourceSlices()) != 1 {
		t.Errorf("Remove methods left objects behind")
	}
	allocated := rt.Claim("a", "c", "gpu").AllocatedOn("n1", "g0").Obj()
	snap.SetResourceClaim(allocated)
	if snap.ResourceClaim("a", "c") != allocated {
		t.Errorf("SetResourceClaim did not replace the claim")
	}
}

func TestDRADuplicates(t *testing.T) {
	tests := map[string]snapshot.Objects{
		"slice": {ResourceSlices: []*resourceapi.ResourceSlice{rt.GPUSlice("n1"), rt.GPUSlice("n1")}},
		"class": {DeviceClasses: []*resourceapi.DeviceClass{rt.DeviceClass("gpu", "true"), rt.DeviceClass("gpu", "false")}},
		"claim": {ResourceClaims: []*resourceapi.ResourceClaim{rt.Claim("", "c", "gpu").Obj(), rt.Claim("default", "c", "gpu").Obj()}},
	}
	for name, objs := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := snapshot.New(objs)
			var oe *snapshot.ObjectError
			if !errors.As(err, &oe) || oe.Detail != "duplicate object" || oe.Field != "metadata.name" {
				t.Errorf("error %v, want a duplicate-object error", err)
			}
		})
	}
}

func TestDefaultResourceClaim(t *testing.T) {
	c := rt.Claim("ns", "c", "gpu").Obj()
	e := c.Spec.Devices.Requests[0].Exactly
	e.AllocationMode, e.Count = "", 0
	c.Spec.Devices.Requests = append(c.Spec.Devices.Requests, resourceapi.DeviceRequest{Name: "sub", FirstAvailable: []resourceapi.DeviceSubRequest{
		{Name: "all", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeAll},
		{Name: "three", DeviceClassName: "gpu", Count: 3},
	}})
	snapshot.DefaultResourceClaim(c)
	got := []any{e.AllocationMode, e.Count}
	for _, s := range c.Spec.Devices.Requests[1].FirstAvailable {
		got = append(got, s.AllocationMode, s.Count)
	}
	want := []any{resourceapi.DeviceAllocationModeExactCount, int64(1), resourceapi.DeviceAllocationModeAll, int64(0), resourceapi.DeviceAllocationModeExactCount, int64(3)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}
