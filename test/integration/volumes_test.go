package integration

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
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

	w.running(mkPod("holder", low, "100m").PVC("volume", "data").Obj(), "node-1", at(0))
	w.running(mkPod("other", low, "100m").Obj(), "node-2", at(0))
	w.waitRunning("holder", "other")
	s := w.startScheduler(schedOpts{})
	w.pod(mkPod("preemptor", high, "100m").PVC("volume", "data").Obj())
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

// TestWaitForFirstConsumerBinding: a pod with a WaitForFirstConsumer claim
// and a static local PV on node-2 only. The scheduler picks node-2, writes
// the PV's claimRef (VolumeBinding's PreBind) and binds the pod only once
// the claim is bound, which the test does as the PV controller would.
func TestWaitForFirstConsumerBinding(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := e.world(t)
	w.node(smallNode("node-1"))
	w.node(smallNode("node-2"))

	class := w.ns + "-local"
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	if _, err := w.Admin.StorageV1().StorageClasses().Create(w.ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the class: %v", err)
	}
	t.Cleanup(func() {
		_ = w.Admin.StorageV1().StorageClasses().Delete(context.Background(), class, metav1.DeleteOptions{})
	})
	pvName := w.ns + "-local"
	fs := v1.PersistentVolumeFilesystem
	size := resource.MustParse("1Gi")
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: v1.PersistentVolumeSpec{
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity:                      v1.ResourceList{v1.ResourceStorage: size},
			PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disks/1"}},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              class,
			VolumeMode:                    &fs,
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{"node-2"}}},
			}}}},
		},
	}
	if _, err := w.Admin.CoreV1().PersistentVolumes().Create(w.ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the PV: %v", err)
	}
	// The API server only sets a new PV's phase through the status.
	if got, err := w.Admin.CoreV1().PersistentVolumes().Get(w.ctx, pvName, metav1.GetOptions{}); err == nil {
		got.Status.Phase = v1.VolumeAvailable
		if _, err := w.Admin.CoreV1().PersistentVolumes().UpdateStatus(w.ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("making the PV available: %v", err)
		}
	}
	t.Cleanup(func() {
		_ = w.Admin.CoreV1().PersistentVolumes().Delete(context.Background(), pvName, metav1.DeleteOptions{})
	})
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: size}},
			StorageClassName: &class,
			VolumeMode:       &fs,
		},
	}
	if _, err := w.Admin.CoreV1().PersistentVolumeClaims(w.ns).Create(w.ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the claim: %v", err)
	}

	w.startScheduler(schedOpts{})
	w.pod(mkPod("p", low, "100m").PVC("volume", "data").Obj())

	// The PV controller's part: once the scheduler bound the PV to the
	// claim, bind the claim to the PV.
	w.waitFor("the scheduler to write the PV's claimRef", waitTimeout, func() (bool, error) {
		got, err := w.Admin.CoreV1().PersistentVolumes().Get(w.ctx, pvName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return got.Spec.ClaimRef != nil && got.Spec.ClaimRef.Name == "data" && got.Spec.ClaimRef.Namespace == w.ns, nil
	})
	if p := w.mustGet("p"); p.Spec.NodeName != "" {
		t.Fatalf("pod bound to %q before its claim", p.Spec.NodeName)
	}
	claim, err := w.Admin.CoreV1().PersistentVolumeClaims(w.ns).Get(w.ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claim.Spec.VolumeName = pvName
	metav1.SetMetaDataAnnotation(&claim.ObjectMeta, "pv.kubernetes.io/bind-completed", "yes")
	if _, err := w.Admin.CoreV1().PersistentVolumeClaims(w.ns).Update(w.ctx, claim, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("binding the claim: %v", err)
	}
	if got := w.waitBound("p"); got != "node-2" {
		t.Fatalf("pod bound to %q, want node-2 (its PV's node)", got)
	}
}
