package reprievetest

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PVC adds a volume named volume that uses the PersistentVolumeClaim
// claimName.
func (b *PodBuilder) PVC(volume, claimName string) *PodBuilder {
	b.p.Spec.Volumes = append(b.p.Spec.Volumes, v1.Volume{Name: volume,
		VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claimName}}})
	return b
}

// Ephemeral adds a generic ephemeral volume of the storage class.
func (b *PodBuilder) Ephemeral(volume, class string) *PodBuilder {
	b.p.Spec.Volumes = append(b.p.Spec.Volumes, v1.Volume{Name: volume, VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
		VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &class}}}}})
	return b
}

// GCEDisk adds an inline GCE persistent disk volume.
func (b *PodBuilder) GCEDisk(volume, pdName string, readOnly bool) *PodBuilder {
	b.p.Spec.Volumes = append(b.p.Spec.Volumes, v1.Volume{Name: volume,
		VolumeSource: v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: pdName, ReadOnly: readOnly}}})
	return b
}

// PVCBuilder builds a v1.PersistentVolumeClaim.
type PVCBuilder struct{ c *v1.PersistentVolumeClaim }

// PVC starts a pending ReadWriteOnce claim of the storage class asking for size.
func PVC(ns, name, class, size string) *PVCBuilder {
	fs := v1.PersistentVolumeFilesystem
	return &PVCBuilder{c: &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-pvc-" + ns + "-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: &class,
			VolumeMode:       &fs,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}}
}

// RWOP makes the claim ReadWriteOncePod.
func (b *PVCBuilder) RWOP() *PVCBuilder {
	b.c.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
	return b
}

// BoundTo binds the claim to the named PV, as the PV controller does.
func (b *PVCBuilder) BoundTo(pv string) *PVCBuilder {
	b.c.Spec.VolumeName = pv
	metav1.SetMetaDataAnnotation(&b.c.ObjectMeta, "pv.kubernetes.io/bind-completed", "yes")
	b.c.Status.Phase = v1.ClaimBound
	return b
}

// OwnedBy makes pod the claim's controller (a generic ephemeral volume's claim).
func (b *PVCBuilder) OwnedBy(pod *v1.Pod) *PVCBuilder {
	t := true
	b.c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: &t}}
	return b
}

// Obj returns the claim.
func (b *PVCBuilder) Obj() *v1.PersistentVolumeClaim { return b.c }

// PVBuilder builds a v1.PersistentVolume.
type PVBuilder struct{ pv *v1.PersistentVolume }

// PV starts an available ReadWriteOnce CSI volume of the class and driver.
func PV(name, class, driver, size string) *PVBuilder {
	fs := v1.PersistentVolumeFilesystem
	return &PVBuilder{pv: &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-pv-" + name), Labels: map[string]string{}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource:        v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "handle-" + name}},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			StorageClassName:              class,
			VolumeMode:                    &fs,
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}}
}

// Zone labels the volume with a zone and requires nodes of that zone.
func (b *PVBuilder) Zone(zone string) *PVBuilder {
	b.pv.Labels[v1.LabelTopologyZone] = zone
	return b.NodeAffinityIn(v1.LabelTopologyZone, zone)
}

// NodeAffinityIn requires nodes whose label key has one of the values.
func (b *PVBuilder) NodeAffinityIn(key string, values ...string) *PVBuilder {
	b.pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}}}}}
	return b
}

// ClaimedBy binds the volume to the claim namespace/name.
func (b *PVBuilder) ClaimedBy(ns, name string) *PVBuilder {
	b.pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: name, UID: types.UID("uid-pvc-" + ns + "-" + name)}
	b.pv.Status.Phase = v1.VolumeBound
	return b
}

// Obj returns the volume.
func (b *PVBuilder) Obj() *v1.PersistentVolume { return b.pv }

// StorageClass returns a class with the provisioner and binding mode
// (WaitForFirstConsumer when wffc, else Immediate).
func StorageClass(name, provisioner string, wffc bool) *storagev1.StorageClass {
	mode := storagev1.VolumeBindingImmediate
	if wffc {
		mode = storagev1.VolumeBindingWaitForFirstConsumer
	}
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
}

// CSINode returns the CSINode of node with driver and its attach limit
// (none when limit < 0).
func CSINode(node, driver string, limit int32) *storagev1.CSINode {
	d := storagev1.CSINodeDriver{Name: driver, NodeID: node}
	if limit >= 0 {
		d.Allocatable = &storagev1.VolumeNodeResources{Count: &limit}
	}
	return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{d}}}
}

// VolumeAttachment returns an attachment of the PV to node by driver.
func VolumeAttachment(name, driver, pv, node string) *storagev1.VolumeAttachment {
	return &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.VolumeAttachmentSpec{
		Attacher: driver, NodeName: node, Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}}}
}
