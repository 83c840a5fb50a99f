package whatif_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
	"github.com/reprieve/reprieve/internal/whatif"
)

// BenchmarkWhatifVolumes is BenchmarkWhatif's resources cluster where every
// node has a CSINode with an attach limit of 16 and every third pod a
// bound CSI volume, for a preemptor with a bound zonal volume and an
// unbound WaitForFirstConsumer claim: the volume plugins' PreFilter, their
// per-node state and the dry run over the filter overlay (no fast path on
// resource sums).
func BenchmarkWhatifVolumes(b *testing.B) {
	for _, nodes := range []int{500, 5000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			objs, podObj := benchCluster(nodes, 30, false)
			st := &objs.Storage
			st.StorageClasses = []*storagev1.StorageClass{rt.StorageClass("standard", csiDriver, false), rt.StorageClass("fast", csiDriver, true)}
			for _, n := range objs.Nodes {
				st.CSINodes = append(st.CSINodes, rt.CSINode(n.Name, csiDriver, 16))
			}
			for i, p := range objs.Pods {
				if i%3 != 0 {
					continue
				}
				claim := "c-" + p.Name
				st.PersistentVolumeClaims = append(st.PersistentVolumeClaims, rt.PVC("default", claim, "standard", "1Gi").BoundTo("pv-"+claim).Obj())
				st.PersistentVolumes = append(st.PersistentVolumes, rt.PV("pv-"+claim, "standard", csiDriver, "1Gi").ClaimedBy("default", claim).Obj())
				p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
			}
			st.PersistentVolumeClaims = append(st.PersistentVolumeClaims,
				rt.PVC("default", "mine", "standard", "1Gi").BoundTo("pv-mine").Obj(),
				rt.PVC("default", "scratch", "fast", "1Gi").Obj())
			st.PersistentVolumes = append(st.PersistentVolumes, rt.PV("pv-mine", "standard", csiDriver, "1Gi").Zone("zone-1").ClaimedBy("default", "mine").Obj())
			podObj.Spec.Volumes = []v1.Volume{
				{Name: "a", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "mine"}}},
				{Name: "b", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "scratch"}}},
			}
			snap, pod := benchSnapshot(b, objs, podObj)
			opts := whatif.Options{Now: now}
			var e whatif.Evaluator
			if d, err := e.Evaluate(snap, pod, opts); err != nil || d.NominatedNode == "" {
				b.Fatalf("benchmark cluster does not need preemption: %v %v", d, err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := e.Evaluate(snap, pod, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
