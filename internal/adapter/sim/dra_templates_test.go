package sim

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/scheduler"
)

// gpuTemplate is a ResourceClaimTemplate "gpu" for one device of class gpu.
const gpuTemplate = `
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu}
spec:
  spec:
    devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}
`

// TestSimulatedClaimTemplates: pods naming a ResourceClaimTemplate get a
// claim of their own from it, allocated when they are bound: the node's only
// GPU goes to a, b waits for it until a is deleted, and c, whose template
// only arrives at 2m, waits for the template and then for the GPU.
func TestSimulatedClaimTemplates(t *testing.T) {
	pod := func(name, template string) string {
		return `
    - apiVersion: v1
      kind: Pod
      metadata: {name: ` + name + `}
      spec:
        terminationGracePeriodSeconds: 0
        containers: [{name: c, resources: {requests: {cpu: "100m"}}}]
        resourceClaims: [{name: gpu, resourceClaimTemplateName: ` + template + `}]`
	}
	res := runYAML(t, gpuNode+gpuTemplate+`
---
`+simulationYAML("t", "5m")+`  actions:
  - at: 1s
    create:`+pod("a", "gpu")+pod("b", "gpu")+pod("c", "late")+`
  - at: 60s
    delete: [{kind: Pod, name: a}]
  - at: 90s
    delete: [{kind: Pod, name: b}]
  - at: 120s
    create:
    - apiVersion: resource.k8s.io/v1
      kind: ResourceClaimTemplate
      metadata: {name: late}
      spec:
        spec:
          devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}
`)
	bound := boundAt(res)
	if a, ok := bound["default/a"]; !ok || a > 2 {
		t.Errorf("a bound at %v (bound %v), want at once", a, ok)
	}
	if b, ok := bound["default/b"]; !ok || b < 60 || b > 70 {
		t.Errorf("b bound at %v (bound %v), want soon after a's deletion at 60s", b, ok)
	}
	if c, ok := bound["default/c"]; !ok || c < 120 {
		t.Errorf("c bound at %v (bound %v), want after its template at 120s", c, ok)
	}
	if i := find(res.Events, 0, "FailedScheduling", "pod/b", "cannot allocate all claims"); i < 0 {
		t.Errorf("no FailedScheduling for b naming the DRA reason")
	}
}

// TestPodClaimsFromTemplate: the claim made for a pod is named after it,
// owned by it, annotated with the pod's claim name, has the template's spec
// and is recorded in the pod's status; it is deleted with the pod.
func TestPodClaimsFromTemplate(t *testing.T) {
	w := newWorld(time.Unix(0, 0), time.Unix(3600, 0), 1, newRecorder(time.Unix(0, 0)))
	w.sched = scheduler.New(w, w.clock, scheduler.Options{})
	w.addClaimTemplate(&resourceapi.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "gpu", Labels: map[string]string{"team": "ml"}},
		Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{
			Requests: []resourceapi.DeviceRequest{{Name: "gpu", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu"}}},
		}}},
	})
	template := "gpu"
	if err := w.createPod(&v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}},
			ResourceClaims: []v1.PodResourceClaim{{Name: "accel", ResourceClaimTemplateName: &template}}},
	}); err != nil {
		t.Fatal(err)
	}
	p := w.pods["ml/train"]
	if len(p.Status.ResourceClaimStatuses) != 1 || p.Status.ResourceClaimStatuses[0].Name != "accel" {
		t.Fatalf("pod's claim statuses %+v, want one for accel", p.Status.ResourceClaimStatuses)
	}
	name := *p.Status.ResourceClaimStatuses[0].ResourceClaimName
	c := w.claims["ml/"+name]
	switch {
	case c == nil:
		t.Fatalf("claim %s not created (claims %v)", name, w.claims)
	case !strings.HasPrefix(name, "train-accel-") || len(name) != len("train-accel-")+5:
		t.Errorf("claim named %q, want train-accel- and 5 characters", name)
	case !metav1.IsControlledBy(c, p):
		t.Errorf("claim owners %+v, want the pod", c.OwnerReferences)
	case c.Annotations[annotationPodClaimName] != "accel" || c.Labels["team"] != "ml":
		t.Errorf("claim annotations %v labels %v", c.Annotations, c.Labels)
	case len(c.Spec.Devices.Requests) != 1 || c.Spec.Devices.Requests[0].Exactly.DeviceClassName != "gpu":
		t.Errorf("claim spec %+v, want the template's", c.Spec)
	}
	w.deletePod("ml/train")
	if _, ok := w.claims["ml/"+name]; ok {
		t.Errorf("claim %s outlived its pod", name)
	}
}

// TestSimulatedExtendedResourceClaims: a pod asking for example.com/gpu on
// a node that offers it only through DRA gets the claim PreBind creates
// for it, allocated the node's GPU; the next such pod waits until the first
// is gone and its claim with it.
func TestSimulatedExtendedResourceClaims(t *testing.T) {
	pod := func(name string) string {
		return `
    - apiVersion: v1
      kind: Pod
      metadata: {name: ` + name + `}
      spec:
        terminationGracePeriodSeconds: 0
        containers: [{name: c, resources: {requests: {cpu: "100m", example.com/gpu: "1"}, limits: {example.com/gpu: "1"}}}]`
	}
	doc := strings.Replace(gpuNode, "  selectors: [{cel:", "  extendedResourceName: example.com/gpu\n  selectors: [{cel:", 1) + `
---
` + simulationYAML("t", "5m") + `  actions:
  - at: 1s
    create:` + pod("a") + `
  - at: 10s
    create:` + pod("b") + `
  - at: 60s
    delete: [{kind: Pod, name: a}]
`
	res := runYAML(t, doc)
	bound := boundAt(res)
	if a, ok := bound["default/a"]; !ok || a > 2 {
		t.Errorf("a bound at %v (bound %v), want at once", a, ok)
	}
	if b, ok := bound["default/b"]; !ok || b < 60 {
		t.Errorf("b bound at %v (bound %v), want after a's deletion at 60s", b, ok)
	}
}
