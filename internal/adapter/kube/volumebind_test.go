package kube

import (
	"context"
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// fittingCycle runs the filters for pod on node, fails the test unless the
// pod fits there, and returns the cycle and the node for its PreBind state.
func fittingCycle(t *testing.T, objs snapshot.Objects, pod *v1.Pod, node string) (*filter.Cycle, *snapshot.Node) {
	t.Helper()
	snap, err := snapshot.New(objs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := snap.NewPod(pod)
	if err != nil {
		t.Fatal(err)
	}
	c := filter.NewCycle(snap, p, filter.Options{Parallelism: 1})
	if s := c.FilterOne(snap.Node(node)); !s.IsSuccess() {
		t.Fatalf("pod does not fit on %s: %v", node, s)
	}
	return c, snap.Node(node)
}

// bindingsFor runs the filters for pod on node and returns its volume bindings.
func bindingsFor(t *testing.T, objs snapshot.Objects, pod *v1.Pod, node string) *filter.VolumeBindings {
	t.Helper()
	c, n := fittingCycle(t, objs, pod, node)
	vb, err := c.VolumeBindings(n)
	if err != nil || vb == nil {
		t.Fatalf("VolumeBindings = %v, %v", vb, err)
	}
	return vb
}

// TestBindVolumes: the PV Filter matched gets the claim's claimRef, a claim
// to provision gets the selected node, and the pod waits until the PV
// controller (played here) has bound both claims; without it, the wait
// times out.
func TestBindVolumes(t *testing.T) {
	local, fast := rt.PVC("ns", "local", "local", "1Gi").Obj(), rt.PVC("ns", "fast", "fast", "1Gi").Obj()
	pv := rt.PV("pv-n1", "local", "csi.example.com", "2Gi").NodeAffinityIn(v1.LabelHostname, "n1").Obj()
	objs := snapshot.Objects{
		Nodes: []*v1.Node{rt.Node("n1").CPU("2").Obj()},
		Storage: snapshot.StorageObjects{
			StorageClasses:         []*storagev1.StorageClass{rt.StorageClass("local", "kubernetes.io/no-provisioner", true), rt.StorageClass("fast", "csi.example.com", true)},
			PersistentVolumes:      []*v1.PersistentVolume{pv},
			PersistentVolumeClaims: []*v1.PersistentVolumeClaim{local, fast},
		},
	}
	pod := rt.Pod("ns", "p").PVC("a", "local").PVC("b", "fast").Obj()
	vb := bindingsFor(t, objs, pod, "n1")
	if len(vb.Static) != 1 || vb.Static[0].Spec.ClaimRef == nil || vb.Static[0].Spec.ClaimRef.Name != "local" ||
		len(vb.Provision) != 1 || vb.Provision[0].Annotations["volume.kubernetes.io/selected-node"] != "n1" || len(vb.Claims) != 2 {
		t.Fatalf("bindings: static %v, provision %v, claims %d", vb.Static, vb.Provision, len(vb.Claims))
	}

	t.Run("bound by the PV controller", func(t *testing.T) {
		client := fake.NewClientset(pv.DeepCopy(), local.DeepCopy(), fast.DeepCopy())
		c := NewCluster(client, events.NewFakeRecorder(10))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { // the PV controller: bind each claim once the scheduler asked
			for ctx.Err() == nil {
				done := 0
				if got, err := client.CoreV1().PersistentVolumes().Get(ctx, "pv-n1", metav1.GetOptions{}); err == nil && got.Spec.ClaimRef != nil {
					done += bindClaim(ctx, client, "local", "pv-n1")
				}
				if got, err := client.CoreV1().PersistentVolumeClaims("ns").Get(ctx, "fast", metav1.GetOptions{}); err == nil && got.Annotations["volume.kubernetes.io/selected-node"] == "n1" {
					done += bindClaim(ctx, client, "fast", "pv-provisioned")
				}
				if done == 2 {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		if err := c.bindVolumes(ctx, pod, "n1", vb, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("nobody binds", func(t *testing.T) {
		client := fake.NewClientset(pv.DeepCopy(), local.DeepCopy(), fast.DeepCopy())
		c := NewCluster(client, events.NewFakeRecorder(10))
		err := c.bindVolumes(context.Background(), pod, "n1", vb, 1500*time.Millisecond)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error %v, want a timeout", err)
		}
		got, _ := client.CoreV1().PersistentVolumes().Get(context.Background(), "pv-n1", metav1.GetOptions{})
		if got.Spec.ClaimRef == nil || got.Spec.ClaimRef.Name != "local" {
			t.Errorf("PV claimRef %v, want the claim", got.Spec.ClaimRef)
		}
	})
}

// bindClaim binds the claim to pv as the PV controller does; it returns 1.
func bindClaim(ctx context.Context, client *fake.Clientset, name, pv string) int {
	c, err := client.CoreV1().PersistentVolumeClaims("ns").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0
	}
	if c.Spec.VolumeName == "" {
		c.Spec.VolumeName = pv
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, "pv.kubernetes.io/bind-completed", "yes")
		if _, err := client.CoreV1().PersistentVolumeClaims("ns").Update(ctx, c, metav1.UpdateOptions{}); err != nil {
			return 0
		}
	}
	return 1
}
