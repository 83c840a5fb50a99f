package integration

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// kustomize renders dir as `kubectl kustomize dir` does.
func kustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range rm.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(y, &u.Object); err != nil {
			t.Fatalf("%s: %v", r.CurId(), err)
		}
		out = append(out, u)
	}
	return out
}

// TestDeployApplies renders deploy/ with kustomize and creates every object
// on the API server (RBAC on, admission as configured by the harness),
// then checks what the manifests promise: two replicas spread across
// nodes under a budget, HTTPS probes on the secure port, a priority class
// usable outside kube-system, a Service for metrics, and an image that
// the kustomization pins.
func TestDeployApplies(t *testing.T) {
	objs := kustomize(t, "../../deploy")
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind()+"/"+o.GetName())
	}
	slices.Sort(kinds)
	want := []string{
		"ClusterRole/reprieve-metrics-reader", "ClusterRole/reprieve-scheduler",
		"ClusterRoleBinding/reprieve-scheduler", "ClusterRoleBinding/reprieve-scheduler:auth-delegator",
		"Deployment/reprieve-scheduler", "Namespace/reprieve-system", "PodDisruptionBudget/reprieve-scheduler",
		"PriorityClass/reprieve-scheduler", "Role/reprieve-leader-election", "RoleBinding/reprieve-leader-election",
		"RoleBinding/reprieve-scheduler:extension-apiserver-authentication-reader",
		"Service/reprieve-scheduler", "ServiceAccount/reprieve",
	}
	if !slices.Equal(kinds, want) {
		t.Fatalf("rendered %q, want %q", kinds, want)
	}

	e := newEnv(t, envOptions{rbac: true})
	ctx := context.Background()
	dyn := dynamic.NewForConfigOrDie(e.AdminConfig)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(e.Admin.Discovery()))
	// Namespaces first, as kubectl apply orders them.
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		return boolRank(a.GetKind() != "Namespace") - boolRank(b.GetKind() != "Namespace")
	})
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s/%s: %v", o.GetKind(), o.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if o.GetNamespace() != "" {
			ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		if _, err := ri.Create(ctx, o, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			t.Errorf("the API server refuses %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	if t.Failed() {
		return
	}

	d, err := e.Admin.AppsV1().Deployments("reprieve-system").Get(ctx, "reprieve-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkDeployment(t, d)
	pdb, err := e.Admin.PolicyV1().PodDisruptionBudgets("reprieve-system").Get(ctx, "reprieve-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 || pdb.Spec.Selector.MatchLabels["app.kubernetes.io/name"] != "reprieve" {
		t.Errorf("budget: %+v, want minAvailable 1 over the scheduler's pods", pdb.Spec)
	}
	svc, err := e.Admin.CoreV1().Services("reprieve-system").Get(ctx, "reprieve-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 10259 || svc.Spec.Ports[0].TargetPort.String() != "https" {
		t.Errorf("service ports %+v, want 10259 to the https port", svc.Spec.Ports)
	}
	// A pod of the Deployment's template is admitted in reprieve-system
	// with its priority class resolved (no quota on critical classes
	// applies to it).
	pod := &unstructured.Unstructured{}
	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&d.Spec.Template)
	if err != nil {
		t.Fatal(err)
	}
	pod.Object = map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "template-check", "namespace": "reprieve-system"}, "spec": tmpl["spec"]}
	created, err := dyn.Resource(podsGVR).Namespace("reprieve-system").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a pod of the template is refused: %v", err)
	}
	if prio, _, _ := unstructured.NestedInt64(created.Object, "spec", "priority"); prio != 1000000000 {
		t.Errorf("template pod priority %d, want 1000000000 from reprieve-scheduler", prio)
	}
}

// TestDeployImagePinning renders an overlay that pins the image by digest
// with kustomize's images:, as the kustomization documents, and one with
// the ServiceMonitor component.
func TestDeployImagePinning(t *testing.T) {
	deploy, err := filepath.Abs("../../deploy")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// kustomize wants components and bases relative to the overlay.
	rel, err := filepath.Rel(dir, deploy)
	if err != nil {
		t.Fatal(err)
	}
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), []byte(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- `+rel+`
components:
- `+filepath.Join(rel, "components", "servicemonitor")+`
images:
- name: reprieve
  newName: registry.example/reprieve
  digest: `+digest+`
`))
	var image string
	var monitors int
	for _, o := range kustomize(t, dir) {
		switch o.GetKind() {
		case "Deployment":
			cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			if len(cs) == 1 {
				image, _ = cs[0].(map[string]any)["image"].(string)
			}
		case "ServiceMonitor":
			monitors++
			port, _, _ := unstructured.NestedSlice(o.Object, "spec", "endpoints")
			if len(port) != 1 || port[0].(map[string]any)["scheme"] != "https" {
				t.Errorf("ServiceMonitor endpoints %v, want one over https", port)
			}
		}
	}
	if want := "registry.example/reprieve@" + digest; image != want {
		t.Errorf("image %q, want %q", image, want)
	}
	if monitors != 1 {
		t.Errorf("%d ServiceMonitors with the component, want 1", monitors)
	}
	if _, err := os.Stat(filepath.Join(deploy, "components", "servicemonitor", "servicemonitor.yaml")); err != nil {
		t.Error(err)
	}
}

func checkDeployment(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	spec := d.Spec.Template.Spec
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas %v, want 2", d.Spec.Replicas)
	}
	if spec.PriorityClassName == "system-cluster-critical" || spec.PriorityClassName == "system-node-critical" {
		t.Errorf("priority class %q is refused outside kube-system where critical classes are quota'd", spec.PriorityClassName)
	}
	spread := false
	for _, c := range spec.TopologySpreadConstraints {
		if c.TopologyKey == "kubernetes.io/hostname" && c.MaxSkew == 1 && c.LabelSelector != nil && c.LabelSelector.MatchLabels["app.kubernetes.io/name"] == "reprieve" {
			spread = true
		}
	}
	if !spread {
		t.Errorf("no spread of the replicas across nodes: %+v", spec.TopologySpreadConstraints)
	}
	c := spec.Containers[0]
	for name, p := range map[string]*struct{ path string }{"liveness": {"/healthz"}, "readiness": {"/readyz"}} {
		probe := c.LivenessProbe
		if name == "readiness" {
			probe = c.ReadinessProbe
		}
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Scheme != "HTTPS" || probe.HTTPGet.Path != p.path || probe.HTTPGet.Port.String() != "https" {
			t.Errorf("%s probe %+v, want HTTPS GET %s on the https port", name, probe, p.path)
		}
	}
	if !slices.Contains(c.Args, "--secure-port=10259") || slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--metrics-addr") }) {
		t.Errorf("args %q, want the secure port and no plain HTTP", c.Args)
	}
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
