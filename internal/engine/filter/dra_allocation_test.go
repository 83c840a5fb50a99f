package filter_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestDRAAllocation checks Reserve's answer for a node the Filter accepted:
// the devices allocated to each unallocated claim (none held by another
// claim), allocated claims only to be reserved, claims reserved for the pod
// left out.
func TestDRAAllocation(t *testing.T) {
	running := rt.Pod("default", "running").On("n1").Obj()
	pod := rt.Pod("default", "p").Obj()
	tests := map[string]struct {
		claims []*resourceapi.ResourceClaim
		pod    *v1.Pod
		node   string
		// want is, per claim to write, "name=devices" or "name reserve".
		want []string
	}{
		"no claims": {pod: pod, node: "n1"},
		"the free device of n1": {
			claims: []*resourceapi.ResourceClaim{
				rt.Claim("default", "held", "gpu").AllocatedOn("n1", "g0").ReservedFor(running).Obj(),
				rt.Claim("default", "c", "gpu").Obj(),
			},
			pod:  rt.Pod("default", "p").Claim("c").Obj(),
			node: "n1",
			want: []string{"c=n1/g1"},
		},
		"the t4 of n2": {
			claims: []*resourceapi.ResourceClaim{rt.Claim("default", "c", "gpu").Obj()},
			pod:    rt.Pod("default", "p").Claim("c").Obj(),
			node:   "n2",
			want:   []string{"c=n2/g0"},
		},
		"two claims, one allocated already": {
			claims: []*resourceapi.ResourceClaim{
				rt.Claim("default", "held", "gpu").AllocatedOn("n1", "g0").ReservedFor(running).Obj(),
				rt.Claim("default", "c", "gpu-big").Obj(),
			},
			pod:  rt.Pod("default", "p").Claim("held").Claim("c").Obj(),
			node: "n1",
			want: []string{"held reserve", "c=n1/g1"},
		},
		"reserved for the pod already: nothing to do": {
			claims: []*resourceapi.ResourceClaim{rt.Claim("default", "c", "gpu").AllocatedOn("n1", "g0").ReservedFor(pod).Obj()},
			pod:    rt.Pod("default", "p").Claim("c").Obj(),
			node:   "n1",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			snap, err := snapshot.New(draCluster(tc.claims, running))
			if err != nil {
				t.Fatal(err)
			}
			p, err := snap.NewPod(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			c := filter.NewCycle(snap, p, filter.Options{Parallelism: 1})
			n := snap.Node(tc.node)
			if s := c.FilterOne(n); !s.IsSuccess() {
				t.Fatalf("Filter on %s: %v", tc.node, s)
			}
			a, err := c.DRAAllocation(n)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			if a != nil {
				for _, dc := range a.Claims {
					if dc.Allocation == nil {
						got = append(got, dc.Claim.Name+" reserve")
						continue
					}
					s := dc.Claim.Name + "="
					for _, r := range dc.Allocation.Devices.Results {
						s += r.Pool + "/" + r.Device
					}
					if dc.Allocation.NodeSelector == nil {
						t.Errorf("claim %s: allocation without a node selector", dc.Claim.Name)
					}
					got = append(got, s)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("claims (-want +got):\n%s", diff)
			}
		})
	}
}
