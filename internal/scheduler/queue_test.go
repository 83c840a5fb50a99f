package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newTestQueue is an empty queue on a fake clock at t0.
func newTestQueue() (*testingclock.FakeClock, *schedulingQueue) {
	clk := testingclock.NewFakeClock(t0)
	return clk, newSchedulingQueue(clk)
}

// gatedPreemptor is a queue on a fake clock at t0 whose one pod, "ns/p",
// was popped and gated on its victims, as after a preemption.
func gatedPreemptor(victims ...*v1.Pod) (*testingclock.FakeClock, *schedulingQueue, *queuedPod) {
	clk, q := newTestQueue()
	q.Add(rt.Pod("ns", "p").Obj())
	qp := q.Pop()
	q.Gate(qp.Key, victims)
	return clk, q, qp
}

// popAll pops every pod that is ready, by name.
func popAll(q *schedulingQueue) []string {
	var out []string
	for qp := q.Pop(); qp != nil; qp = q.Pop() {
		out = append(out, qp.Pod.Name)
	}
	return out
}

func TestQueueOrder(t *testing.T) {
	clk, q := newTestQueue()
	q.Add(rt.Pod("ns", "low-first").Priority(1).Obj())
	clk.Step(time.Second)
	q.Add(rt.Pod("ns", "high").Priority(10).Obj())
	clk.Step(time.Second)
	q.Add(rt.Pod("ns", "low-second").Priority(1).Obj())
	q.Add(rt.Pod("ns", "mid").Priority(5).Obj())
	if diff := cmp.Diff([]string{"high", "mid", "low-first", "low-second"}, popAll(q)); diff != "" {
		t.Errorf("pop order (-want +got):\n%s", diff)
	}
}

func TestBackoffDoublesUpToTheMaximum(t *testing.T) {
	q := newSchedulingQueue(testingclock.NewFakeClock(t0))
	qp := &queuedPod{}
	var got []time.Duration
	for i := 1; i <= 6; i++ {
		qp.UnschedulableCount = i
		got = append(got, q.backoffDuration(qp))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}
}

func TestUnschedulablePodsWaitForAnEvent(t *testing.T) {
	_, q := newTestQueue()
	q.Add(rt.Pod("ns", "p").Priority(1).Obj())
	qp := q.Pop()
	q.Done(qp, true)
	if q.Pop() != nil {
		t.Fatal("an unschedulable pod was popped again without any event")
	}
	if _, ok := q.NextWakeup(); !ok {
		t.Fatal("no wakeup planned for the flush of the unschedulable pool")
	}
	// An event moves it to the backoff queue (1s backoff not over), and an
	// empty active queue lets it pop from there.
	q.MoveAllToActiveOrBackoff()
	if got := q.Pop(); got == nil || got.Pod.Name != "p" {
		t.Fatalf("after a cluster event: popped %v, want p", got)
	}
}

func TestBackoffQueueWaitsBehindActivePods(t *testing.T) {
	_, q := newTestQueue()
	q.Add(rt.Pod("ns", "retry").Priority(100).Obj())
	qp := q.Pop()
	q.MoveAllToActiveOrBackoff() // an event during the attempt
	q.Done(qp, true)             // so it backs off instead of waiting
	q.Add(rt.Pod("ns", "fresh").Priority(1).Obj())
	if diff := cmp.Diff([]string{"fresh", "retry"}, popAll(q)); diff != "" {
		t.Errorf("a backing-off pod must wait for active pods (-want +got):\n%s", diff)
	}
}

func TestBackoffExpiryMovesToActive(t *testing.T) {
	clk, q := newTestQueue()
	q.Add(rt.Pod("ns", "a").Priority(1).Obj())
	qp := q.Pop()
	q.MoveAllToActiveOrBackoff()
	q.Done(qp, true) // backoff 1s
	clk.Step(1500 * time.Millisecond)
	q.Add(rt.Pod("ns", "b").Priority(0).Obj())
	// a's backoff is over: it is active again and outranks b by priority.
	if diff := cmp.Diff([]string{"a", "b"}, popAll(q)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestUnschedulablePoolIsFlushedAfterFiveMinutes(t *testing.T) {
	clk, q := newTestQueue()
	q.Add(rt.Pod("ns", "p").Obj())
	q.Done(q.Pop(), true)
	wake, ok := q.NextWakeup()
	// Entered at t0; older than 5m at the 30s tick after t0+5m: t0+5m30s.
	if !ok || !wake.Equal(t0.Add(5*time.Minute+30*time.Second)) {
		t.Fatalf("wakeup = %v %v, want t0+5m30s", wake, ok)
	}
	clk.SetTime(t0.Add(5*time.Minute + 29*time.Second))
	if q.Pop() != nil {
		t.Fatal("flushed before the tick")
	}
	clk.SetTime(wake)
	if got := q.Pop(); got == nil {
		t.Fatal("not flushed at the tick")
	}
}

func TestGatedPodsStayOut(t *testing.T) {
	clk, q, qp := gatedPreemptor(rt.Pod("ns", "v1").Obj(), rt.Pod("ns", "v2").Obj())
	// Another pod's victims leave during the attempt: an ungated pod would
	// back off and be retried, seeing its own victims still there.
	q.MoveAllToActiveOrBackoff()
	q.Done(qp, true)
	q.MoveAllToActiveOrBackoff()
	clk.Step(10 * time.Minute)
	if q.Pop() != nil {
		t.Fatal("a pod whose preemption is in flight was popped")
	}
	q.Ungate(qp.Key, true)
	q.MoveAllToActiveOrBackoff()
	if q.Pop() != nil {
		t.Fatal("a preemptor was popped while its victims were still in the cache, not terminating")
	}
	q.VictimGone("ns/v1")
	if q.Pop() != nil {
		t.Fatal("a preemptor was popped while one of its victims was still in the cache")
	}
	q.VictimGone("ns/v2")
	if got := q.Pop(); got == nil || got.Pod.Name != "p" {
		t.Fatalf("after its last victim's deletion: popped %v, want p", got)
	}
}

func TestPreemptorRetriedAtOnceWhenItsVictimsAreGone(t *testing.T) {
	tests := map[string]struct {
		// steps run after the preemptor's Pop, Gate(victim) and Done.
		steps []string
	}{
		"calls return, then the victim is deleted":         {steps: []string{"ungate", "gone"}},
		"the victim is deleted before the calls return":    {steps: []string{"gone", "ungate"}},
		"the victim terminates, then is deleted":           {steps: []string{"ungate", "terminating", "gone"}},
		"moved by an event while its victim terminates":    {steps: []string{"ungate", "terminating", "event", "gone"}},
		"moved, backoff over, while its victim terminates": {steps: []string{"ungate", "terminating", "event", "wait", "gone"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			clk, q := newTestQueue()
			q.Add(rt.Pod("ns", "preemptor").Priority(10).Obj())
			clk.Step(time.Second)
			for i := range 3 {
				q.Add(rt.Pod("ns", fmt.Sprint("later-", i)).Priority(10).Obj())
			}
			qp := q.Pop()
			q.Gate(qp.Key, []*v1.Pod{rt.Pod("ns", "victim").Obj()})
			q.Done(qp, true)
			for _, step := range tc.steps {
				switch step {
				case "ungate":
					q.Ungate(qp.Key, true)
				case "fail":
					q.Ungate(qp.Key, false)
				case "terminating":
					q.VictimTerminating("ns/victim")
				case "gone":
					q.VictimGone("ns/victim")
				case "event":
					clk.Step(100 * time.Millisecond)
					q.MoveAllToActiveOrBackoff()
				case "wait":
					clk.Step(2 * time.Second)
					q.flush()
				}
			}
			// No backoff, and before the pods of its priority that came
			// after it.
			want := []string{"preemptor", "later-0", "later-1", "later-2"}
			if diff := cmp.Diff(want, popAll(q)); diff != "" {
				t.Errorf("pop order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTerminatingVictimsUnblockButDoNotMove(t *testing.T) {
	_, q, qp := gatedPreemptor(rt.Pod("ns", "v").Obj())
	q.Done(qp, true)
	q.Ungate(qp.Key, true)
	q.VictimTerminating("ns/v")
	if q.Gated(qp.Key) {
		t.Fatal("still gated once its victim terminates")
	}
	if q.Pop() != nil {
		t.Fatal("moved by its victim's deletionTimestamp alone")
	}
	// Any cluster event now moves it, as an ordinary unschedulable pod.
	q.MoveAllToActiveOrBackoff()
	if got := q.Pop(); got == nil {
		t.Fatal("not moved by a cluster event once its victim terminates")
	}
}

func TestVictimsGoneWhileInFlight(t *testing.T) {
	_, q, qp := gatedPreemptor(rt.Pod("ns", "v").Obj())
	q.Ungate(qp.Key, true)
	q.VictimGone("ns/v")
	q.Done(qp, true) // the failed attempt ends after its victims are gone
	if got := q.Pop(); got == nil {
		t.Fatal("a preemptor whose victims left during its attempt was not retried at once")
	}
}

func TestDeleteForgetsEverywhere(t *testing.T) {
	q := newSchedulingQueue(testingclock.NewFakeClock(t0))
	q.Add(rt.Pod("ns", "a").Obj())
	q.Add(rt.Pod("ns", "b").Obj())
	q.Done(q.Pop(), true)
	q.Delete("ns/a")
	q.Delete("ns/b")
	q.MoveAllToActiveOrBackoff()
	if q.Len() != 0 || q.Pop() != nil {
		t.Fatalf("queue still holds %d pods", q.Len())
	}
}

func TestFailedPreemptionRetriesAfterBackoff(t *testing.T) {
	_, q, qp := gatedPreemptor(rt.Pod("ns", "v").Obj())
	q.Done(qp, true)
	q.Ungate(qp.Key, false)
	if q.Gated(qp.Key) {
		t.Fatal("still gated after a failed call")
	}
	if got := q.Pop(); got == nil {
		t.Fatal("a preemptor whose calls failed was not retried (it waits for no deletion)")
	}
}

func TestVictimsAlreadyTerminatingAtGate(t *testing.T) {
	q := newSchedulingQueue(testingclock.NewFakeClock(t0))
	q.Add(rt.Pod("ns", "p").Obj())
	qp := q.Pop()
	going := rt.Pod("ns", "going").Obj()
	now := metav1.Now()
	going.DeletionTimestamp = &now
	q.Gate(qp.Key, []*v1.Pod{going})
	q.Ungate(qp.Key, true)
	q.Done(qp, true)
	if q.Pop() != nil {
		t.Fatal("retried while its only victim still terminates")
	}
	q.VictimGone("ns/going")
	if q.Pop() == nil {
		t.Fatal("not retried once its terminating victim was deleted")
	}
}

func TestDeletedPreemptorIsForgotten(t *testing.T) {
	_, q, qp := gatedPreemptor(rt.Pod("ns", "v").Obj())
	q.Done(qp, true)
	q.Delete(qp.Key)
	q.Ungate(qp.Key, true)
	q.VictimGone("ns/v")
	if q.Len() != 0 || q.Pop() != nil || q.Gated(qp.Key) {
		t.Fatal("a deleted preemptor came back")
	}
}

// TestCounts checks the pending pods by queue: active until popped, none
// while in a cycle, unschedulable after failing, backoff after an event,
// and gated pods apart.
func TestCounts(t *testing.T) {
	_, q := newTestQueue()
	q.Add(rt.Pod("ns", "a").Priority(1).Obj())
	q.Add(rt.Pod("ns", "b").Priority(2).Obj())
	gated := rt.Pod("ns", "g").Obj()
	gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "wait"}}
	q.Add(gated)
	if got, want := q.Counts(), (Counts{Active: 2, Gated: 1}); got != want {
		t.Errorf("after adding: %+v, want %+v", got, want)
	}
	qp := q.Pop()
	if got, want := q.Counts(), (Counts{Active: 1, Gated: 1}); got != want {
		t.Errorf("one in a cycle: %+v, want %+v", got, want)
	}
	q.Done(qp, true)
	if got, want := q.Counts(), (Counts{Active: 1, Unschedulable: 1, Gated: 1}); got != want {
		t.Errorf("one unschedulable: %+v, want %+v", got, want)
	}
	q.MoveAllToActiveOrBackoff()
	if got, want := q.Counts(), (Counts{Active: 1, Backoff: 1, Gated: 1}); got != want {
		t.Errorf("after an event: %+v, want %+v", got, want)
	}
}
