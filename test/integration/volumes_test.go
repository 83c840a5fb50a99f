package integration

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pvController is the controller manager's persistent volume binder, the
// controller that binds claims to volumes in these tests.
const pvController = "persistentvolume-binder-controller"

// createClass creates a WaitForFirstConsumer StorageClass of provisioner,
// limited to the nodes named in hosts when there are any, and deletes it
// when the test ends.
func (w *world) createClass(name, provisioner string, hosts ...string) {
	w.t.Helper()
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	class := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &wffc,
	}
	if len(hosts) > 0 {
		class.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{
			Key: v1.LabelHostname, Values: hosts,
		}}}}
	}
	if _, err := w.Admin.StorageV1().StorageClasses().Create(w.ctx, class, metav1.CreateOptions{}); err != nil {
		w.t.Fatalf("creating the class %s: %v", name, err)
	}
	w.t.Cleanup(func() {
		_ = w.Admin.StorageV1().StorageClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// createPV creates pv and deletes it when the test ends.
func (w *world) createPV(pv *v1.PersistentVolume) {
	w.t.Helper()
	if _, err := w.Admin.CoreV1().PersistentVolumes().Create(w.ctx, pv, metav1.CreateOptions{}); err != nil {
		w.t.Fatalf("creating the PV %s: %v", pv.Name, err)
	}
	w.t.Cleanup(func() {
		_ = w.Admin.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
	})
}

// createClaim creates a 1Gi filesystem claim of class (nil: no class
// field, "": no class) with the given access modes in the world's
// namespace.
func (w *world) createClaim(name string, class *string, modes ...v1.PersistentVolumeAccessMode) {
	w.t.Helper()
	fs := v1.PersistentVolumeFilesystem
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      modes,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			StorageClassName: class,
			VolumeMode:       &fs,
		},
	}
	if _, err := w.Admin.CoreV1().PersistentVolumeClaims(w.ns).Create(w.ctx, pvc, metav1.CreateOptions{}); err != nil {
		w.t.Fatalf("creating the claim %s: %v", name, err)
	}
}

// claim reads the claim name of the world's namespace.
func (w *world) claim(name string) (*v1.PersistentVolumeClaim, error) {
	return w.Admin.CoreV1().PersistentVolumeClaims(w.ns).Get(w.ctx, name, metav1.GetOptions{})
}

// waitClaimBound waits until the PV controller has bound the claim name
// to the volume pv: the claim Bound with volumeName and bind-completed, the
// volume Bound with the claim's claimRef.
func (w *world) waitClaimBound(name, pv string) {
	w.t.Helper()
	w.waitFor("the PV controller to bind claim "+name+" to "+pv, waitTimeout, func() (bool, error) {
		c, err := w.claim(name)
		if err != nil {
			return false, err
		}
		if c.Status.Phase != v1.ClaimBound || c.Spec.VolumeName != pv || !metav1.HasAnnotation(c.ObjectMeta, "pv.kubernetes.io/bind-completed") {
			return false, nil
		}
		got, err := w.Admin.CoreV1().PersistentVolumes().Get(w.ctx, pv, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ref := got.Spec.ClaimRef
		return got.Status.Phase == v1.VolumeBound && ref != nil && ref.Namespace == w.ns && ref.Name == name && ref.UID == c.UID, nil
	})
}

// onNode is a required node affinity to the node host.
func onNode(host string) *v1.VolumeNodeAffinity {
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{host}}},
	}}}}
}

// TestReadWriteOncePodPreemption: upstream's TestReadWriteOncePodPreemption
// "preempt single pod" on a real API server, with kube-controller-manager's
// PV controller binding the claim. The preemptor's ReadWriteOncePod claim
// is in use by a low-priority pod on node-1; node-2 has room and a
// low-priority pod of its own. Only evicting the claim's user helps, so
// the scheduler preempts it, not the other, and binds the preemptor to
// node-1.
func TestReadWriteOncePodPreemption(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.startControllerManager(pvController)
	w := e.world(t)
	w.node(smallNode("node-1"))
	w.node(smallNode("node-2"))

	pvName := w.ns + "-pv"
	dir := v1.HostPathDirectoryOrCreate
	fs := v1.PersistentVolumeFilesystem
	rwop := []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
	w.createPV(&v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: v1.PersistentVolumeSpec{
			AccessModes:                   rwop,
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/mnt1", Type: &dir}},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			VolumeMode:                    &fs,
			// Reserved for the claim, so that no other test's claim takes it;
			// the PV controller does the binding.
			ClaimRef: &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: w.ns, Name: "data"},
		},
	})
	noClass := ""
	w.createClaim("data", &noClass, v1.ReadWriteOncePod)
	w.waitClaimBound("data", pvName)

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
// and a static local PV on node-2 only, with kube-controller-manager's PV
// controller running. The scheduler picks node-2 and writes the PV's
// claimRef (VolumeBinding's PreBind); the PV controller then binds the
// claim, and only then does the scheduler bind the pod.
func TestWaitForFirstConsumerBinding(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.startControllerManager(pvController)
	w := e.world(t)
	w.node(smallNode("node-1"))
	w.node(smallNode("node-2"))

	class := w.ns + "-local"
	w.createClass(class, "kubernetes.io/no-provisioner")
	pvName := w.ns + "-local"
	fs := v1.PersistentVolumeFilesystem
	w.createPV(&v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: v1.PersistentVolumeSpec{
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disks/1"}},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			StorageClassName:              class,
			VolumeMode:                    &fs,
			NodeAffinity:                  onNode("node-2"),
		},
	})
	w.createClaim("data", &class, v1.ReadWriteOnce)
	// The PV controller leaves a WaitForFirstConsumer claim alone until the
	// scheduler has chosen; give it a few resyncs to prove it.
	w.waitFor("the PV controller to make the PV Available", waitTimeout, func() (bool, error) {
		got, err := w.Admin.CoreV1().PersistentVolumes().Get(w.ctx, pvName, metav1.GetOptions{})
		return err == nil && got.Status.Phase == v1.VolumeAvailable, err
	})
	if c, err := w.claim("data"); err != nil || c.Status.Phase != v1.ClaimPending || c.Spec.VolumeName != "" {
		t.Fatalf("claim before scheduling: %+v, %v; want Pending and unbound", c, err)
	}

	w.startScheduler(schedOpts{})
	w.pod(mkPod("p", low, "100m").PVC("volume", "data").Obj())
	if got := w.waitBound("p"); got != "node-2" {
		t.Fatalf("pod bound to %q, want node-2 (its PV's node)", got)
	}
	// The pod is bound only after its claim: the PV controller has bound
	// the claim by now (its status may follow a moment later).
	c, err := w.claim("data")
	if err != nil {
		t.Fatal(err)
	}
	if c.Spec.VolumeName != pvName || !metav1.HasAnnotation(c.ObjectMeta, "pv.kubernetes.io/bind-completed") {
		t.Fatalf("claim once the pod is bound: volume %q, annotations %v; want bound to %s", c.Spec.VolumeName, c.Annotations, pvName)
	}
	w.waitClaimBound("data", pvName)
}

// TestDynamicProvisioning: a pod with a WaitForFirstConsumer claim of a
// class whose provisioner may only provision on node-2. The scheduler
// picks node-2 and writes volume.kubernetes.io/selected-node on the claim
// (VolumeBinding's PreBind); the test provisions the volume there as an
// external provisioner would (no CSI driver runs), the PV controller binds
// the claim to it, and only then does the scheduler bind the pod.
func TestDynamicProvisioning(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.startControllerManager(pvController)
	w := e.world(t)
	w.node(smallNode("node-1"))
	w.node(smallNode("node-2"))

	class := w.ns + "-fast"
	const provisioner = "fast.csi.example.com"
	w.createClass(class, provisioner, "node-2")
	w.createClaim("data", &class, v1.ReadWriteOnce)

	w.startScheduler(schedOpts{})
	w.pod(mkPod("p", low, "100m").PVC("volume", "data").Obj())

	// The provisioner's part: wait for the scheduler's choice, and for the
	// PV controller to hand the claim to the provisioner.
	var claim *v1.PersistentVolumeClaim
	w.waitFor("the scheduler to select a node for the claim", waitTimeout, func() (bool, error) {
		c, err := w.claim("data")
		if err != nil {
			return false, err
		}
		claim = c
		return c.Annotations["volume.kubernetes.io/selected-node"] != "" && c.Annotations["volume.kubernetes.io/storage-provisioner"] == provisioner, nil
	})
	node := claim.Annotations["volume.kubernetes.io/selected-node"]
	if node != "node-2" {
		t.Fatalf("selected node %q, want node-2 (the class's allowed topology)", node)
	}
	if p := w.mustGet("p"); p.Spec.NodeName != "" {
		t.Fatalf("pod bound to %q before its claim", p.Spec.NodeName)
	}
	pvName := "pvc-" + string(claim.UID)
	fs := v1.PersistentVolumeFilesystem
	w.createPV(&v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName, Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": provisioner}},
		Spec: v1.PersistentVolumeSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity:    v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{
				Driver: provisioner, VolumeHandle: pvName,
			}},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			StorageClassName:              class,
			VolumeMode:                    &fs,
			NodeAffinity:                  onNode(node),
			ClaimRef: &v1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: w.ns, Name: "data", UID: claim.UID, ResourceVersion: claim.ResourceVersion,
			},
		},
	})
	if got := w.waitBound("p"); got != "node-2" {
		t.Fatalf("pod bound to %q, want node-2", got)
	}
	w.waitClaimBound("data", pvName)
}
