package snapshot_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

func pvNames(pvs []*v1.PersistentVolume) []string {
	var out []string
	for _, pv := range pvs {
		out = append(out, pv.Name)
	}
	return out
}

// TestStorageIndex: PVs are listed by class in name order, before and
// after incremental changes, and a list handed out does not change.
func TestStorageIndex(t *testing.T) {
	snap, err := snapshot.New(snapshot.Objects{Storage: snapshot.StorageObjects{PersistentVolumes: []*v1.PersistentVolume{
		rt.PV("pv-c", "fast", "d", "1Gi").Obj(), rt.PV("pv-a", "fast", "d", "1Gi").Obj(), rt.PV("pv-b", "slow", "d", "1Gi").Obj(),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	before := snap.PersistentVolumesOfClass("fast")
	if diff := cmp.Diff([]string{"pv-a", "pv-c"}, pvNames(before)); diff != "" {
		t.Errorf("fast after New (-want,+got):\n%s", diff)
	}
	snap.SetPersistentVolume(rt.PV("pv-b", "fast", "d", "1Gi").Obj()) // changes class
	snap.RemovePersistentVolume("pv-c")
	snap.SetPersistentVolume(rt.PV("pv-0", "fast", "d", "1Gi").Obj())
	if diff := cmp.Diff([]string{"pv-0", "pv-a", "pv-b"}, pvNames(snap.PersistentVolumesOfClass("fast"))); diff != "" {
		t.Errorf("fast after changes (-want,+got):\n%s", diff)
	}
	if got := snap.PersistentVolumesOfClass("slow"); len(got) != 0 {
		t.Errorf("slow = %v, want empty", pvNames(got))
	}
	if diff := cmp.Diff([]string{"pv-a", "pv-c"}, pvNames(before)); diff != "" {
		t.Errorf("the list handed out changed (-want,+got):\n%s", diff)
	}
}

// TestStorageDuplicates: a second object of any storage kind with the key
// of the first (namespaced kinds in the same namespace, an empty namespace
// counting as default) is an ObjectError naming it; the same name in
// another namespace is not a duplicate.
func TestStorageDuplicates(t *testing.T) {
	csiNode := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	driver := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "d"}}
	capacity := &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cap"}}
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va"}}
	claim := rt.PVC("default", "data", "fast", "1Gi").Obj()
	claimNoNS := claim.DeepCopy()
	claimNoNS.Namespace = ""
	claimElsewhere := claim.DeepCopy()
	claimElsewhere.Namespace = "other"
	tests := map[string]struct {
		objs          snapshot.StorageObjects
		wantKind      string // "" for no error
		wantNamespace string
		wantName      string
	}{
		"PersistentVolume": {
			objs:     snapshot.StorageObjects{PersistentVolumes: []*v1.PersistentVolume{rt.PV("pv", "fast", "d", "1Gi").Obj(), rt.PV("pv", "slow", "d", "1Gi").Obj()}},
			wantKind: "PersistentVolume", wantName: "pv",
		},
		"PersistentVolumeClaim": {
			objs:     snapshot.StorageObjects{PersistentVolumeClaims: []*v1.PersistentVolumeClaim{claim, claim.DeepCopy()}},
			wantKind: "PersistentVolumeClaim", wantNamespace: "default", wantName: "data",
		},
		"PersistentVolumeClaim without a namespace is in default": {
			objs:     snapshot.StorageObjects{PersistentVolumeClaims: []*v1.PersistentVolumeClaim{claim, claimNoNS}},
			wantKind: "PersistentVolumeClaim", wantNamespace: "default", wantName: "data",
		},
		"PersistentVolumeClaims of the same name in two namespaces": {
			objs: snapshot.StorageObjects{PersistentVolumeClaims: []*v1.PersistentVolumeClaim{claim, claimElsewhere}},
		},
		"StorageClass": {
			objs:     snapshot.StorageObjects{StorageClasses: []*storagev1.StorageClass{rt.StorageClass("fast", "d", true), rt.StorageClass("fast", "d", false)}},
			wantKind: "StorageClass", wantName: "fast",
		},
		"CSINode": {
			objs:     snapshot.StorageObjects{CSINodes: []*storagev1.CSINode{csiNode, csiNode.DeepCopy()}},
			wantKind: "CSINode", wantName: "n1",
		},
		"CSIDriver": {
			objs:     snapshot.StorageObjects{CSIDrivers: []*storagev1.CSIDriver{driver, driver.DeepCopy()}},
			wantKind: "CSIDriver", wantName: "d",
		},
		"CSIStorageCapacity": {
			objs:     snapshot.StorageObjects{CSIStorageCapacities: []*storagev1.CSIStorageCapacity{capacity, capacity.DeepCopy()}},
			wantKind: "CSIStorageCapacity", wantNamespace: "default", wantName: "cap",
		},
		"VolumeAttachment": {
			objs:     snapshot.StorageObjects{VolumeAttachments: []*storagev1.VolumeAttachment{va, va.DeepCopy()}},
			wantKind: "VolumeAttachment", wantName: "va",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := snapshot.New(snapshot.Objects{Storage: tt.objs})
			if tt.wantKind == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			var oe *snapshot.ObjectError
			if !errors.As(err, &oe) {
				t.Fatalf("error %v, want an ObjectError", err)
			}
			got := []string{oe.Kind, oe.Namespace, oe.Name, oe.Field, oe.Detail}
			want := []string{tt.wantKind, tt.wantNamespace, tt.wantName, "metadata.name", "duplicate object"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error %v (-want,+got):\n%s", err, diff)
			}
		})
	}
}
