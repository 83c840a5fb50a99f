package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// claimsFor runs the filters for pod on node and returns its DRA allocation.
func claimsFor(t *testing.T, objs snapshot.Objects, pod *v1.Pod, node string) *filter.DRAAllocation {
	t.Helper()
	c, n := fittingCycle(t, objs, pod, node)
	a, err := c.DRAAllocation(n)
	if err != nil || a == nil {
		t.Fatalf("DRAAllocation = %v, %v", a, err)
	}
	return a
}

// claimState is what a test checks of a stored claim.
type claimState struct {
	Finalizers []string
	Devices    []string
	Reserved   []string
	Stamped    bool
}

func stateOf(c *resourceapi.ResourceClaim) claimState {
	st := claimState{Finalizers: c.Finalizers}
	if a := c.Status.Allocation; a != nil {
		for _, r := range a.Devices.Results {
			st.Devices = append(st.Devices, r.Pool+"/"+r.Device)
		}
		st.Stamped = a.AllocationTimestamp != nil
	}
	for _, r := range c.Status.ReservedFor {
		st.Reserved = append(st.Reserved, r.Resource+"/"+r.Name)
	}
	return st
}

// TestBindClaims: DynamicResources' PreBind on an API server (the fake
// clientset): a claim to allocate gets the finalizer by an update, then
// the allocation and the pod in reservedFor by a status update; an
// allocated claim only the reservation; a conflict is retried on a fresh
// read; a claim allocated elsewhere meanwhile fails; Unreserve takes the pod
// out again.
func TestBindClaims(t *testing.T) {
	running := rt.Pod("ns", "running").On("n1").Obj()
	pod := rt.Pod("ns", "p").Claim("mine").Claim("shared").Obj()
	mine := rt.Claim("ns", "mine", "gpu").Obj()
	shared := rt.Claim("ns", "shared", "gpu").AllocatedOn("n1", "g1").ReservedFor(running).Obj()
	objs := snapshot.Objects{
		Nodes:          []*v1.Node{rt.Node("n1").CPU("2").Obj()},
		Pods:           []*v1.Pod{running},
		ResourceSlices: []*resourceapi.ResourceSlice{rt.GPUSlice("n1", rt.GPU{Name: "g0", Model: "a100", Memory: "40Gi"}, rt.GPU{Name: "g1", Model: "a100", Memory: "40Gi"})},
		DeviceClasses:  []*resourceapi.DeviceClass{rt.DeviceClass("gpu", `device.driver == "gpu.example.com"`)},
		ResourceClaims: []*resourceapi.ResourceClaim{mine, shared},
	}
	a := claimsFor(t, objs, pod, "n1")
	wantMine := claimState{Finalizers: []string{resourceapi.Finalizer}, Devices: []string{"n1/g0"}, Reserved: []string{"pods/p"}, Stamped: true}
	// The shared claim's allocation had no timestamp: it gets one.
	wantShared := claimState{Devices: []string{"n1/g1"}, Reserved: []string{"pods/running", "pods/p"}, Stamped: true}

	for name, tc := range map[string]struct {
		// react, when set, intercepts the client's calls.
		react     func(k8stesting.Action) (bool, runtime.Object, error)
		wantErr   error
		wantState map[string]claimState
		// wantWritten are the claims BindClaims returns.
		wantWritten []string
	}{
		"allocated and reserved": {
			wantState:   map[string]claimState{"mine": wantMine, "shared": wantShared},
			wantWritten: []string{"mine", "shared"},
		},
		"a conflict is retried": {
			react:       conflictOnce(),
			wantState:   map[string]claimState{"mine": wantMine, "shared": wantShared},
			wantWritten: []string{"mine", "shared"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			client := fake.NewClientset(mine.DeepCopy(), shared.DeepCopy())
			if tc.react != nil {
				client.PrependReactor("update", "resourceclaims", tc.react)
			}
			c := NewCluster(client, events.NewFakeRecorder(10))
			written, err := c.BindClaims(context.Background(), pod, "n1", a)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("BindClaims error %v, want %v", err, tc.wantErr)
			}
			var names []string
			for _, w := range written {
				names = append(names, w.Name)
			}
			if diff := cmp.Diff(tc.wantWritten, names); diff != "" {
				t.Errorf("written (-want +got):\n%s", diff)
			}
			got := map[string]claimState{}
			for _, n := range []string{"mine", "shared"} {
				cl, err := client.ResourceV1().ResourceClaims("ns").Get(context.Background(), n, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				got[n] = stateOf(cl)
			}
			if diff := cmp.Diff(tc.wantState, got); diff != "" {
				t.Errorf("stored claims (-want +got):\n%s", diff)
			}

			c.UnreserveClaims(context.Background(), pod, written)
			for _, n := range []string{"mine", "shared"} {
				cl, _ := client.ResourceV1().ResourceClaims("ns").Get(context.Background(), n, metav1.GetOptions{})
				if slices.ContainsFunc(cl.Status.ReservedFor, func(r resourceapi.ResourceClaimConsumerReference) bool { return r.UID == pod.UID }) {
					t.Errorf("claim %s still reserved for the pod after Unreserve", n)
				}
				if n == "shared" && len(cl.Status.ReservedFor) != 1 {
					t.Errorf("claim shared lost its other consumer: %v", cl.Status.ReservedFor)
				}
				if cl.Status.Allocation == nil {
					t.Errorf("claim %s lost its allocation on Unreserve", n)
				}
			}
		})
	}

	t.Run("allocated elsewhere meanwhile", func(t *testing.T) {
		taken := mine.DeepCopy()
		taken.Status.Allocation = shared.Status.Allocation.DeepCopy()
		client := fake.NewClientset(taken, shared.DeepCopy())
		// The first status update conflicts; the fresh read shows the claim
		// allocated by someone else.
		client.PrependReactor("update", "resourceclaims", conflictOnce())
		c := NewCluster(client, events.NewFakeRecorder(10))
		written, err := c.BindClaims(context.Background(), pod, "n1", a)
		if !errors.Is(err, errClaimChanged) {
			t.Fatalf("BindClaims error %v, want errClaimChanged", err)
		}
		if len(written) != 0 {
			t.Errorf("written %d claims, want none", len(written))
		}
		cl, _ := client.ResourceV1().ResourceClaims("ns").Get(context.Background(), "shared", metav1.GetOptions{})
		if len(cl.Status.ReservedFor) != 1 {
			t.Errorf("claim shared reserved for %v, want only its running pod (the first claim failed)", cl.Status.ReservedFor)
		}
	})
}

// conflictOnce fails the first update of a claim (of any kind) with a
// conflict, leaving the stored claim as it was.
func conflictOnce() func(k8stesting.Action) (bool, runtime.Object, error) {
	done := false
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		if done {
			return false, nil, nil
		}
		done = true
		obj := action.(k8stesting.UpdateAction).GetObject().(*resourceapi.ResourceClaim)
		return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceclaims"}, obj.Name, fmt.Errorf("the object has been modified"))
	}
}

// TestBindExtendedResourceClaim: PreBind for a pod whose example.com/gpu is
// served by DRA creates the claim (its name generated by the API server),
// writes its allocation and reservation, and names it in the pod's
// status.extendedResourceClaimStatus; Unreserve deletes it.
func TestBindExtendedResourceClaim(t *testing.T) {
	gpuName := "example.com/gpu"
	class := rt.DeviceClass("gpu", `device.driver == "gpu.example.com"`)
	class.Spec.ExtendedResourceName = &gpuName
	pod := rt.Pod("ns", "train").ReqRes(v1.ResourceName(gpuName), "1").Obj()
	pod.UID = "uid-train"
	objs := snapshot.Objects{
		Nodes:          []*v1.Node{rt.Node("n1").CPU("2").Obj()},
		ResourceSlices: []*resourceapi.ResourceSlice{rt.GPUSlice("n1", rt.GPU{Name: "g0", Model: "a100", Memory: "40Gi"})},
		DeviceClasses:  []*resourceapi.DeviceClass{class},
	}
	a := claimsFor(t, objs, pod, "n1")
	client := fake.NewClientset(pod.DeepCopy())
	// The fake clientset does not generate names: do it as the API server.
	client.PrependReactor("create", "resourceclaims", func(action k8stesting.Action) (bool, runtime.Object, error) {
		c := action.(k8stesting.CreateAction).GetObject().(*resourceapi.ResourceClaim)
		if c.Name == "" {
			c.Name, c.UID = c.GenerateName+"x7k2p", "uid-claim"
		}
		return false, nil, nil
	})
	c := NewCluster(client, events.NewFakeRecorder(10))
	ctx := context.Background()
	written, err := c.BindClaims(ctx, pod, "n1", a)
	if err != nil || len(written) != 1 {
		t.Fatalf("BindClaims = %v, %v; want the created claim", written, err)
	}
	const name = "train-extended-resources-x7k2p"
	claim, err := client.ResourceV1().ResourceClaims("ns").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := claimState{Finalizers: []string{resourceapi.Finalizer}, Devices: []string{"n1/g0"}, Reserved: []string{"pods/train"}, Stamped: true}
	if diff := cmp.Diff(want, stateOf(claim)); diff != "" {
		t.Errorf("created claim (-want +got):\n%s", diff)
	}
	if !metav1.IsControlledBy(claim, pod) || claim.Annotations[resourceapi.ExtendedResourceClaimAnnotation] != "true" {
		t.Errorf("created claim metadata %+v", claim.ObjectMeta)
	}
	got, _ := client.CoreV1().Pods("ns").Get(ctx, "train", metav1.GetOptions{})
	st := got.Status.ExtendedResourceClaimStatus
	if st == nil || st.ResourceClaimName != name || len(st.RequestMappings) != 1 || st.RequestMappings[0].RequestName != "container-0-request-0" {
		t.Errorf("pod's extendedResourceClaimStatus %+v, want the claim and container-0-request-0", st)
	}

	c.UnreserveClaims(ctx, pod, written)
	if _, err := client.ResourceV1().ResourceClaims("ns").Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the extended resource claim after Unreserve: %v, want it deleted", err)
	}
}
