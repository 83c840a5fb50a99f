package whatif_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
	"github.com/reprieve/reprieve/internal/whatif"
)

const csiDriver = "csi.example.com"

// TestVolumePreemption: preemption frees a ReadWriteOncePod claim only on
// the node of its user, and an attach slot only when no VolumeAttachment
// keeps the victim's volume attached; the decision names the plugins.
func TestVolumePreemption(t *testing.T) {
	nodes := []*v1.Node{rt.Node("node-a").CPU("4").Zone("a").Obj(), rt.Node("node-b").CPU("4").Zone("b").Obj()}
	classes := []*storagev1.StorageClass{rt.StorageClass("standard", csiDriver, false)}
	boundClaim := func(name string) (*v1.PersistentVolumeClaim, *v1.PersistentVolume) {
		return rt.PVC("default", name, "standard", "1Gi").BoundTo("pv-" + name).Obj(),
			rt.PV("pv-"+name, "standard", csiDriver, "1Gi").ClaimedBy("default", name).Obj()
	}
	preemptor := rt.Pod("default", "p").Priority(100).Req("1", "").PVC("data", "mine").Obj()
	type want struct {
		node     string
		victims  []string
		statuses map[string]string
		// holds are the victims' volume holds, "Kind Plugin claim-or-volume".
		holds map[string][]string
	}
	cases := map[string]struct {
		pods   []*v1.Pod
		claims []string
		rwop   bool
		// preemptorCPU overrides the preemptor's 1 CPU request; preemptor
		// replaces it.
		preemptorCPU string
		preemptor    *v1.Pod
		csiNodes     []*storagev1.CSINode
		vas          []*storagev1.VolumeAttachment
		want         want
	}{
		"ReadWriteOncePod claim held by a lower-priority pod": {
			pods: []*v1.Pod{
				rt.Pod("default", "other").Priority(1).Req("1", "").On("node-a").Obj(),
				rt.Pod("default", "holder").Priority(1).Req("1", "").PVC("data", "mine").On("node-b").Obj(),
			},
			claims: []string{"mine"}, rwop: true,
			want: want{node: "node-b", victims: []string{"default/holder"}, statuses: map[string]string{
				// Removing "other" does not free the claim.
				"node-a": "Unschedulable VolumeRestrictions; dry run: Unschedulable VolumeRestrictions: " + filter.ReasonRWOPConflict,
			}, holds: map[string][]string{"default/holder": {"ReadWriteOncePodClaim VolumeRestrictions default/mine"}}},
		},
		"ReadWriteOncePod claim and CPU": {
			pods: []*v1.Pod{
				rt.Pod("default", "other").Priority(1).Req("1", "").On("node-a").Obj(),
				rt.Pod("default", "holder").Priority(1).Req("1", "").PVC("data", "mine").On("node-b").Obj(),
				rt.Pod("default", "big").Priority(1).Req("3", "").On("node-b").Obj(),
			},
			claims: []string{"mine"}, rwop: true, preemptorCPU: "2",
			// Both go; only the claim's user holds something of the pod's.
			want: want{node: "node-b", victims: []string{"default/holder", "default/big"}, statuses: map[string]string{
				"node-a": "Unschedulable VolumeRestrictions; dry run: Unschedulable VolumeRestrictions: " + filter.ReasonRWOPConflict,
			}, holds: map[string][]string{"default/holder": {"ReadWriteOncePodClaim VolumeRestrictions default/mine"}}},
		},
		"attach slot held by a lower-priority pod": {
			pods: []*v1.Pod{
				rt.Pod("default", "low").Priority(1).Req("1", "").PVC("data", "held").On("node-a").Obj(),
				rt.Pod("default", "high").Priority(1000).Req("1", "").PVC("data", "kept").On("node-b").Obj(),
			},
			claims:   []string{"mine", "held", "kept"},
			csiNodes: []*storagev1.CSINode{rt.CSINode("node-a", csiDriver, 1), rt.CSINode("node-b", csiDriver, 1)},
			want: want{node: "node-a", victims: []string{"default/low"}, statuses: map[string]string{
				"node-b": "Unschedulable NodeVolumeLimits; dry run: UnschedulableAndUnresolvable : No preemption victims found for incoming pod",
			}, holds: map[string][]string{"default/low": {"AttachSlot NodeVolumeLimits " + csiDriver + "/handle-pv-held"}}},
		},
		"inline disk in use read-write": {
			pods: []*v1.Pod{
				rt.Pod("default", "disk-user").Priority(1).Req("1", "").GCEDisk("d", "pd-1", false).On("node-a").Obj(),
				rt.Pod("default", "cpu-user").Priority(5).Req("3", "").On("node-b").Obj(),
				rt.Pod("default", "other").Priority(1).Req("1", "").On("node-a").Obj(),
			},
			preemptor: rt.Pod("default", "p").Priority(100).Req("2", "").GCEDisk("d", "pd-1", false).Obj(),
			// On node-a only the disk's user goes ("other" is reprieved);
			// node-b's victim has the higher priority, so node-a wins. The
			// victim holds the disk, not an attach slot or a claim.
			want: want{node: "node-a", victims: []string{"default/disk-user"}, statuses: map[string]string{},
				holds: map[string][]string{"default/disk-user": {"InlineDisk VolumeRestrictions "}}},
		},
		"attachment still present": {
			pods: []*v1.Pod{
				rt.Pod("default", "low").Priority(1).Req("1", "").PVC("data", "held").On("node-a").Obj(),
				rt.Pod("default", "high").Priority(1000).Req("1", "").PVC("data", "kept").On("node-b").Obj(),
			},
			claims:   []string{"mine", "held", "kept"},
			csiNodes: []*storagev1.CSINode{rt.CSINode("node-a", csiDriver, 1), rt.CSINode("node-b", csiDriver, 1)},
			vas:      []*storagev1.VolumeAttachment{rt.VolumeAttachment("va-held", csiDriver, "pv-held", "node-a")},
			want: want{statuses: map[string]string{
				// The attachment of pv-held counts without its pod.
				"node-a": "Unschedulable NodeVolumeLimits; dry run: Unschedulable NodeVolumeLimits: " + filter.ReasonMaxVolumeCount,
				"node-b": "Unschedulable NodeVolumeLimits; dry run: UnschedulableAndUnresolvable : No preemption victims found for incoming pod",
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := snapshot.StorageObjects{StorageClasses: classes, CSINodes: tc.csiNodes, VolumeAttachments: tc.vas}
			for _, c := range tc.claims {
				pvc, pv := boundClaim(c)
				if tc.rwop {
					pvc.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
				}
				st.PersistentVolumeClaims = append(st.PersistentVolumeClaims, pvc)
				st.PersistentVolumes = append(st.PersistentVolumes, pv)
			}
			snap, err := snapshot.New(snapshot.Objects{Nodes: nodes, Pods: tc.pods, Storage: st})
			if err != nil {
				t.Fatal(err)
			}
			p := preemptor
			if tc.preemptorCPU != "" {
				p = rt.Pod("default", "p").Priority(100).Req(tc.preemptorCPU, "").PVC("data", "mine").Obj()
			}
			if tc.preemptor != nil {
				p = tc.preemptor
			}
			pod, err := snap.NewPod(p)
			if err != nil {
				t.Fatal(err)
			}
			d, err := whatif.Evaluate(snap, pod, whatif.Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			got := want{node: d.NominatedNode, statuses: map[string]string{}}
			for _, v := range d.Victims {
				got.victims = append(got.victims, v.Pod)
				for _, h := range v.Holds {
					if got.holds == nil {
						got.holds = map[string][]string{}
					}
					got.holds[v.Pod] = append(got.holds[v.Pod], h.Kind+" "+h.Plugin+" "+h.Claim+h.Volume)
				}
			}
			for n, s := range d.NodeStatuses.Map() {
				line := s.Code + " " + s.Plugin
				if s.Preemption != nil {
					line += "; dry run: " + s.Preemption.Code + " " + s.Preemption.Plugin + ": " + s.Preemption.Reasons[0]
				}
				got.statuses[n] = line
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
			if len(d.Warnings) != 0 {
				t.Errorf("warnings %v, want none: volumes are modelled", d.Warnings)
			}
		})
	}
}
