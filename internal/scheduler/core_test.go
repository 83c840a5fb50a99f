package scheduler

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// describe renders a cycle's actions as one line per action ("" for nil).
func describe(a *Actions) string {
	if a == nil {
		return ""
	}
	var out []string
	if b := a.Binding; b != nil {
		out = append(out, fmt.Sprintf("bind %s %s", b.Pod.Name, b.Node))
	}
	if p := a.Preemption; p != nil {
		out = append(out, fmt.Sprintf("preempt for %s on %s: victims %s, delete %s, clear %s",
			p.Preemptor.Name, p.Node, names(p.Victims), names(p.Delete), names(p.ClearNominated)))
	}
	if f := a.Failure; f != nil {
		line := "fail " + f.Pod.Name
		if f.SetNominated {
			line += " nominated=" + f.Nominated
		}
		out = append(out, line+": "+f.Message)
	}
	return strings.Join(out, "\n")
}

func names(pods []*v1.Pod) string {
	var n []string
	for _, p := range pods {
		n = append(n, p.Name)
	}
	return "[" + strings.Join(n, " ") + "]"
}

// TestCoreStepByStep drives the core as its drivers do, with no Cluster at
// all: a cycle returns actions, the test plays the API server (the events
// the calls would cause) and reports the outcomes, and each next cycle
// shows the core acted on them.
func TestCoreStepByStep(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	c := NewCore(clk, Options{Seed: 1, Parallelism: 1})
	c.OnNodeAdd(rt.Node("n1").CPU("2").Obj())
	c.OnNodeAdd(rt.Node("n2").CPU("1").Obj())
	victim := rt.Pod("ns", "victim").Priority(1).Req("2", "").On("n1").Obj()
	c.OnPodAdd(victim)
	add := func(p *v1.Pod) *v1.Pod {
		p.Spec.SchedulerName = v1.DefaultSchedulerName
		c.OnPodAdd(p)
		return p
	}
	bound := func(p *v1.Pod, node string) {
		q := p.DeepCopy()
		q.Spec.NodeName = node
		c.OnPodUpdate(p, q)
	}
	cycle := func(step, want string) *Actions {
		t.Helper()
		a := c.Cycle()
		if diff := cmp.Diff(want, describe(a)); diff != "" {
			t.Fatalf("%s: actions (-want +got):\n%s", step, diff)
		}
		return a
	}
	onNode := func(key string) string {
		if p := c.snap.Pod(key); p != nil {
			return p.Obj().Spec.NodeName
		}
		return "<none>"
	}

	small := add(rt.Pod("ns", "small").Priority(5).Req("1", "").Obj())
	a := cycle("small", "bind small n2")
	if got := onNode("ns/small"); got != "n2" {
		t.Fatalf("small is on %q in the cache during its binding, want n2 (assumed)", got)
	}
	// The API server refuses: the assumption is undone, the pod backs off.
	c.BindDone(a.Binding, BindResult{Err: errors.New("conflict")})
	if got := onNode("ns/small"); got != "" {
		t.Fatalf("small is on %q after a refused binding, want no node", got)
	}
	if got, want := c.QueueCounts(), (Counts{Backoff: 1}); got != want {
		t.Fatalf("queue after a refused binding = %+v, want %+v", got, want)
	}
	// Retried (popped from the backoff queue, nothing else being active),
	// bound this time: the informer's update arrives before the outcome.
	a = cycle("small again", "bind small n2")
	bound(small, "n2")
	c.BindDone(a.Binding, BindResult{})
	if got := c.QueueCounts(); got != (Counts{}) {
		t.Fatalf("queue after the binding = %+v, want empty", got)
	}

	// A pod that fits nowhere preempts: nominated and gated at once.
	urgent := rt.Pod("ns", "urgent").Priority(100).Req("2", "").Obj()
	urgent.UID = "uid-urgent"
	add(urgent)
	a = cycle("urgent", "preempt for urgent on n1: victims [victim], delete [victim], clear []\n"+
		"fail urgent nominated=n1: 0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement for pod on node n1, preempting 1 victims")
	if !c.queue.Gated("ns/urgent") {
		t.Fatal("urgent not gated while its preemption is in flight")
	}
	if got := c.snap.Pod("ns/urgent").Obj().Status.NominatedNodeName; got != "n1" {
		t.Fatalf("urgent nominated to %q in the cache, want n1", got)
	}
	cycle("while preempting", "")
	c.PreemptionDone(a.Preemption, false)
	c.FailureDone(a.Failure)
	if got, want := c.QueueCounts(), (Counts{Unschedulable: 1}); got != want {
		t.Fatalf("queue while the victim is running = %+v, want %+v", got, want)
	}
	// The victim terminates, then goes: urgent is retried at once.
	terminating := victim.DeepCopy()
	terminating.DeletionTimestamp = &metav1.Time{Time: t0}
	c.OnPodUpdate(victim, terminating)
	cycle("victim terminating", "")
	c.OnPodDelete(terminating)
	a = cycle("victim gone", "bind urgent n1")
	bound(urgent, "n1")
	c.BindDone(a.Binding, BindResult{})
	cycle("done", "")
}

// callRecorder is fakeCluster noting, at each call, how many goroutines
// run and on which one the call is made.
type callRecorder struct {
	*fakeCluster
	goroutines []int
	callers    []string
}

func (r *callRecorder) note() {
	r.goroutines = append(r.goroutines, runtime.NumGoroutine())
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	r.callers = append(r.callers, strings.Fields(string(buf))[1])
}

func (r *callRecorder) Bind(ctx context.Context, pod *v1.Pod, node string) error {
	r.note()
	return r.fakeCluster.Bind(ctx, pod, node)
}

func (r *callRecorder) SetUnschedulable(ctx context.Context, pod *v1.Pod, reason, message string, setNominated bool, nominated string) error {
	r.note()
	return r.fakeCluster.SetUnschedulable(ctx, pod, reason, message, setNominated, nominated)
}

func (r *callRecorder) Preempt(ctx context.Context, victim *v1.Pod, c v1.PodCondition) error {
	r.note()
	return r.fakeCluster.Preempt(ctx, victim, c)
}

func (r *callRecorder) ClearNominatedNode(ctx context.Context, pod *v1.Pod) error {
	r.note()
	return r.fakeCluster.ClearNominatedNode(ctx, pod)
}

func (r *callRecorder) Event(regarding, related *v1.Pod, eventType, reason, action, note string) {
	r.note()
	r.fakeCluster.Event(regarding, related, eventType, reason, action, note)
}

// TestSynchronousDriverIsSingleThreaded: with Parallelism 1, the
// synchronous driver runs cycles and their actions — bindings, a
// preemption of three victims (which Live makes concurrently), failures —
// on the caller's goroutine, starting none: the goroutine count is the same
// during every call and after every cycle.
func TestSynchronousDriverIsSingleThreaded(t *testing.T) {
	f := &callRecorder{fakeCluster: &fakeCluster{pods: map[string]*v1.Pod{}}}
	s := New(f, testingclock.NewFakeClock(t0), Options{Seed: 1, Parallelism: 1})
	f.s = s
	for _, n := range []*v1.Node{rt.Node("n1").CPU("3").Obj(), rt.Node("n2").CPU("1").Obj()} {
		s.OnNodeAdd(n)
	}
	add := func(p *v1.Pod) {
		p.Spec.SchedulerName = v1.DefaultSchedulerName
		f.pods[podKey(p)] = p
		s.OnPodAdd(p)
	}
	for i := range 3 {
		add(rt.Pod("ns", fmt.Sprintf("v%d", i)).Priority(1).Req("1", "").On("n1").Obj())
	}
	add(rt.Pod("ns", "small").Priority(5).Req("1", "").Obj())
	add(rt.Pod("ns", "urgent").Priority(100).Req("3", "").Obj())

	base := runtime.NumGoroutine()
	buf := make([]byte, 64)
	self := strings.Fields(string(buf[:runtime.Stack(buf, false)]))[1]
	ctx := context.Background()
	cycles := 0
	for s.ScheduleOne(ctx) {
		cycles++
		if n := runtime.NumGoroutine(); n != base {
			t.Errorf("after cycle %d: %d goroutines, want %d", cycles, n, base)
		}
	}
	for _, v := range []string{"ns/v0", "ns/v1", "ns/v2"} {
		f.delete(v)
	}
	for s.ScheduleOne(ctx) {
		cycles++
	}
	want := []string{
		"bind urgent n1", "bind small n2",
		"preempt v0 DisruptionTarget/PreemptionByScheduler",
		"preempt v1 DisruptionTarget/PreemptionByScheduler",
		"preempt v2 DisruptionTarget/PreemptionByScheduler",
	}
	for _, c := range want {
		if !contains(f.calls, c) {
			t.Errorf("call %q missing: the scenario did not run as meant; calls %q", c, f.calls)
		}
	}
	if cycles != 3 {
		t.Errorf("%d cycles, want 3 (urgent preempts, small binds, urgent binds)", cycles)
	}
	for i, n := range f.goroutines {
		if n != base {
			t.Errorf("call %d (%s): %d goroutines, want %d", i, f.calls[i], n, base)
		}
		if f.callers[i] != self {
			t.Errorf("call %d (%s) on goroutine %s, want the caller's (%s)", i, f.calls[i], f.callers[i], self)
		}
	}
}

// TestFailureReasons: a pod that fits nowhere fails with reason
// Unschedulable and waits in the unschedulable queue; a failure with an
// error (reason SchedulerError, as upstream's for an Error status) backs
// off instead and counts as an error attempt.
func TestFailureReasons(t *testing.T) {
	for _, tc := range []struct {
		name       string
		reason     string
		wantCounts Counts
		wantResult AttemptResult
	}{
		{"no fit", v1.PodReasonUnschedulable, Counts{Unschedulable: 1}, AttemptUnschedulable},
		{"error", v1.PodReasonSchedulerError, Counts{Backoff: 1}, AttemptError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := &attemptRecorder{}
			c := NewCore(testingclock.NewFakeClock(t0), Options{Seed: 1, Parallelism: 1, Observer: obs})
			c.OnNodeAdd(rt.Node("n1").CPU("1").Obj())
			p := rt.Pod("ns", "big").Priority(1).Req("2", "").Obj()
			p.Spec.SchedulerName = v1.DefaultSchedulerName
			c.OnPodAdd(p)
			a := c.Cycle()
			if a == nil || a.Failure == nil || a.Failure.Reason != v1.PodReasonUnschedulable {
				t.Fatalf("actions %s, want a failure with reason Unschedulable", describe(a))
			}
			a.Failure.Reason = tc.reason
			c.FailureDone(a.Failure)
			if got := c.QueueCounts(); got != tc.wantCounts {
				t.Errorf("queue %+v, want %+v", got, tc.wantCounts)
			}
			if want := []AttemptResult{tc.wantResult}; !slices.Equal(obs.results, want) {
				t.Errorf("attempts %v, want %v", obs.results, want)
			}
		})
	}
}

// attemptRecorder records the results of attempts.
type attemptRecorder struct{ results []AttemptResult }

func (r *attemptRecorder) Attempt(_ *v1.Pod, result AttemptResult, _ time.Duration) {
	r.results = append(r.results, result)
}
func (r *attemptRecorder) Scheduled(*v1.Pod, string, int, time.Duration)             {}
func (r *attemptRecorder) Preemption(*v1.Pod, string, []*v1.Pod, int, time.Duration) {}
