package score

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// TestScoreVolumeBinding ports the score cases of upstream's
// TestVolumeBinding (StorageCapacityScoring on, the default shape): static
// bindings score the request's share of the matched PV, provisioning the
// request's share of the node's CSIStorageCapacity; the lower the share,
// the higher the score.
func TestScoreVolumeBinding(t *testing.T) {
	const driver = "csi.example.com"
	capacity := func(node, class, size string) *storagev1.CSIStorageCapacity {
		q := resource.MustParse(size)
		return &storagev1.CSIStorageCapacity{
			ObjectMeta:       metav1.ObjectMeta{Namespace: "default", Name: "cap-" + node},
			StorageClassName: class,
			NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelHostname: node}},
			Capacity:         &q,
		}
	}
	tracking := true
	drivers := []*storagev1.CSIDriver{{ObjectMeta: metav1.ObjectMeta{Name: driver}, Spec: storagev1.CSIDriverSpec{StorageCapacity: &tracking}}}
	tests := map[string]struct {
		pod        *v1.Pod
		claims     []*v1.PersistentVolumeClaim
		pvs        []*v1.PersistentVolume
		capacities []*storagev1.CSIStorageCapacity
		feasible   []string
		want       []int64
	}{
		"pod without claims": {
			pod: rt.Pod("default", "p").Obj(), feasible: []string{"node-a", "node-b"}, want: []int64{0, 0},
		},
		"local volumes, the smallest fit per node": {
			pod:    rt.Pod("default", "p").PVC("data", "pvc-a").Obj(),
			claims: []*v1.PersistentVolumeClaim{rt.PVC("default", "pvc-a", "wait", "50Gi").Obj()},
			pvs: []*v1.PersistentVolume{
				rt.PV("pv-a-0", "wait", driver, "200Gi").NodeAffinityIn(v1.LabelHostname, "node-a").Obj(),
				rt.PV("pv-a-1", "wait", driver, "200Gi").NodeAffinityIn(v1.LabelHostname, "node-a").Obj(),
				rt.PV("pv-b-0", "wait", driver, "100Gi").NodeAffinityIn(v1.LabelHostname, "node-b").Obj(),
				rt.PV("pv-b-1", "wait", driver, "100Gi").NodeAffinityIn(v1.LabelHostname, "node-b").Obj(),
			},
			feasible: []string{"node-a", "node-b"}, want: []int64{75, 50},
		},
		"storage capacity": {
			pod:        rt.Pod("default", "p").PVC("data", "pvc-dynamic").Obj(),
			claims:     []*v1.PersistentVolumeClaim{rt.PVC("default", "pvc-dynamic", "wait-capacity", "10Gi").Obj()},
			capacities: []*storagev1.CSIStorageCapacity{capacity("node-a", "wait-capacity", "100Gi"), capacity("node-b", "wait-capacity", "50Gi"), capacity("node-c", "wait-capacity", "10Gi")},
			feasible:   []string{"node-a", "node-b", "node-c"}, want: []int64{90, 80, 0},
		},
		"two claims of one class share its capacity": {
			pod: rt.Pod("default", "p").PVC("a", "pvc-dynamic-0").PVC("b", "pvc-dynamic-1").Obj(),
			claims: []*v1.PersistentVolumeClaim{
				rt.PVC("default", "pvc-dynamic-0", "wait-capacity", "50Gi").Obj(),
				rt.PVC("default", "pvc-dynamic-1", "wait-capacity", "50Gi").Obj(),
			},
			capacities: []*storagev1.CSIStorageCapacity{capacity("node-a", "wait-capacity", "100Gi")},
			feasible:   []string{"node-a"}, want: []int64{0},
		},
		"static bindings win over provisioning": {
			pod: rt.Pod("default", "p").PVC("a", "pvc-static").PVC("b", "pvc-dynamic").Obj(),
			claims: []*v1.PersistentVolumeClaim{
				rt.PVC("default", "pvc-static", "wait", "50Gi").Obj(),
				rt.PVC("default", "pvc-dynamic", "wait-capacity", "10Gi").Obj(),
			},
			pvs: []*v1.PersistentVolume{
				rt.PV("pv-a", "wait", driver, "200Gi").NodeAffinityIn(v1.LabelHostname, "node-a").Obj(),
				rt.PV("pv-b", "wait", driver, "100Gi").NodeAffinityIn(v1.LabelHostname, "node-b").Obj(),
			},
			capacities: []*storagev1.CSIStorageCapacity{capacity("node-a", "wait-capacity", "100Gi"), capacity("node-b", "wait-capacity", "100Gi")},
			// Only the static bindings count (50 of 200, 50 of 100); the
			// claim to provision (10 of 100) would score 90 on both.
			feasible: []string{"node-a", "node-b"}, want: []int64{75, 50},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var nodes []*v1.Node
			for _, n := range []string{"node-a", "node-b", "node-c"} {
				nodes = append(nodes, rt.Node(n).CPU("4").Obj())
			}
			st := snapshot.StorageObjects{
				StorageClasses:         []*storagev1.StorageClass{rt.StorageClass("wait", "kubernetes.io/no-provisioner", true), rt.StorageClass("wait-capacity", driver, true)},
				CSIDrivers:             drivers,
				PersistentVolumes:      tc.pvs,
				PersistentVolumeClaims: tc.claims,
				CSIStorageCapacities:   tc.capacities,
			}
			snap, err := snapshot.New(snapshot.Objects{Nodes: nodes, Storage: st})
			if err != nil {
				t.Fatal(err)
			}
			p, err := snap.NewPod(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			c := &cycle{snap: snap, pod: p, obj: p.Obj(), cfg: DefaultConfig()}
			for _, n := range tc.feasible {
				c.feasible = append(c.feasible, snap.Node(n))
			}
			raw, norm, skip, err := scoreVolumeBinding(c)
			if err != nil || skip {
				t.Fatalf("skip %v, error %v", skip, err)
			}
			if diff := cmp.Diff(tc.want, raw); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
			if !cmp.Equal(raw, norm) {
				t.Errorf("normalized %v differ from raw %v: VolumeBinding has no NormalizeScore", norm, raw)
			}
		})
	}
}
