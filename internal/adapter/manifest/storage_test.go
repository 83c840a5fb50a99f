package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

const storageDocs = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: csi.example.com
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  storageClassName: fast
  accessModes: [ReadWriteOncePod]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  csi: {driver: csi.example.com, volumeHandle: h1}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec:
  drivers: [{name: csi.example.com, nodeID: n1, allocatable: {count: 2}}]
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.example.com}
spec: {attachRequired: true}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap-1, namespace: kube-system}
storageClassName: fast
capacity: 10Gi
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va-1}
spec: {attacher: csi.example.com, nodeName: n1, source: {persistentVolumeName: pv-1}}
`

// TestStorageKinds: the storage kinds are read, namespaced ones default to
// "default", and the API server's defaults the volume plugins rely on are
// applied (binding mode Immediate, volume mode Filesystem).
func TestStorageKinds(t *testing.T) {
	s := NewSet()
	if err := s.AddBytes("storage.yaml", []byte(storageDocs)); err != nil {
		t.Fatal(err)
	}
	st := s.Objects.Storage
	got := []int{len(st.StorageClasses), len(st.PersistentVolumeClaims), len(st.PersistentVolumes), len(st.CSINodes),
		len(st.CSIDrivers), len(st.CSIStorageCapacities), len(st.VolumeAttachments), len(s.Skipped)}
	if diff := cmp.Diff([]int{1, 1, 1, 1, 1, 1, 1, 0}, got); diff != "" {
		t.Fatalf("objects per kind (-want,+got):\n%s", diff)
	}
	if m := st.StorageClasses[0].VolumeBindingMode; m == nil || *m != storagev1.VolumeBindingImmediate {
		t.Errorf("volumeBindingMode = %v, want Immediate", m)
	}
	if c := st.PersistentVolumeClaims[0]; c.Namespace != "default" || c.Spec.VolumeMode == nil || *c.Spec.VolumeMode != v1.PersistentVolumeFilesystem {
		t.Errorf("claim namespace %q, volumeMode %v", c.Namespace, c.Spec.VolumeMode)
	}
	if pv := st.PersistentVolumes[0]; pv.Namespace != "" || pv.Spec.VolumeMode == nil {
		t.Errorf("PV namespace %q, volumeMode %v", pv.Namespace, pv.Spec.VolumeMode)
	}
	snap, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	if snap.PersistentVolumeClaim("default", "data") == nil || len(snap.VolumeAttachmentsOn("n1")) != 1 {
		t.Error("the snapshot lacks the claim or the attachment")
	}
}

// TestStorageErrors: a bad quantity and a wrong apiVersion name the object
// and the field.
func TestStorageErrors(t *testing.T) {
	tests := map[string]struct{ doc, want string }{
		"bad storage request": {
			doc:  "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {resources: {requests: {storage: lots}}}\n",
			want: "PersistentVolumeClaim default/c",
		},
		"wrong apiVersion": {
			doc:  "apiVersion: storage.k8s.io/v1beta1\nkind: CSINode\nmetadata: {name: n1}\n",
			want: `f.yaml: CSINode n1: apiVersion: unsupported "storage.k8s.io/v1beta1" (want "storage.k8s.io/v1")`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := NewSet().AddBytes("f.yaml", []byte(tc.doc))
			if err == nil {
				t.Fatal("no error")
			}
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want an InputError mentioning %q", err, tc.want)
			}
		})
	}
}
