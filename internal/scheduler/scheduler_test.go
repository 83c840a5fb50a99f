package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// fakeCluster records the scheduler's calls and reflects them back as
// events, as an API server and informers would.
type fakeCluster struct {
	s     *Scheduler
	pods  map[string]*v1.Pod
	calls []string
	// gatedDuringPreempt records whether the preemptor was gated while
	// each victim was preempted.
	gatedDuringPreempt []bool
	preemptor          string
	// goneInAPI are victims the API server no longer has (deleted by
	// someone else) while the scheduler's cache still does.
	goneInAPI map[string]bool
}

func (f *fakeCluster) Bind(_ context.Context, pod *v1.Pod, node string) error {
	f.calls = append(f.calls, fmt.Sprintf("bind %s %s", pod.Name, node))
	old := f.pods[podKey(pod)]
	p := old.DeepCopy()
	p.Spec.NodeName = node
	p.Status.NominatedNodeName = ""
	f.pods[podKey(p)] = p
	f.s.OnPodUpdate(old, p)
	return nil
}

func (f *fakeCluster) SetUnschedulable(_ context.Context, pod *v1.Pod, reason, message string, setNominated bool, nominated string) error {
	call := "unschedulable " + pod.Name
	if reason != v1.PodReasonUnschedulable {
		call += " reason=" + reason
	}
	if setNominated {
		call += " nominated=" + nominated
	}
	f.calls = append(f.calls, call)
	old := f.pods[podKey(pod)]
	p := old.DeepCopy()
	if setNominated {
		p.Status.NominatedNodeName = nominated
	}
	f.pods[podKey(p)] = p
	f.s.OnPodUpdate(old, p)
	return nil
}

func (f *fakeCluster) Preempt(_ context.Context, victim *v1.Pod, c v1.PodCondition) error {
	f.calls = append(f.calls, fmt.Sprintf("preempt %s %s/%s", victim.Name, c.Type, c.Reason))
	f.gatedDuringPreempt = append(f.gatedDuringPreempt, f.s.queue.Gated(f.preemptor))
	if f.goneInAPI[podKey(victim)] {
		return fmt.Errorf("pods %q not found: %w", victim.Name, ErrVictimGone)
	}
	old := f.pods[podKey(victim)]
	p := old.DeepCopy()
	p.Status.Conditions = append(p.Status.Conditions, c)
	now := metav1.Now()
	p.DeletionTimestamp = &now
	f.pods[podKey(p)] = p
	f.s.OnPodUpdate(old, p)
	return nil
}

func (f *fakeCluster) ClearNominatedNode(_ context.Context, pod *v1.Pod) error {
	f.calls = append(f.calls, "clear "+pod.Name)
	old := f.pods[podKey(pod)]
	p := old.DeepCopy()
	p.Status.NominatedNodeName = ""
	f.pods[podKey(p)] = p
	f.s.OnPodUpdate(old, p)
	return nil
}

func (f *fakeCluster) Event(regarding, related *v1.Pod, eventType, reason, action, note string) {
	f.calls = append(f.calls, fmt.Sprintf("event %s %s: %s", regarding.Name, reason, note))
}

func (f *fakeCluster) delete(key string) {
	p := f.pods[key]
	delete(f.pods, key)
	f.s.OnPodDelete(p)
}

func setup(t *testing.T, nodes []*v1.Node, pods ...*v1.Pod) (*Scheduler, *fakeCluster) {
	t.Helper()
	f := &fakeCluster{pods: map[string]*v1.Pod{}}
	s := New(f, testingclock.NewFakeClock(t0), Options{Seed: 1})
	f.s = s
	for _, n := range nodes {
		s.OnNodeAdd(n)
	}
	for _, p := range pods {
		p.Spec.SchedulerName = v1.DefaultSchedulerName
		f.pods[podKey(p)] = p
		s.OnPodAdd(p)
	}
	return s, f
}

func runAll(s *Scheduler) {
	for s.ScheduleOne(context.Background()) {
	}
}

func TestBindsWherePodFits(t *testing.T) {
	s, f := setup(t, []*v1.Node{rt.Node("n1").CPU("1").Obj(), rt.Node("n2").CPU("4").Obj()},
		rt.Pod("ns", "p").Priority(1).Req("2", "").Obj())
	runAll(s)
	want := []string{"bind p n2", "event p Scheduled: Successfully assigned ns/p to n2"}
	if diff := cmp.Diff(want, f.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestPreemptionActuation(t *testing.T) {
	s, f := setup(t, []*v1.Node{rt.Node("n1").CPU("2").Obj()},
		rt.Pod("ns", "victim").Priority(1).Req("2", "").On("n1").Obj(),
		rt.Pod("ns", "waiting").Priority(5).Req("1", "").Nominated("n1").Obj(),
	)
	// "waiting" is nominated to n1 and waits elsewhere in the queue.
	s.queue.Delete("ns/waiting")
	f.calls = nil
	pre := rt.Pod("ns", "urgent").Priority(100).Req("2", "").Obj()
	pre.UID = "uid-urgent"
	pre.Spec.SchedulerName = v1.DefaultSchedulerName
	f.pods[podKey(pre)] = pre
	f.preemptor = podKey(pre)
	s.OnPodAdd(pre)
	s.ScheduleOne(context.Background())

	var got []string
	for _, c := range f.calls {
		if !strings.HasPrefix(c, "event") || strings.Contains(c, "Preempted") || strings.Contains(c, "urgent FailedScheduling") {
			got = append(got, c)
		}
	}
	want := []string{
		"clear waiting",
		"event victim Preempted: Preempted by pod uid-urgent on node n1",
		"unschedulable urgent nominated=n1",
		"event urgent FailedScheduling: 0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement for pod on node n1, preempting 1 victims",
	}
	// The victim itself is preempted through the Preempt call.
	want = append([]string{}, want[0], "preempt victim DisruptionTarget/PreemptionByScheduler", want[1], want[2], want[3])
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("calls (-want +got):\n%s\nall calls: %q", diff, f.calls)
	}
	if len(f.gatedDuringPreempt) != 1 || !f.gatedDuringPreempt[0] {
		t.Errorf("preemptor not gated while its preemption was in flight: %v", f.gatedDuringPreempt)
	}
	if s.queue.Gated(podKey(pre)) {
		t.Error("preemptor still gated after its preemption finished")
	}

	// While the victim terminates, the preemptor is not retried and does
	// not preempt again.
	f.calls = nil
	runAll(s)
	for _, c := range f.calls {
		if strings.Contains(c, "urgent") {
			t.Errorf("preemptor retried before its victim was gone: %s", c)
		}
	}
	// The victim's deletion moves it back; it binds to its nominated node.
	f.calls = nil
	f.delete("ns/victim")
	runAll(s)
	if !contains(f.calls, "bind urgent n1") {
		t.Errorf("preemptor not bound to its nominated node after the victim left: %q", f.calls)
	}
}

func TestTerminatingVictimsAreNotPreemptedTwice(t *testing.T) {
	going := rt.Pod("ns", "going").Priority(1).Req("2", "").On("n1").Obj()
	now := metav1.Now()
	going.DeletionTimestamp = &now
	s, f := setup(t, []*v1.Node{rt.Node("n1").CPU("2").Obj()}, going, rt.Pod("ns", "p").Priority(10).Req("2", "").Obj())
	runAll(s)
	for _, c := range f.calls {
		if strings.HasPrefix(c, "preempt ") {
			t.Errorf("a victim already terminating got another call: %s", c)
		}
	}
	if !contains(f.calls, "unschedulable p nominated=n1") {
		t.Errorf("preemptor not nominated: %q", f.calls)
	}
}

func TestNominatedPodsReserveRoom(t *testing.T) {
	s, f := setup(t, []*v1.Node{rt.Node("n1").CPU("2").Obj(), rt.Node("n2").CPU("2").Obj()},
		rt.Pod("ns", "reserved").Priority(50).Req("2", "").Nominated("n1").Obj(),
	)
	// Keep "reserved" out of the queue: it waits for victims elsewhere.
	s.queue.Delete("ns/reserved")
	f.calls = nil
	p := rt.Pod("ns", "p").Priority(10).Req("2", "").Obj()
	p.Spec.SchedulerName = v1.DefaultSchedulerName
	f.pods[podKey(p)] = p
	s.OnPodAdd(p)
	runAll(s)
	if !contains(f.calls, "bind p n2") {
		t.Errorf("lower-priority pod took the nominated node's room: %q", f.calls)
	}
}

func TestVictimDeletedBySomeoneElse(t *testing.T) {
	s, f := setup(t, []*v1.Node{rt.Node("n1").CPU("2").Obj()},
		rt.Pod("ns", "victim").Priority(1).Req("2", "").On("n1").Obj(),
		rt.Pod("ns", "p").Priority(10).Req("2", "").Obj(),
	)
	f.calls = nil
	f.goneInAPI = map[string]bool{"ns/victim": true}
	runAll(s)
	for _, c := range f.calls {
		if strings.Contains(c, "Preempted") {
			t.Errorf("a Preempted event for a victim the preemptor did not delete: %s", c)
		}
	}
	if !s.queue.Gated("ns/p") {
		t.Error("preemptor not kept out while the victim is still in the cache")
	}
	// The deletion reaches the cache: the preemptor binds at once.
	f.calls = nil
	f.delete("ns/victim")
	runAll(s)
	if !contains(f.calls, "bind p n1") {
		t.Errorf("preemptor not bound after the victim's deletion: %q", f.calls)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
