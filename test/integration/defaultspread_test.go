package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/reprieve/reprieve/internal/adapter/config"
	"github.com/reprieve/reprieve/internal/reprievetest"
)

// TestDefaultSpreadingMatchesUpstream places a Deployment's replicas behind
// a Service, one after another, with kube-scheduler v1.37.2 and then with
// reprieve's scheduler on the same API server: four nodes in two zones,
// three of them carrying unrelated load (600m, 1200m, 1800m), so that
// resources alone would pile the replicas onto the emptiest nodes.
// PodTopologySpread's system default constraints, whose selector comes from
// the Service and the replicas' ReplicaSet (both read through the
// informers), spread them. Both schedulers must bind every replica to the
// same node, and the replicas must cover every node.
func TestDefaultSpreadingMatchesUpstream(t *testing.T) {
	e := newEnv(t, envOptions{})
	const replicas = 6
	web := map[string]string{"app": "web", "pod-template-hash": "5d7c9f"}
	// scenario returns where each replica went, by node suffix.
	scenario := func(w *world) []string {
		t.Helper()
		started := time.Now().Add(-time.Hour)
		for _, n := range []struct{ suffix, zone, load string }{{"a1", "za", ""}, {"a2", "za", "600m"}, {"b1", "zb", "1200m"}, {"b2", "zb", "1800m"}} {
			name := w.ns + "-" + n.suffix
			w.node(reprievetest.Node(name).CPU("4").Memory("8Gi").Pods(32).Zone(n.zone))
			if n.load != "" {
				w.running(mkPod("batch-"+n.suffix, low, n.load).Label("app", "batch").Obj(), name, started)
			}
		}
		w.waitRunning("batch-a2", "batch-b1", "batch-b2")

		// The Service, and the Deployment with its ReplicaSet as the
		// controllers would have made them (none runs here).
		svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "web"},
			Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []v1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
		if _, err := w.Admin.CoreV1().Services(w.ns).Create(w.ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating the Service: %v", err)
		}
		n := int32(replicas)
		template := v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: web},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
		d, err := w.Admin.AppsV1().Deployments(w.ns).Create(w.ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: appsv1.DeploymentSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: template}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating the Deployment: %v", err)
		}
		yes := true
		rs, err := w.Admin.AppsV1().ReplicaSets(w.ns).Create(w.ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-5d7c9f", Labels: web,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &yes, BlockOwnerDeletion: &yes}}},
			Spec: appsv1.ReplicaSetSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: web}, Template: template}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating the ReplicaSet: %v", err)
		}
		// Both schedulers' informers must have seen them before the first
		// replica: a moment to let the watches deliver.
		time.Sleep(time.Second)

		var placed []string
		for i := range replicas {
			b := mkPod(rs.Name+"-"+string(rune('a'+i)), low, "200m")
			for k, v := range web {
				b.Label(k, v)
			}
			p := b.Obj()
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes, BlockOwnerDeletion: &yes}}
			w.pod(p)
			placed = append(placed, strings.TrimPrefix(w.waitBound(p.Name), w.ns+"-"))
		}
		return placed
	}

	up := e.world(t)
	u := up.startUpstream(t, config.DefaultConnection().ClientConnection)
	want := scenario(up)
	u.stop()
	up.cleanup()

	ours := e.world(t)
	ours.startScheduler(schedOpts{})
	got := scenario(ours)
	t.Logf("replicas placed by kube-scheduler %v, by reprieve %v", want, got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replicas' nodes, kube-scheduler's (-) and reprieve's (+):\n%s", diff)
	}
	spread := map[string]bool{}
	for _, n := range got {
		spread[n] = true
	}
	if len(spread) != 4 {
		t.Errorf("the replicas went to %v: default spreading should have covered the four nodes", got)
	}
}
