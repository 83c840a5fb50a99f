package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	kubecontrollermanagertesting "k8s.io/kubernetes/cmd/kube-controller-manager/app/testing"
)

// startControllerManager runs kube-controller-manager v1.37.2 in-process
// against e's API server (through the proxy, as the admin), with only the
// named controllers (their names as kube-controller-manager's --controllers
// takes them, e.g. "persistentvolume-binder-controller" or
// "resourceclaim-controller"). It stops when the test ends.
func (e *env) startControllerManager(controllers ...string) {
	t := e.t
	t.Helper()
	kubeconfig := writeKubeconfig(t, e)
	flags := []string{
		"--kubeconfig=" + kubeconfig,
		"--controllers=" + strings.Join(controllers, ","),
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		// The PV controller's resync is 15 s by default; tests wait on it.
		"--pvclaimbinder-sync-period=1s",
	}
	ctx, cancel := context.WithCancel(context.Background())
	server, err := kubecontrollermanagertesting.StartTestServer(quietTB{t}.T, ctx, flags)
	if err != nil {
		cancel()
		t.Fatalf("starting kube-controller-manager: %v", err)
	}
	t.Cleanup(func() {
		server.TearDownFn()
		cancel()
	})
}

// TestControllerManagerBindsClaim checks the harness: with the PV controller
// running, an Immediate claim and a matching PV become Bound on both sides.
func TestControllerManagerBindsClaim(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.startControllerManager("persistentvolume-binder-controller")
	ctx := context.Background()
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-harness"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName:       "manual",
			PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/pv-harness"}},
		},
	}
	if _, err := e.Admin.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	class := "manual"
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "claim-harness", Namespace: "default"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: &class,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := e.Admin.CoreV1().PersistentVolumeClaims("default").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		c, err := e.Admin.CoreV1().PersistentVolumeClaims("default").Get(ctx, "claim-harness", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return c.Status.Phase == v1.ClaimBound && c.Spec.VolumeName == "pv-harness", nil
	})
	if err != nil {
		t.Fatalf("claim not bound by the PV controller: %v", err)
	}
}
