package integration

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestReadWriteOncePodPreemption: upstream's TestReadWriteOncePodPreemption
// "preempt single pod" on a real API server. The preemptor's
// ReadWriteOncePod claim is in use by a low-priority pod on node-1; node-2
// has room and a low-priority pod of its own. Only evicting the claim's
// user helps, so the scheduler preempts it, not the other, and binds the
// preemptor to node-1.
func TestReadWriteOncePodPreemption(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := e.world(t)
	w.node(smallNode("node-1"))
	w.node(smallNode("node-2"))

	pvName := w.ns + "-pv"
	dir := v1.HostPathDirectoryOrCreate
	fs := v1.PersistentVolumeFilesystem
	rwop := []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
	size := resource.MustParse("1Gi")
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: v1.PersistentVolumeSpec{
			AccessModes:                   rwop,
			Capacity:                      v1.ResourceList{v1.ResourceStorage: size},
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/mnt1", Type: &dir}},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			VolumeMode:                    &fs,
			ClaimRef:                      &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: w.ns, Name: "data"},
		},
	}
	if _, err := w.Admin.CoreV1().PersistentVolumes().Create(w.ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the PV: %v", err)
	}
	t.Cleanup(func() { _ = w.Admin.CoreV1().PersistentVolumes().Delete(w.ctx, pvName, metav1.DeleteOptions{}) })
	empty := ""
	pvc := &v1.PersistentVolumeClaim{
		// Bound as the PV controller leaves it: volumeName and bind-completed.
		ObjectMeta: metav1.ObjectMeta{Name: "data", Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "true"}},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      rwop,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: size}},
			VolumeName:       pvName,
			StorageClassName: &empty,
			VolumeMode:       &fs,
		},
	}
	if _, err := w.Admin.CoreV1().PersistentVolumeClaims(w.ns).Create(w.ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the claim: %v", err)
	}

	w.running(mkPod("holder", low, "100m").Claim("volume", "data").Obj(), "node-1", at(0))
	w.running(mkPod("other", low, "100m").Obj(), "node-2", at(0))
	w.waitRunning("holder", "other")
	s := w.startScheduler(schedOpts{})
	w.pod(mkPod("preemptor", high, "100m").Claim("volume", "data").Obj())
	if got := w.waitBound("preemptor"); got != "node-1" {
		t.Fatalf("preemptor bound to %q, want node-1", got)
	}
	wantVictims(t, w, s, []string{"holder"}, []string{"other"})
	ev := w.waitEvent("preemptor", "FailedScheduling")
	want := "0/2 nodes are available: 2 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod. " +
		"preemption: found a potential placement for pod on node node-1, preempting 1 victims"
	if ev.Note != want {
		t.Errorf("FailedScheduling note:\n got %q\nwant %q", ev.Note, want)
	}
}
