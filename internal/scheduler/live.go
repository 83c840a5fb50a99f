package scheduler

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Live is the live scheduler, as raft's Node wraps RawNode: it owns a Core
// behind a lock, takes informer events on any goroutine, and Run schedules
// one pod at a time while the API calls of earlier cycles run in their own
// goroutines — each binding cycle in one, as upstream's, and each
// preemption in one, its victims but the last concurrently, as upstream's
// asynchronous preemption — whose outcomes go back to the core under the
// lock. A failure's status update and event are made on the scheduling
// loop, as today's upstream does without its API dispatcher.
type Live struct {
	clock clock.Clock
	exec  executor

	mu   sync.Mutex
	core *Core
	// wake nudges Run when an event or an outcome may have made work.
	wake chan struct{}
}

// NewLive returns a live scheduler with an empty cache on clk, acting on
// cluster. Options.Observer must be safe for concurrent use.
func NewLive(cluster Cluster, clk clock.Clock, opts Options) *Live {
	return &Live{
		clock: clk,
		exec:  newExecutor(cluster, clk, opts.Observer),
		core:  NewCore(clk, opts),
		wake:  make(chan struct{}, 1),
	}
}

// do runs f on the core under the lock, then wakes Run.
func (l *Live) do(f func(c *Core)) {
	l.mu.Lock()
	f(l.core)
	l.mu.Unlock()
	l.notify()
}

// notify wakes Run.
func (l *Live) notify() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Run schedules pods until ctx is done, sleeping while there is nothing to
// do until an event arrives or the queue's next backoff or flush is due.
// Actuation goroutines it started may outlive it until their calls return
// (ctx ends them).
func (l *Live) Run(ctx context.Context) {
	for ctx.Err() == nil {
		if l.scheduleOne(ctx) {
			continue
		}
		var (
			t     clock.Timer
			timer <-chan time.Time
		)
		if next, ok := l.NextWakeup(); ok {
			t = l.clock.NewTimer(max(next.Sub(l.clock.Now()), time.Millisecond))
			timer = t.C()
		}
		select {
		case <-ctx.Done():
		case <-l.wake:
		case <-timer:
		}
		if t != nil {
			t.Stop()
		}
	}
}

// scheduleOne runs one cycle under the lock and starts its actions. It
// returns false when no pod was ready.
func (l *Live) scheduleOne(ctx context.Context) bool {
	l.mu.Lock()
	a := l.core.Cycle()
	l.mu.Unlock()
	if a == nil {
		return false
	}
	if b := a.Binding; b != nil {
		go l.exec.bind(ctx, b, func(r BindResult) {
			l.mu.Lock()
			l.core.BindDone(b, r)
			l.mu.Unlock()
			if r.Err != nil {
				// The pod is back in the queue.
				l.notify()
			}
		})
		return true
	}
	if p := a.Preemption; p != nil {
		go func() {
			failed := l.exec.preempt(ctx, p, true)
			l.do(func(c *Core) { c.PreemptionDone(p, failed) })
		}()
	}
	l.exec.fail(ctx, a.Failure)
	l.mu.Lock()
	l.core.FailureDone(a.Failure)
	l.mu.Unlock()
	return true
}

// NextWakeup returns when the scheduler next has work without any cluster
// event (Core.NextWakeup).
func (l *Live) NextWakeup() (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.core.NextWakeup()
}

// QueueCounts returns the pending pods by queue (schedulingQueue.Counts).
func (l *Live) QueueCounts() Counts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.core.QueueCounts()
}

// QueuedPods returns the pods the queue holds, in no order.
func (l *Live) QueuedPods() []QueuedPodState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.core.QueuedPods()
}

// The event handlers: each is the Core's, under the lock.

// OnPodAdd handles a new pod (Core.OnPodAdd).
func (l *Live) OnPodAdd(pod *v1.Pod) { l.do(func(c *Core) { c.OnPodAdd(pod) }) }

// OnPodUpdate handles a changed pod (Core.OnPodUpdate).
func (l *Live) OnPodUpdate(old, pod *v1.Pod) { l.do(func(c *Core) { c.OnPodUpdate(old, pod) }) }

// OnPodDelete handles a deleted pod (Core.OnPodDelete).
func (l *Live) OnPodDelete(pod *v1.Pod) { l.do(func(c *Core) { c.OnPodDelete(pod) }) }

// OnNodeAdd handles a new node (Core.OnNodeAdd).
func (l *Live) OnNodeAdd(node *v1.Node) { l.do(func(c *Core) { c.OnNodeAdd(node) }) }

// OnNodeUpdate handles a changed node (Core.OnNodeUpdate).
func (l *Live) OnNodeUpdate(node *v1.Node) { l.do(func(c *Core) { c.OnNodeUpdate(node) }) }

// OnNodeDelete handles a deleted node (Core.OnNodeDelete).
func (l *Live) OnNodeDelete(name string) { l.do(func(c *Core) { c.OnNodeDelete(name) }) }

// OnPDB handles a created or changed disruption budget (Core.OnPDB).
func (l *Live) OnPDB(pdb *policyv1.PodDisruptionBudget) { l.do(func(c *Core) { c.OnPDB(pdb) }) }

// OnPDBDelete handles a deleted disruption budget (Core.OnPDBDelete).
func (l *Live) OnPDBDelete(namespace, name string) {
	l.do(func(c *Core) { c.OnPDBDelete(namespace, name) })
}

// OnPriorityClass handles a created or changed priority class
// (Core.OnPriorityClass).
func (l *Live) OnPriorityClass(pc *schedulingv1.PriorityClass) {
	l.do(func(c *Core) { c.OnPriorityClass(pc) })
}

// OnNamespace handles a created or changed namespace (Core.OnNamespace).
func (l *Live) OnNamespace(ns *v1.Namespace) { l.do(func(c *Core) { c.OnNamespace(ns) }) }

// OnStorage applies a change of a storage object (Core.OnStorage).
func (l *Live) OnStorage(apply func(*snapshot.Snapshot), added bool) {
	l.do(func(c *Core) { c.OnStorage(apply, added) })
}

// OnSelector applies a change of a Service or controller
// (Core.OnSelector); it wakes nothing, as it moves no pod.
func (l *Live) OnSelector(apply func(*snapshot.Snapshot)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.core.OnSelector(apply)
}

// OnResourceClaim handles a created or changed ResourceClaim
// (Core.OnResourceClaim).
func (l *Live) OnResourceClaim(claim *resourceapi.ResourceClaim) {
	l.do(func(c *Core) { c.OnResourceClaim(claim) })
}

// OnResourceClaimDelete handles a deleted ResourceClaim
// (Core.OnResourceClaimDelete).
func (l *Live) OnResourceClaimDelete(namespace, name string, uid types.UID) {
	l.do(func(c *Core) { c.OnResourceClaimDelete(namespace, name, uid) })
}
