package whatif_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
	"github.com/reprieve/reprieve/internal/whatif"
)

// TestDRAPreemptionNeverFreesDevices checks upstream v1.37's rule: a GPU pod
// preempts only where its devices are already free. On n1 the only GPU is
// held by a lower-priority pod's claim, so removing that pod frees cpu but
// not the device (DynamicResources has no PreFilterExtensions); on n2 the
// GPU is free and a cpu-only pod is the victim.
func TestDRAPreemptionNeverFreesDevices(t *testing.T) {
	lowGPU := rt.Pod("default", "low-gpu").Priority(1).Req("2", "").On("n1").Claim("low-gpu").Obj()
	low := rt.Pod("default", "low").Priority(1).Req("2", "").On("n2").Obj()
	gpuClass := rt.DeviceClass("gpu", `device.driver == "gpu.example.com"`)
	claims := func(withN2 bool) snapshot.Objects {
		objs := snapshot.Objects{
			Nodes: []*v1.Node{rt.Node("n1").CPU("2").Obj()},
			Pods:  []*v1.Pod{lowGPU},
			ResourceSlices: []*resourceapi.ResourceSlice{
				rt.GPUSlice("n1", rt.GPU{Name: "g0", Model: "a100", Memory: "40Gi"}),
			},
			DeviceClasses: []*resourceapi.DeviceClass{gpuClass},
			ResourceClaims: []*resourceapi.ResourceClaim{
				rt.Claim("default", "low-gpu", "gpu").AllocatedOn("n1", "g0").ReservedFor(lowGPU).Obj(),
				rt.Claim("default", "want-gpu", "gpu").Obj(),
			},
		}
		if withN2 {
			objs.Nodes = append(objs.Nodes, rt.Node("n2").CPU("2").Obj())
			objs.Pods = append(objs.Pods, low)
			objs.ResourceSlices = append(objs.ResourceSlices, rt.GPUSlice("n2", rt.GPU{Name: "g0", Model: "t4", Memory: "16Gi"}))
		}
		return objs
	}
	draDryRun := &whatif.PreemptionStatus{Code: "UnschedulableAndUnresolvable", Plugin: "DynamicResources", Reasons: []string{"cannot allocate all claims"}}
	tests := map[string]struct {
		withN2         bool
		wantNode       string
		wantVictims    []string
		wantN1DryRun   *whatif.PreemptionStatus
		wantN1Filtered string
	}{
		"the free GPU's node is chosen, the held GPU is not freed": {
			withN2: true, wantNode: "n2", wantVictims: []string{"default/low"}, wantN1DryRun: draDryRun, wantN1Filtered: "NodeResourcesFit",
		},
		"preemption cannot free the only GPU": {
			wantN1DryRun: draDryRun, wantN1Filtered: "NodeResourcesFit",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			snap, err := snapshot.New(claims(tc.withN2))
			if err != nil {
				t.Fatal(err)
			}
			pod, err := snap.NewPod(rt.Pod("default", "gpu-job").Priority(100).Req("1", "").Claim("want-gpu").Obj())
			if err != nil {
				t.Fatal(err)
			}
			d, err := whatif.Evaluate(snap, pod, whatif.Options{Now: now, Exhaustive: true})
			if err != nil {
				t.Fatal(err)
			}
			if d.NominatedNode != tc.wantNode {
				t.Errorf("nominated %q, want %q (summary %q)", d.NominatedNode, tc.wantNode, d.Summary)
			}
			var victims []string
			for _, v := range d.Victims {
				victims = append(victims, v.Pod)
			}
			if diff := cmp.Diff(tc.wantVictims, victims); diff != "" {
				t.Errorf("victims (-want +got):\n%s", diff)
			}
			n1 := d.NodeStatuses.Map()["n1"]
			if n1.Plugin != tc.wantN1Filtered || n1.Code != "Unschedulable" {
				t.Errorf("n1 filter status %s %s, want Unschedulable %s", n1.Code, n1.Plugin, tc.wantN1Filtered)
			}
			if diff := cmp.Diff(tc.wantN1DryRun, n1.Preemption); diff != "" {
				t.Errorf("n1 dry run (-want +got):\n%s", diff)
			}
			for _, w := range d.Warnings {
				if w == "resourceClaims: dynamic resource allocation is not modelled" {
					t.Errorf("warning %q is still given", w)
				}
			}
		})
	}
}

// TestDRAExample decides the pods of examples/dra, read as the command
// reads them, and checks what its README says.
func TestDRAExample(t *testing.T) {
	set, err := manifest.Load("../../examples/dra/cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		wantNode    string
		wantVictims []string
	}{
		"gpu-job":     {wantNode: "n2", wantVictims: []string{"default/low"}},
		"big-gpu-job": {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			snap, err := set.Build()
			if err != nil {
				t.Fatal(err)
			}
			obj, _, err := manifest.LoadPod("../../examples/dra/" + name + ".yaml")
			if err != nil {
				t.Fatal(err)
			}
			pod, err := snap.NewPod(obj)
			if err != nil {
				t.Fatal(err)
			}
			d, err := whatif.Evaluate(snap, pod, whatif.Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			var victims []string
			for _, v := range d.Victims {
				victims = append(victims, v.Pod)
			}
			if d.NominatedNode != tc.wantNode || !cmp.Equal(victims, tc.wantVictims) {
				t.Errorf("nominated %q with victims %v, want %q with %v (%s)", d.NominatedNode, victims, tc.wantNode, tc.wantVictims, d.Summary)
			}
			n1 := d.NodeStatuses.Map()["n1"]
			if n1.Preemption == nil || n1.Preemption.Plugin != "DynamicResources" {
				t.Errorf("n1: dry run %+v, want a DynamicResources rejection", n1.Preemption)
			}
		})
	}
}

// TestDRAPreemptionGate checks the DRAPreemption gate: victims' claims
// reserved only for victims release their devices, whole claims only.
func TestDRAPreemptionGate(t *testing.T) {
	gpuClass := rt.DeviceClass("gpu", `device.driver == "gpu.example.com"`)
	lowGPU := rt.Pod("default", "low-gpu").Priority(1).Req("1", "").On("n1").Claim("low-gpu").Obj()
	highGPU := rt.Pod("default", "high-gpu").Priority(1000).Req("1", "").On("n1").Claim("low-gpu").Obj()
	tests := map[string]struct {
		gate bool
		// shared reserves low-gpu's claim for a higher-priority pod too;
		// cpuPod adds a low-priority pod without claims on n1.
		shared, cpuPod bool
		wantNode       string
		wantVictims    []string
		wantN1         string // n1's filter status code
		// wantFreed are the devices each victim's claims release.
		wantFreed map[string][]string
	}{
		"off: the held GPU is never freed": {wantN1: "UnschedulableAndUnresolvable"},
		"on: the victim's claim releases its GPU": {
			gate: true, wantNode: "n1", wantVictims: []string{"default/low-gpu"}, wantN1: "Unschedulable",
			wantFreed: map[string][]string{"default/low-gpu": {"gpu.example.com/n1/g0"}},
		},
		"on: only the pod holding the GPU is a victim, the others are reprieved": {
			gate: true, cpuPod: true, wantNode: "n1", wantVictims: []string{"default/low-gpu"}, wantN1: "Unschedulable",
			wantFreed: map[string][]string{"default/low-gpu": {"gpu.example.com/n1/g0"}},
		},
		"on: a claim shared with a pod that stays keeps its GPU": {
			gate: true, shared: true, wantN1: "UnschedulableAndUnresolvable",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			claim := rt.Claim("default", "low-gpu", "gpu").AllocatedOn("n1", "g0").ReservedFor(lowGPU)
			pods := []*v1.Pod{lowGPU}
			if tc.shared {
				claim.ReservedFor(highGPU)
				pods = append(pods, highGPU)
			}
			if tc.cpuPod {
				pods = append(pods, rt.Pod("default", "low-cpu").Priority(1).Req("2", "").On("n1").Obj())
			}
			snap, err := snapshot.New(snapshot.Objects{
				// cpu is free: only the device stands in the way.
				Nodes:          []*v1.Node{rt.Node("n1").CPU("4").Obj()},
				Pods:           pods,
				ResourceSlices: []*resourceapi.ResourceSlice{rt.GPUSlice("n1", rt.GPU{Name: "g0", Model: "a100", Memory: "40Gi"})},
				DeviceClasses:  []*resourceapi.DeviceClass{gpuClass},
				ResourceClaims: []*resourceapi.ResourceClaim{claim.Obj(), rt.Claim("default", "want", "gpu").Obj()},
			})
			if err != nil {
				t.Fatal(err)
			}
			pod, err := snap.NewPod(rt.Pod("default", "gpu-job").Priority(100).Req("1", "").Claim("want").Obj())
			if err != nil {
				t.Fatal(err)
			}
			opts := whatif.Options{Now: now, Features: profile.Features{DRAPreemption: tc.gate}}
			d, err := whatif.Evaluate(snap, pod, opts)
			if err != nil {
				t.Fatal(err)
			}
			var victims []string
			for _, v := range d.Victims {
				victims = append(victims, v.Pod)
			}
			if d.NominatedNode != tc.wantNode || !cmp.Equal(victims, tc.wantVictims) {
				t.Errorf("nominated %q with victims %v, want %q with %v (%s)", d.NominatedNode, victims, tc.wantNode, tc.wantVictims, d.Summary)
			}
			freed := map[string][]string{}
			for _, v := range d.Victims {
				for _, h := range v.Holds {
					if h.Kind == whatif.HoldDevices && h.Claim == "default/low-gpu" {
						freed[v.Pod] = append(freed[v.Pod], h.Devices...)
					}
				}
			}
			if diff := cmp.Diff(tc.wantFreed, freed, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("devices freed per victim (-want +got):\n%s", diff)
			}
			if tc.wantNode == "" {
				if got := d.NodeStatuses.Map()["n1"]; got.Code != tc.wantN1 || got.Plugin != "DynamicResources" {
					t.Errorf("n1 status %s %s, want %s DynamicResources", got.Code, got.Plugin, tc.wantN1)
				}
			}
		})
	}
}
