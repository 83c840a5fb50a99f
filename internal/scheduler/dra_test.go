package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// claimCluster is fakeCluster with DynamicResources' PreBind. Its writes
// reach the scheduler's claim informer only when reflect is set, so that a
// test sees what the cache assumed meanwhile.
type claimCluster struct {
	*fakeCluster
	bindFail, podBindFail error
	reflect               bool
	rv                    int
	// written are the claims as the API stored them, by namespace/name.
	written map[string]*resourceapi.ResourceClaim
}

func (c *claimCluster) BindClaims(_ context.Context, pod *v1.Pod, node string, a *filter.DRAAllocation) ([]*resourceapi.ResourceClaim, error) {
	call := fmt.Sprintf("bind claims %s %s:", pod.Name, node)
	var out []*resourceapi.ResourceClaim
	for _, dc := range a.Claims {
		if dc.Allocation == nil {
			call += " reserve " + dc.Claim.Name
		} else {
			var devs []string
			for _, r := range dc.Allocation.Devices.Results {
				devs = append(devs, r.Pool+"/"+r.Device)
			}
			call += " allocate " + dc.Claim.Name + "=" + strings.Join(devs, ",")
		}
	}
	c.calls = append(c.calls, call)
	if c.bindFail != nil {
		return nil, c.bindFail
	}
	for _, dc := range a.Claims {
		w := dc.Claim.DeepCopy()
		if dc.Allocation != nil {
			w.Finalizers = append(w.Finalizers, resourceapi.Finalizer)
			w.Status.Allocation = dc.Allocation
		}
		w.Status.ReservedFor = append(w.Status.ReservedFor, podReference(pod))
		c.rv++
		w.ResourceVersion = fmt.Sprint(c.rv)
		c.written[claimKey(w)] = w
		out = append(out, w)
	}
	if c.reflect {
		for _, w := range out {
			c.s.OnResourceClaim(w)
		}
	}
	return out, nil
}

func (c *claimCluster) UnreserveClaims(_ context.Context, pod *v1.Pod, claims []*resourceapi.ResourceClaim) {
	var names []string
	for _, cl := range claims {
		names = append(names, cl.Name)
	}
	c.calls = append(c.calls, fmt.Sprintf("unreserve %s: %s", pod.Name, strings.Join(names, ",")))
}

func (c *claimCluster) Bind(ctx context.Context, pod *v1.Pod, node string) error {
	if c.podBindFail != nil {
		c.calls = append(c.calls, fmt.Sprintf("bind %s %s", pod.Name, node))
		return c.podBindFail
	}
	return c.fakeCluster.Bind(ctx, pod, node)
}

// draSetup is a scheduler on n1 (one GPU, g0) and n2 (no devices) with
// class gpu and claims, acting on a claimCluster.
func draSetup(t *testing.T, claims ...*resourceapi.ResourceClaim) (*Scheduler, *claimCluster, *testingclock.FakeClock) {
	t.Helper()
	clk := testingclock.NewFakeClock(t0)
	c := &claimCluster{fakeCluster: &fakeCluster{pods: map[string]*v1.Pod{}}, written: map[string]*resourceapi.ResourceClaim{}}
	s := New(c, clk, Options{Seed: 1})
	c.s = s
	for _, n := range []*v1.Node{rt.Node("n1").CPU("4").Obj(), rt.Node("n2").CPU("4").Obj()} {
		s.OnNodeAdd(n)
	}
	s.OnStorage(func(snap *snapshot.Snapshot) {
		snap.SetResourceSlice(rt.GPUSlice("n1", rt.GPU{Name: "g0", Model: "a100", Memory: "40Gi"}))
		snap.SetDeviceClass(rt.DeviceClass("gpu", `device.driver == "gpu.example.com"`))
	}, true)
	for _, cl := range claims {
		s.OnResourceClaim(cl)
	}
	return s, c, clk
}

func (c *claimCluster) add(pods ...*v1.Pod) {
	for _, p := range pods {
		p.Spec.SchedulerName = v1.DefaultSchedulerName
		c.pods[podKey(p)] = p
		c.s.OnPodAdd(p)
	}
}

// cachedClaim describes the scheduler's cached claim: its devices and the
// pods it is reserved for.
func cachedClaim(s *Scheduler, ns, name string) string {
	c := s.snap.ResourceClaim(ns, name)
	if c == nil {
		return "<none>"
	}
	out := "devices:"
	if a := c.Status.Allocation; a != nil {
		for _, r := range a.Devices.Results {
			out += " " + r.Pool + "/" + r.Device
		}
	}
	out += " reserved:"
	for _, r := range c.Status.ReservedFor {
		out += " " + r.Name
	}
	return out
}

// TestReserveAndPreBindClaims: the pod's claim is allocated on the node
// chosen and reserved for it before the pod is bound; the allocation is in
// the cache at once, so a second pod wanting the only device does not get
// it while the API's answer is still on its way; a failure undoes it.
func TestReserveAndPreBindClaims(t *testing.T) {
	for name, tc := range map[string]struct {
		bindFail, podBindFail error
		wantCalls             []string
		// wantClaim is the cached claim c1 after p1's binding.
		wantClaim string
		// wantP2 is the second pod's outcome, wanting c2 and the same device.
		wantP2 []string
	}{
		"allocated, reserved, bound; the device is taken": {
			wantCalls: []string{
				"bind claims p1 n1: allocate c1=n1/g0",
				"bind p1 n1",
				"event p1 Scheduled: Successfully assigned ns/p1 to n1",
			},
			wantClaim: "devices: n1/g0 reserved: p1",
			wantP2: []string{
				"unschedulable p2",
				"event p2 FailedScheduling: 0/2 nodes are available: 2 cannot allocate all claims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
			},
		},
		"writing the claim fails: the assumption is undone": {
			bindFail: errors.New("conflict"),
			wantCalls: []string{
				"bind claims p1 n1: allocate c1=n1/g0",
				"unschedulable p1 reason=SchedulerError",
				`event p1 FailedScheduling: running PreBind plugin "DynamicResources": conflict`,
			},
			wantClaim: "devices: reserved:",
			wantP2: []string{
				"bind claims p2 n1: allocate c2=n1/g0",
				"bind p2 n1",
				"event p2 Scheduled: Successfully assigned ns/p2 to n1",
			},
		},
		"binding the pod fails: the claim is unreserved": {
			podBindFail: errors.New("node gone"),
			wantCalls: []string{
				"bind claims p1 n1: allocate c1=n1/g0",
				"bind p1 n1",
				"unreserve p1: c1",
				"unschedulable p1 reason=SchedulerError",
				`event p1 FailedScheduling: running Bind plugin "DefaultBinder": node gone`,
			},
			// Unreserve leaves the allocation, as upstream: the cache holds
			// the claim as written, without the pod, and the device stays
			// taken.
			wantClaim: "devices: n1/g0 reserved:",
			wantP2: []string{
				"unschedulable p2",
				"event p2 FailedScheduling: 0/2 nodes are available: 2 cannot allocate all claims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, c, _ := draSetup(t, rt.Claim("ns", "c1", "gpu").Obj(), rt.Claim("ns", "c2", "gpu").Obj())
			c.bindFail, c.podBindFail = tc.bindFail, tc.podBindFail
			c.add(rt.Pod("ns", "p1").Priority(1).Claim("c1").Obj())
			s.ScheduleOne(context.Background())
			if diff := cmp.Diff(tc.wantCalls, c.calls); diff != "" {
				t.Errorf("p1's calls (-want +got):\n%s", diff)
			}
			if got := cachedClaim(s, "ns", "c1"); got != tc.wantClaim {
				t.Errorf("cached c1 = %q, want %q", got, tc.wantClaim)
			}
			c.calls, c.bindFail, c.podBindFail = nil, nil, nil
			c.add(rt.Pod("ns", "p2").Priority(1).Claim("c2").Obj())
			s.ScheduleOne(context.Background())
			if diff := cmp.Diff(tc.wantP2, c.calls); diff != "" {
				t.Errorf("p2's calls (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClaimInFlightKeepsAssumption: while PreBind's write has not come
// back, an informer update of the claim without an allocation (someone
// else's change) does not drop the assumed one; the API's version with the
// allocation then replaces it.
func TestClaimInFlightKeepsAssumption(t *testing.T) {
	s, _, _ := draSetup(t, rt.Claim("ns", "c1", "gpu").Obj())
	p, reserved, err := reserveOnN1(t, s, rt.Pod("ns", "p1").Claim("c1").Obj())
	b := &Binding{Pod: p.Obj(), Node: "n1", Claims: reserved}
	if err != nil {
		t.Fatal(err)
	}
	if b.Claims == nil || len(b.Claims.Claims) != 1 || b.Claims.Claims[0].Allocation == nil {
		t.Fatalf("reserveClaims = %+v, want one claim to allocate", b.Claims)
	}
	want := "devices: n1/g0 reserved: p1"
	if got := cachedClaim(s, "ns", "c1"); got != want {
		t.Fatalf("assumed c1 = %q, want %q", got, want)
	}
	labelled := rt.Claim("ns", "c1", "gpu").Obj()
	labelled.Labels, labelled.ResourceVersion = map[string]string{"x": "y"}, "5"
	s.OnResourceClaim(labelled)
	if got := cachedClaim(s, "ns", "c1"); got != want {
		t.Errorf("c1 after an unrelated update = %q, want %q (the assumption kept)", got, want)
	}
	if s.snap.ResourceClaim("ns", "c1").Labels["x"] != "y" {
		t.Errorf("the update's labels were dropped")
	}
	// The binding failed: back to the API's version.
	s.releaseClaims(b, nil, false)
	if got := cachedClaim(s, "ns", "c1"); got != "devices: reserved:" {
		t.Errorf("c1 after Unreserve = %q, want it unallocated", got)
	}
	if len(s.claimsInFlight) != 0 {
		t.Errorf("claims still in flight: %v", s.claimsInFlight)
	}
}

// TestClaimAllocatedAlreadyIsOnlyReserved: a claim allocated on n1 and
// reserved for a running pod is shared: the pod only gets added to its
// reservedFor.
func TestClaimAllocatedAlreadyIsOnlyReserved(t *testing.T) {
	running := rt.Pod("ns", "running").On("n1").Obj()
	s, c, _ := draSetup(t, rt.Claim("ns", "shared", "gpu").AllocatedOn("n1", "g0").ReservedFor(running).Obj())
	c.reflect = true
	c.add(running, rt.Pod("ns", "p").Claim("shared").Obj())
	s.ScheduleOne(context.Background())
	want := []string{
		"bind claims p n1: reserve shared",
		"bind p n1",
		"event p Scheduled: Successfully assigned ns/p to n1",
	}
	if diff := cmp.Diff(want, c.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if got, want := cachedClaim(s, "ns", "shared"), "devices: n1/g0 reserved: running p"; got != want {
		t.Errorf("cached claim = %q, want %q", got, want)
	}
	if len(s.claimsInFlight) != 0 {
		t.Errorf("claims still in flight: %v", s.claimsInFlight)
	}
}

// TestClaimFromTemplateNotYetCreated: the pod's claim is made from a
// template and the resource-claim controller has not created it yet: the
// pod stays unschedulable until the claim's add event requeues it.
func TestClaimFromTemplateNotYetCreated(t *testing.T) {
	s, c, clk := draSetup(t)
	c.reflect = true
	c.add(rt.Pod("ns", "p").ClaimTemplate("gpu-template", "p-gpu").Obj())
	s.ScheduleOne(context.Background())
	want := []string{
		"unschedulable p",
		`event p FailedScheduling: 0/2 nodes are available: could not find ResourceClaim "ns/p-gpu". preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.`,
	}
	if diff := cmp.Diff(want, c.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if s.ScheduleOne(context.Background()) {
		t.Fatalf("the pod was retried without an event")
	}
	c.calls = nil
	p := c.pods["ns/p"]
	s.OnResourceClaim(rt.Claim("ns", "p-gpu", "gpu").OwnedBy(p).Obj())
	clk.Step(time.Minute)
	if !s.ScheduleOne(context.Background()) {
		t.Fatalf("the claim's creation did not requeue the pod")
	}
	want = []string{
		"bind claims p n1: allocate p-gpu=n1/g0",
		"bind p n1",
		"event p Scheduled: Successfully assigned ns/p to n1",
	}
	if diff := cmp.Diff(want, c.calls); diff != "" {
		t.Errorf("calls after the claim appeared (-want +got):\n%s", diff)
	}
	if got, want := cachedClaim(s, "ns", "p-gpu"), "devices: n1/g0 reserved: p"; got != want {
		t.Errorf("cached claim = %q, want %q", got, want)
	}
}

// TestClaimNamedByPodStatusLater: the resource-claim controller creates the
// claim, then names it in the pod's status. The claim's add event comes
// first, and the retry it causes still cannot find the claim; the pod's
// status update then requeues the pod (upstream's
// UpdatePodGeneratedResourceClaim event), and it is bound.
func TestClaimNamedByPodStatusLater(t *testing.T) {
	s, c, clk := draSetup(t)
	c.reflect = true
	c.add(rt.Pod("ns", "p").ClaimTemplate("gpu-template", "").Obj())
	s.ScheduleOne(context.Background())
	p := c.pods["ns/p"]
	s.OnResourceClaim(rt.Claim("ns", "p-gpu", "gpu").OwnedBy(p).Obj())
	clk.Step(time.Minute)
	s.ScheduleOne(context.Background())
	c.calls = nil
	clk.Step(time.Minute)
	if s.ScheduleOne(context.Background()) {
		t.Fatalf("the pod was retried without an event")
	}
	named := p.DeepCopy()
	name := "p-gpu"
	named.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: p.Spec.ResourceClaims[0].Name, ResourceClaimName: &name}}
	c.pods["ns/p"] = named
	s.OnPodUpdate(p, named)
	clk.Step(time.Minute)
	if !s.ScheduleOne(context.Background()) {
		t.Fatalf("the pod's status update did not requeue it")
	}
	want := []string{
		"bind claims p n1: allocate p-gpu=n1/g0",
		"bind p n1",
		"event p Scheduled: Successfully assigned ns/p to n1",
	}
	if diff := cmp.Diff(want, c.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestExtendedClaimAssumed: Reserve for a pod whose example.com/gpu the
// node serves through DRA holds the claim PreBind will create in the cache,
// allocated and reserved for the pod, so that no other cycle is handed the
// same GPU; a failed binding drops it, a successful one keeps the claim as
// PreBind wrote it.
func TestExtendedClaimAssumed(t *testing.T) {
	for _, bound := range []bool{false, true} {
		t.Run(fmt.Sprintf("bound=%v", bound), func(t *testing.T) {
			s, _, _ := draSetup(t)
			gpuName := "example.com/gpu"
			class := rt.DeviceClass("gpu", `device.driver == "gpu.example.com"`)
			class.Spec.ExtendedResourceName = &gpuName
			s.OnStorage(func(snap *snapshot.Snapshot) { snap.SetDeviceClass(class) }, true)
			obj := rt.Pod("ns", "a").ReqRes(v1.ResourceName(gpuName), "1").Obj()
			obj.UID = "uid-a"
			_, reserved, err := reserveOnN1(t, s, obj)
			n1 := s.snap.Node("n1")
			if err != nil || reserved == nil || len(reserved.Claims) != 1 || reserved.Claims[0].Extended == nil {
				t.Fatalf("reserveClaims = %+v, %v; want the extended resource claim", reserved, err)
			}
			held := func() []string {
				var out []string
				for _, c := range s.snap.ResourceClaims() {
					if c.Status.Allocation != nil {
						out = append(out, c.Name)
					}
				}
				return out
			}
			if got := held(); len(got) != 1 || got[0] != "<extended-resources:uid-a>" {
				t.Fatalf("allocated claims in the cache %v, want the assumed extended claim", got)
			}
			other, _ := s.snap.NewPod(rt.Pod("ns", "b").ReqRes(v1.ResourceName(gpuName), "1").Obj())
			if st := filter.NewCycle(s.snap, other, filter.Options{Parallelism: 1}).FilterOne(n1); st.IsSuccess() {
				t.Errorf("another pod fits n1's only GPU while a's claim is assumed")
			}
			created := assumedExtendedClaim(obj, reserved.Claims[0])
			created.Name, created.UID, created.ResourceVersion = "a-extended-resources-x7k2p", "uid-claim", "7"
			var written []*resourceapi.ResourceClaim
			if bound {
				written = []*resourceapi.ResourceClaim{created}
			}
			s.releaseClaims(&Binding{Pod: obj, Node: "n1", Claims: reserved}, written, bound)
			want := []string(nil)
			if bound {
				want = []string{"a-extended-resources-x7k2p"}
			}
			if diff := cmp.Diff(want, held()); diff != "" {
				t.Errorf("allocated claims after the binding (-want +got):\n%s", diff)
			}
		})
	}
}

// reserveOnN1 prepares obj on s's snapshot, checks that it fits on n1 and
// runs DynamicResources' Reserve for it there.
func reserveOnN1(t *testing.T, s *Scheduler, obj *v1.Pod) (*snapshot.Pod, *filter.DRAAllocation, error) {
	t.Helper()
	p, err := s.snap.NewPod(obj)
	if err != nil {
		t.Fatal(err)
	}
	cy := filter.NewCycle(s.snap, p, filter.Options{Parallelism: 1})
	n1 := s.snap.Node("n1")
	if st := cy.FilterOne(n1); !st.IsSuccess() {
		t.Fatalf("%s does not fit on n1: %v", obj.Name, st)
	}
	reserved, err := s.reserveClaims(cy, p, n1)
	return p, reserved, err
}
