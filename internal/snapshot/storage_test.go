package snapshot_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
	"github.com/reprieve/reprieve/internal/snapshot"
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

// TestStorageDuplicates: a duplicate claim is an ObjectError naming it.
func TestStorageDuplicates(t *testing.T) {
	c := rt.PVC("default", "data", "fast", "1Gi").Obj()
	_, err := snapshot.New(snapshot.Objects{Storage: snapshot.StorageObjects{PersistentVolumeClaims: []*v1.PersistentVolumeClaim{c, c.DeepCopy()}}})
	var oe *snapshot.ObjectError
	if !errors.As(err, &oe) || oe.Kind != "PersistentVolumeClaim" || oe.Name != "data" || oe.Field != "metadata.name" {
		t.Errorf("error %v, want a duplicate PersistentVolumeClaim default/data", err)
	}
}
