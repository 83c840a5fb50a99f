package integration

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// TestWhatifUsesServerRelease: `whatif --kubeconfig` without --kube-version
// decides as the API server's release. The cluster holds a budget with
// selector {} over an unlabeled pod on node-a (which started later, so
// node-a wins when the budget covers nothing) and another namespace's pod
// on node-b: kube-scheduler 1.37 evicts on node-a, 1.38, where {} covers
// the namespace, prefers node-b. The API server must report v1.37 (the
// test binary is linked with k8s.io/component-base/version.gitVersion set,
// as a released kube-apiserver is; see test.sh).
func TestWhatifUsesServerRelease(t *testing.T) {
	e := newEnv(t, envOptions{noPriorityClasses: true})
	w := e.world(t)
	ctx := context.Background()
	info, err := e.Admin.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.GitVersion, "v1.37.") {
		t.Fatalf("the API server reports %q; link the test with -ldflags=-X=k8s.io/component-base/version.gitVersion=v1.37.2 (test.sh does)", info.GitVersion)
	}
	for _, ns := range []string{"guarded", "free", "urgent"} {
		if _, err := e.Admin.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Admin.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{Name: "urgent"}, Value: 1000}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"node-a", "node-b"} {
		w.createNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourcePods: resource.MustParse("10")},
				Capacity: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourcePods: resource.MustParse("10")}}})
	}
	started := time.Now().Add(-time.Hour)
	for _, p := range []struct {
		ns, name, node string
		start          time.Time
	}{{"guarded", "unlabeled", "node-a", started.Add(10 * time.Minute)}, {"free", "other", "node-b", started}} {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name,
			Annotations: map[string]string{startedAtAnnotation: p.start.UTC().Format(time.RFC3339)}},
			Spec: v1.PodSpec{NodeName: p.node, Containers: []v1.Container{{Name: "c", Image: "busybox",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}}}}}
		if _, err := e.Admin.CoreV1().Pods(p.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	one := intstr.FromInt32(1)
	w.pdbWithStatus(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "guarded", Name: "everything"},
		Spec:   policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{}, MinAvailable: &one},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}})
	waitUntil(t, "the pods to run", func() bool {
		for _, key := range [][2]string{{"guarded", "unlabeled"}, {"free", "other"}} {
			got, err := e.Admin.CoreV1().Pods(key[0]).Get(ctx, key[1], metav1.GetOptions{})
			if err != nil || got.Status.Phase != v1.PodRunning {
				return false
			}
		}
		return true
	})
	preemptor := &v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "urgent", Name: "preemptor"},
		Spec: v1.PodSpec{PriorityClassName: "urgent", Containers: []v1.Container{{Name: "c", Image: "busybox",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}}}}}
	b, err := yaml.Marshal(preemptor)
	if err != nil {
		t.Fatal(err)
	}
	podFile := filepath.Join(t.TempDir(), "preemptor.yaml")
	writeFile(t, podFile, b)
	kubeconfig := writeKubeconfig(t, e)

	tests := map[string]struct {
		args     []string
		wantNode string
	}{
		"no flag: the server's 1.37": {wantNode: "node-a"},
		"--kube-version 1.38":        {args: []string{"--kube-version", "1.38"}, wantNode: "node-b"},
		"--kube-version 1.37":        {args: []string{"--kube-version", "1.37"}, wantNode: "node-a"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out := runCLI(t, append([]string{"whatif", "--kubeconfig", kubeconfig, "-f", podFile, "-o", "json"}, tc.args...)...)
			var got struct {
				NominatedNode string `json:"nominatedNode"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v in %s", err, out)
			}
			if got.NominatedNode != tc.wantNode {
				t.Errorf("nominated %q, want %q:\n%s", got.NominatedNode, tc.wantNode, out)
			}
		})
	}
}
