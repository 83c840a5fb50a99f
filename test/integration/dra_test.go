package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/reprievetest"
)

// TestDynamicResources runs pods with ResourceClaimTemplates on a real API
// server with kube-controller-manager's resource-claim controller making
// their claims: node-1 publishes one GPU in a ResourceSlice, created by the
// test as a DRA driver would.
func TestDynamicResources(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.startControllerManager("resourceclaim-controller")

	// (a) A pod's claim is allocated the node's device and reserved for it
	// before the pod is bound.
	t.Run("claim from a template is allocated and reserved", func(t *testing.T) {
		w := e.world(t)
		d := w.gpuWorld("gpu-0")
		w.startScheduler(schedOpts{})
		w.pod(d.gpuPod("p", low))
		if got := w.waitBound("p"); got != "node-1" {
			t.Fatalf("p bound to %q, want node-1", got)
		}
		claim := w.podClaim("p")
		d.wantAllocatedFor(t, claim, w.mustGet("p"))
		w.waitEvent("p", "Scheduled")
	})

	// (b) Two pods want node-1's only device: one is bound, the other stays
	// pending with DynamicResources' reason until the first is deleted and
	// the resource-claim controller has released its claim.
	t.Run("the only device goes to one pod, then to the other", func(t *testing.T) {
		w := e.world(t)
		d := w.gpuWorld("gpu-0")
		w.startScheduler(schedOpts{})
		w.pod(d.gpuPod("a", low))
		w.pod(d.gpuPod("b", low))
		w.waitFor("one of the pods to be bound", waitTimeout, func() (bool, error) {
			return w.mustGet("a").Spec.NodeName != "" || w.mustGet("b").Spec.NodeName != "", nil
		})
		first, second := "a", "b"
		if w.mustGet("a").Spec.NodeName == "" {
			first, second = "b", "a"
		}
		firstClaim := w.podClaim(first)
		d.wantAllocatedFor(t, firstClaim, w.mustGet(first))
		w.waitFailedScheduling(second, "cannot allocate all claims")
		if p := w.mustGet(second); p.Spec.NodeName != "" {
			t.Fatalf("%s bound to %q while the device is %s's", second, p.Spec.NodeName, first)
		}

		zero := int64(0)
		if err := w.Admin.CoreV1().Pods(w.ns).Delete(w.ctx, first, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
		w.waitReleased(firstClaim)
		if got := w.waitBound(second); got != "node-1" {
			t.Fatalf("%s bound to %q, want node-1", second, got)
		}
		d.wantAllocatedFor(t, w.podClaim(second), w.mustGet(second))
	})

	// (c) With DRAPreemption, a high-priority GPU pod preempts the
	// low-priority pod holding the device, then gets the device.
	t.Run("DRAPreemption: a GPU pod preempts a GPU pod", func(t *testing.T) {
		w := e.world(t)
		d := w.gpuWorld("gpu-0")
		s := w.startScheduler(schedOpts{features: profile.Features{DRAPreemption: true}})
		w.pod(d.gpuPod("victim", low))
		if got := w.waitBound("victim"); got != "node-1" {
			t.Fatalf("victim bound to %q, want node-1", got)
		}
		w.waitRunning("victim")
		victimClaim := w.podClaim("victim")
		d.wantAllocatedFor(t, victimClaim, w.mustGet("victim"))

		w.pod(d.gpuPod("preemptor", high))
		if got := w.waitBound("preemptor"); got != "node-1" {
			t.Fatalf("preemptor bound to %q, want node-1", got)
		}
		w.waitGone("victim")
		w.waitReleased(victimClaim)
		d.wantAllocatedFor(t, w.podClaim("preemptor"), w.mustGet("preemptor"))
		wantVictims(t, w, s, []string{"victim"}, nil)
		w.waitEvent("victim", "Preempted")
		ev := w.waitFailedScheduling("preemptor", "preemption: found a potential placement")
		if !strings.Contains(ev, "cannot allocate all claims") {
			t.Errorf("preemptor's FailedScheduling %q does not name the DRA reason", ev)
		}
	})

	// Without the gate, as upstream v1.37: DynamicResources' failure is
	// unresolvable and nothing is preempted for a device.
	t.Run("no preemption for devices without the gate", func(t *testing.T) {
		w := e.world(t)
		d := w.gpuWorld("gpu-0")
		s := w.startScheduler(schedOpts{})
		w.pod(d.gpuPod("holder", low))
		if got := w.waitBound("holder"); got != "node-1" {
			t.Fatalf("holder bound to %q, want node-1", got)
		}
		w.waitRunning("holder")
		w.pod(d.gpuPod("preemptor", high))
		ev := w.waitFailedScheduling("preemptor", "cannot allocate all claims")
		want := "0/1 nodes are available: 1 cannot allocate all claims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
		if ev != want {
			t.Errorf("FailedScheduling note:\n got %q\nwant %q", ev, want)
		}
		wantNoPreemption(t, w, s, "preemptor", "holder")
	})

	// (e) A pod asks for the extended resource that a DeviceClass maps to
	// node-1's device, which node-1 does not offer otherwise: PreBind
	// creates the pod's claim, allocated and reserved for it, and names it
	// in the pod's status before the pod is bound.
	t.Run("extended resource backed by DRA", func(t *testing.T) {
		w := e.world(t)
		d := w.gpuWorld("gpu-0")
		dc, err := w.Admin.ResourceV1().DeviceClasses().Get(w.ctx, d.class, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		resourceName := v1.ResourceName("example.com/" + w.ns)
		dc.Spec.ExtendedResourceName = ptr.To(string(resourceName))
		if _, err := w.Admin.ResourceV1().DeviceClasses().Update(w.ctx, dc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		w.startScheduler(schedOpts{})
		pod := mkPod("x", low, "100m").ReqRes(resourceName, "1").Obj()
		pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{resourceName: resource.MustParse("1")}
		w.pod(pod)
		if got := w.waitBound("x"); got != "node-1" {
			t.Fatalf("x bound to %q, want node-1", got)
		}
		p := w.mustGet("x")
		st := p.Status.ExtendedResourceClaimStatus
		if st == nil || len(st.RequestMappings) != 1 || st.RequestMappings[0].ResourceName != string(resourceName) {
			t.Fatalf("x's extendedResourceClaimStatus %+v, want its claim for %s", st, resourceName)
		}
		claim, err := w.Admin.ResourceV1().ResourceClaims(w.ns).Get(w.ctx, st.ResourceClaimName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d.wantAllocatedFor(t, claim, p)
		if !metav1.IsControlledBy(claim, p) || claim.Annotations[resourceapi.ExtendedResourceClaimAnnotation] != "true" {
			t.Errorf("claim %s metadata %+v, want the pod as controller and the extended resource annotation", claim.Name, claim.ObjectMeta)
		}
	})
}

// gpuWorld is a world's DRA objects: node-1 (500m CPU) with one device in
// a ResourceSlice, a DeviceClass for the driver and a ResourceClaimTemplate
// asking for one device of it.
type gpuWorld struct {
	w                      *world
	slice, class, template string
	device                 string
}

// gpuWorld creates node-1 and its DRA objects, removed when the test ends.
func (w *world) gpuWorld(device string) *gpuWorld {
	w.t.Helper()
	d := &gpuWorld{w: w, slice: w.ns + "-gpu", class: w.ns + "-gpu", template: "gpu", device: device}
	w.node(smallNode("node-1"))
	ctx := context.Background()
	rs := reprievetest.GPUSlice("node-1", reprievetest.GPU{Name: device, Model: "a100", Memory: "40Gi"})
	rs.Name, rs.UID = d.slice, ""
	if _, err := w.Admin.ResourceV1().ResourceSlices().Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		w.t.Fatalf("creating the ResourceSlice: %v", err)
	}
	w.t.Cleanup(func() { _ = w.Admin.ResourceV1().ResourceSlices().Delete(ctx, d.slice, metav1.DeleteOptions{}) })
	dc := reprievetest.DeviceClass(d.class, fmt.Sprintf("device.driver == %q", reprievetest.GPUDriver))
	dc.UID = ""
	if _, err := w.Admin.ResourceV1().DeviceClasses().Create(ctx, dc, metav1.CreateOptions{}); err != nil {
		w.t.Fatalf("creating the DeviceClass: %v", err)
	}
	w.t.Cleanup(func() { _ = w.Admin.ResourceV1().DeviceClasses().Delete(ctx, d.class, metav1.DeleteOptions{}) })
	tmpl := &resourceapi.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: d.template, Namespace: w.ns},
		Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{
			Requests: []resourceapi.DeviceRequest{{Name: "gpu", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: d.class}}},
		}}},
	}
	if _, err := w.Admin.ResourceV1().ResourceClaimTemplates(w.ns).Create(ctx, tmpl, metav1.CreateOptions{}); err != nil {
		w.t.Fatalf("creating the ResourceClaimTemplate: %v", err)
	}
	return d
}

// gpuPod is a pod of priority class pc asking for 100m CPU and one device
// through the template.
func (d *gpuWorld) gpuPod(name, pc string) *v1.Pod {
	return mkPod(name, pc, "100m").ClaimTemplate(d.template, "").Obj()
}

// podClaim waits until the resource-claim controller has made the pod's
// claim and returns it as stored.
func (w *world) podClaim(pod string) *resourceapi.ResourceClaim {
	w.t.Helper()
	var claim *resourceapi.ResourceClaim
	w.waitFor("the claim of pod "+pod, waitTimeout, func() (bool, error) {
		p := w.mustGet(pod)
		if len(p.Status.ResourceClaimStatuses) == 0 || p.Status.ResourceClaimStatuses[0].ResourceClaimName == nil {
			return false, nil
		}
		c, err := w.Admin.ResourceV1().ResourceClaims(w.ns).Get(w.ctx, *p.Status.ResourceClaimStatuses[0].ResourceClaimName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		claim = c
		return err == nil, err
	})
	return claim
}

// wantAllocatedFor checks that claim holds the world's device on node-1,
// is reserved for pod (and only it) and has the delete-protection
// finalizer.
func (d *gpuWorld) wantAllocatedFor(t *testing.T, claim *resourceapi.ResourceClaim, pod *v1.Pod) {
	t.Helper()
	a := claim.Status.Allocation
	if a == nil {
		t.Fatalf("claim %s not allocated", claim.Name)
	}
	var devs []string
	for _, r := range a.Devices.Results {
		devs = append(devs, r.Driver+"/"+r.Pool+"/"+r.Device)
	}
	if want := []string{reprievetest.GPUDriver + "/node-1/" + d.device}; !slices.Equal(devs, want) {
		t.Errorf("claim %s allocated %v, want %v", claim.Name, devs, want)
	}
	if a.NodeSelector == nil {
		t.Errorf("claim %s: allocation without a node selector", claim.Name)
	}
	if len(claim.Status.ReservedFor) != 1 || claim.Status.ReservedFor[0].UID != pod.UID || claim.Status.ReservedFor[0].Resource != "pods" {
		t.Errorf("claim %s reserved for %v, want only pod %s (%s)", claim.Name, claim.Status.ReservedFor, pod.Name, pod.UID)
	}
	if !slices.Contains(claim.Finalizers, resourceapi.Finalizer) {
		t.Errorf("claim %s finalizers %v, want %s", claim.Name, claim.Finalizers, resourceapi.Finalizer)
	}
}

// waitFailedScheduling waits for a FailedScheduling event about the pod
// whose note contains substr and returns the note.
//
// The message is also looked for in the PodScheduled conditions the world's
// schedulers patched into the pod's status: client-go's events.k8s.io
// broadcaster folds an event into an earlier one's series when nothing but
// the note differs — as when a cycle runs before the informer delivered the
// previous cycle's status patch, so that both events regard the same
// resourceVersion — and the series keeps the first note.
func (w *world) waitFailedScheduling(pod, substr string) string {
	w.t.Helper()
	var note string
	w.waitFor(fmt.Sprintf("a FailedScheduling event or status about %s with %q", pod, substr), waitTimeout, func() (bool, error) {
		for _, e := range w.events(pod) {
			if e.Reason == "FailedScheduling" && strings.Contains(e.Note, substr) {
				note = e.Note
				return true, nil
			}
		}
		for _, m := range w.schedulingMessages(pod) {
			if strings.Contains(m, substr) {
				note = m
				return true, nil
			}
		}
		return false, nil
	})
	return note
}

// schedulingMessages returns the PodScheduled messages the world's
// schedulers patched into pod's status, in the order sent.
func (w *world) schedulingMessages(pod string) []string {
	w.mu.Lock()
	taps := slices.Clone(w.taps)
	w.mu.Unlock()
	var out []string
	for _, tp := range taps {
		for _, c := range tp.Calls(http.MethodPatch, "/pods/"+pod+"/status") {
			var patch struct {
				Status struct {
					Conditions []v1.PodCondition `json:"conditions"`
				} `json:"status"`
			}
			if json.Unmarshal([]byte(c.Body), &patch) != nil {
				continue
			}
			for _, cond := range patch.Status.Conditions {
				if cond.Type == v1.PodScheduled && cond.Message != "" {
					out = append(out, cond.Message)
				}
			}
		}
	}
	return out
}

// waitReleased waits until the resource-claim controller has released the
// claim of a deleted pod: no longer reserved and deallocated (it deletes a
// claim made for a pod that finished; one whose pod was deleted is left to
// the garbage collector, which does not run here), or gone.
func (w *world) waitReleased(claim *resourceapi.ResourceClaim) {
	w.t.Helper()
	w.waitFor("claim "+claim.Name+" to be released", waitTimeout, func() (bool, error) {
		c, err := w.Admin.ResourceV1().ResourceClaims(w.ns).Get(w.ctx, claim.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && len(c.Status.ReservedFor) == 0 && c.Status.Allocation == nil, err
	})
}

// TestRBACDynamicResources runs the DRA preemption of TestDynamicResources
// with the scheduler as the ServiceAccount of deploy/rbac.yaml on an API
// server that authorizes with Node,RBAC: watching the DRA kinds, the
// finalizer, allocation and reservation writes must go through without a
// refused call, and DRA writes outside the role must be refused.
func TestRBACDynamicResources(t *testing.T) {
	e := newEnv(t, envOptions{rbac: true})
	e.startControllerManager("resourceclaim-controller")
	ctx := context.Background()
	saConfig := e.deployServiceAccount(t)
	sa := kubernetes.NewForConfigOrDie(saConfig)
	waitUntil(t, "the role to apply", func() bool {
		_, err := sa.ResourceV1().ResourceClaims(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		return err == nil
	})

	w := e.world(t)
	d := w.gpuWorld("gpu-0")
	s := w.startScheduler(schedOpts{config: saConfig, features: profile.Features{DRAPreemption: true}})
	w.pod(d.gpuPod("victim", low))
	if got := w.waitBound("victim"); got != "node-1" {
		t.Fatalf("victim bound to %q, want node-1", got)
	}
	w.waitRunning("victim")
	w.pod(d.gpuPod("preemptor", high))
	if got := w.waitBound("preemptor"); got != "node-1" {
		t.Fatalf("preemptor bound to %q, want node-1", got)
	}
	d.wantAllocatedFor(t, w.podClaim("preemptor"), w.mustGet("preemptor"))
	// Two claims, each: the finalizer (update), then the status.
	if n := len(s.tap.Calls("PUT", "/resourceclaims/")); n < 4 {
		t.Errorf("%d claim updates recorded, want at least 4", n)
	}
	for _, c := range s.tap.All() {
		if c.Code == 401 || c.Code == 403 {
			t.Errorf("refused: %v", c)
		}
	}

	refused := map[string]error{}
	// Claims may be created and deleted (the claim of a pod's extended
	// resources backed by DRA); device classes and slices are the drivers'.
	refused["delete a device class"] = sa.ResourceV1().DeviceClasses().Delete(ctx, d.class, metav1.DeleteOptions{})
	_, refused["create a slice"] = sa.ResourceV1().ResourceSlices().Create(ctx, &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "intruder"}}, metav1.CreateOptions{})
	_, refused["read a template"] = sa.ResourceV1().ResourceClaimTemplates(w.ns).Get(ctx, d.template, metav1.GetOptions{})
	for what, err := range refused {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as the ServiceAccount: got %v, want Forbidden", what, err)
		}
	}
}
