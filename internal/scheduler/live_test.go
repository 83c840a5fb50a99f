package scheduler

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	rt "github.com/reprieve/reprieve/internal/reprievetest"
)

// liveCluster is an API server for Live: safe for concurrent use, it
// reflects calls back as events, and Preempt waits until release is
// closed.
type liveCluster struct {
	l       *Live
	release chan struct{}

	mu    sync.Mutex
	pods  map[string]*v1.Pod
	calls []string
}

func (c *liveCluster) record(call string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
}

// update stores p and tells the scheduler, outside the cluster's lock.
func (c *liveCluster) update(key string, change func(p *v1.Pod)) {
	c.mu.Lock()
	old := c.pods[key]
	p := old.DeepCopy()
	change(p)
	c.pods[key] = p
	c.mu.Unlock()
	c.l.OnPodUpdate(old, p)
}

func (c *liveCluster) Bind(_ context.Context, pod *v1.Pod, node string) error {
	c.record(fmt.Sprintf("bind %s %s", pod.Name, node))
	c.update(podKey(pod), func(p *v1.Pod) { p.Spec.NodeName, p.Status.NominatedNodeName = node, "" })
	return nil
}

func (c *liveCluster) SetUnschedulable(_ context.Context, pod *v1.Pod, _, _ string, setNominated bool, nominated string) error {
	c.record("unschedulable " + pod.Name)
	c.update(podKey(pod), func(p *v1.Pod) {
		if setNominated {
			p.Status.NominatedNodeName = nominated
		}
	})
	return nil
}

func (c *liveCluster) Preempt(ctx context.Context, victim *v1.Pod, cond v1.PodCondition) error {
	select {
	case <-c.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.record("preempt " + victim.Name)
	c.update(podKey(victim), func(p *v1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, cond)
		p.DeletionTimestamp = &metav1.Time{Time: t0}
	})
	return nil
}

func (c *liveCluster) ClearNominatedNode(context.Context, *v1.Pod) error { return nil }

func (c *liveCluster) Event(regarding, _ *v1.Pod, _, reason, _, _ string) {
	c.record(fmt.Sprintf("event %s %s", regarding.Name, reason))
}

func (c *liveCluster) delete(key string) {
	c.mu.Lock()
	p := c.pods[key]
	delete(c.pods, key)
	c.mu.Unlock()
	c.l.OnPodDelete(p)
}

// waitFor waits until call was made, and fails the test after a while.
func (c *liveCluster) waitFor(t *testing.T, call string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		c.mu.Lock()
		done := slices.Contains(c.calls, call)
		c.mu.Unlock()
		if done {
			return
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t.Fatalf("no %q within 10s; calls %q", call, c.calls)
}

// TestLiveSchedulesWhilePreempting: Live makes a preemption's calls in a
// goroutine of their own, so the next pod is scheduled and bound while
// they are still in flight; the preemptor binds once its victim is gone.
func TestLiveSchedulesWhilePreempting(t *testing.T) {
	c := &liveCluster{release: make(chan struct{}), pods: map[string]*v1.Pod{}}
	l := NewLive(c, clock.RealClock{}, Options{Seed: 1, Parallelism: 1})
	c.l = l
	l.OnNodeAdd(rt.Node("n1").CPU("2").Obj())
	l.OnNodeAdd(rt.Node("n2").CPU("1").Obj())
	for _, p := range []*v1.Pod{
		rt.Pod("ns", "victim").Priority(1).Req("2", "").On("n1").Obj(),
		rt.Pod("ns", "urgent").Priority(100).Req("2", "").Obj(),
		rt.Pod("ns", "small").Priority(5).Req("1", "").Obj(),
	} {
		p.Spec.SchedulerName = v1.DefaultSchedulerName
		c.pods[podKey(p)] = p
		l.OnPodAdd(p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		l.Run(ctx)
	}()
	defer func() {
		cancel()
		<-ran
	}()

	// urgent, first by priority, preempts; its call waits for release
	// while small is scheduled and bound.
	c.waitFor(t, "unschedulable urgent")
	c.waitFor(t, "event small Scheduled")
	c.mu.Lock()
	early := slices.Contains(c.calls, "preempt victim")
	c.mu.Unlock()
	if early {
		t.Fatal("the preemption's call returned before release")
	}
	close(c.release)
	c.waitFor(t, "event victim Preempted")
	c.delete("ns/victim")
	c.waitFor(t, "event urgent Scheduled")
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, j := slices.Index(c.calls, "bind small n2"), slices.Index(c.calls, "preempt victim"); i > j {
		t.Errorf("small bound after the preemption's call (calls %q), want before", c.calls)
	}
	if !slices.Contains(c.calls, "bind urgent n1") {
		t.Errorf("urgent not bound to n1: calls %q", c.calls)
	}
}
