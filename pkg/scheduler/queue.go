package scheduler

import (
	"container/heap"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
)

// Queue defaults, as upstream's scheduling queue.
const (
	DefaultInitialBackoff       = 1 * time.Second
	DefaultMaxBackoff           = 10 * time.Second
	DefaultMaxUnschedulableTime = 5 * time.Minute
	// UnschedulableFlushInterval is how often pods that waited too long in
	// the unschedulable pool are moved back.
	UnschedulableFlushInterval = 30 * time.Second
	// backoffOrderingWindow aligns backoff expiries, as upstream does when
	// pods may be popped from the backoff queue.
	backoffOrderingWindow = time.Second
)

// QueuedPod is a pending pod in the scheduling queue.
type QueuedPod struct {
	Pod *v1.Pod
	Key string
	// Timestamp is when the pod last entered the active queue or the
	// unschedulable pool; it orders pods of equal priority.
	Timestamp time.Time
	// InitialAttempt is when the pod was first popped.
	InitialAttempt time.Time
	// Attempts counts scheduling attempts.
	Attempts int
	// UnschedulableCount counts failed attempts; it drives the backoff.
	UnschedulableCount int
	// BackoffExpiry is when the pod's backoff ends.
	BackoffExpiry time.Time

	where int // which sub-queue holds it
	index int // position in its heap
	seq   int // arrival order, the last tie-break
}

const (
	inNone = iota
	inActive
	inBackoff
	inUnschedulable
	inFlight
)

// Priority returns the pod's priority.
func (q *QueuedPod) Priority() int32 { return corev1helpers.PodPriority(q.Pod) }

// Queue is upstream's PriorityQueue reduced to what a single profile needs:
// an active queue ordered by priority then arrival, a backoff queue, an
// unschedulable pool moved back by cluster events or after five minutes,
// and gating of pods whose asynchronous preemption is still in flight.
// It is not safe for concurrent use: the scheduler loop owns it.
type Queue struct {
	clock                clock.PassiveClock
	initialBackoff       time.Duration
	maxBackoff           time.Duration
	maxUnschedulableTime time.Duration

	active        podHeap
	backoff       podHeap
	unschedulable map[string]*QueuedPod
	pods          map[string]*QueuedPod
	// gated are pods whose preemption is in flight: they stay out of the
	// active and backoff queues until Ungate. The value records a cluster
	// event that would have moved the pod meanwhile, so that Ungate moves
	// it then (the victims may all be gone before the calls return).
	gated map[string]bool
	// start anchors the unschedulable-pool flush ticks; lastFlush is the
	// last tick handled.
	start, lastFlush time.Time
	// moveRequested is set when a cluster event happens while a pod is in
	// flight, so that a pod failing that cycle goes to backoff, not to the
	// unschedulable pool (upstream's moveRequestCycle).
	moveRequested bool
	seq           int
}

// NewQueue returns an empty queue on clk with upstream's default timings.
func NewQueue(clk clock.PassiveClock) *Queue {
	q := &Queue{
		clock:                clk,
		initialBackoff:       DefaultInitialBackoff,
		maxBackoff:           DefaultMaxBackoff,
		maxUnschedulableTime: DefaultMaxUnschedulableTime,
		unschedulable:        map[string]*QueuedPod{},
		pods:                 map[string]*QueuedPod{},
		gated:                map[string]bool{},
		start:                clk.Now(),
	}
	q.lastFlush = q.start
	q.active.less = activeLess
	q.backoff.less = func(a, b *QueuedPod) bool {
		ea, eb := a.BackoffExpiry.Truncate(backoffOrderingWindow), b.BackoffExpiry.Truncate(backoffOrderingWindow)
		if !ea.Equal(eb) {
			return ea.Before(eb)
		}
		return activeLess(a, b)
	}
	return q
}

// activeLess orders pods as upstream's PrioritySort: higher priority first,
// then the one that entered the queue first.
func activeLess(a, b *QueuedPod) bool {
	pa, pb := a.Priority(), b.Priority()
	if pa != pb {
		return pa > pb
	}
	if !a.Timestamp.Equal(b.Timestamp) {
		return a.Timestamp.Before(b.Timestamp)
	}
	return a.seq < b.seq
}

// Len returns the number of pods the queue knows, in any state.
func (q *Queue) Len() int { return len(q.pods) }

// Has reports whether the queue holds the pod.
func (q *Queue) Has(key string) bool { _, ok := q.pods[key]; return ok }

// Add enqueues a new pending pod in the active queue.
func (q *Queue) Add(pod *v1.Pod) {
	key := podKey(pod)
	if qp, ok := q.pods[key]; ok {
		qp.Pod = pod
		return
	}
	q.seq++
	qp := &QueuedPod{Pod: pod, Key: key, Timestamp: q.clock.Now(), seq: q.seq}
	q.pods[key] = qp
	q.toActive(qp)
}

// Update replaces the pod object of a queued pod. A pod waiting in the
// unschedulable pool whose spec changed is moved back, since the change may
// make it schedulable.
func (q *Queue) Update(pod *v1.Pod) {
	qp, ok := q.pods[podKey(pod)]
	if !ok {
		q.Add(pod)
		return
	}
	specChanged := qp.Pod.Generation != pod.Generation || qp.Pod.Generation == 0 && !sameSchedulingSpec(qp.Pod, pod)
	qp.Pod = pod
	switch qp.where {
	case inActive:
		heap.Fix(&q.active, qp.index)
	case inBackoff:
		heap.Fix(&q.backoff, qp.index)
	case inUnschedulable:
		if specChanged {
			q.requeue(qp)
		}
	}
}

func sameSchedulingSpec(a, b *v1.Pod) bool {
	return equalStrings(a.Labels, b.Labels) && len(a.Spec.Tolerations) == len(b.Spec.Tolerations) &&
		len(a.Spec.SchedulingGates) == len(b.Spec.SchedulingGates)
}

func equalStrings(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Delete forgets a pod.
func (q *Queue) Delete(key string) {
	qp, ok := q.pods[key]
	if !ok {
		return
	}
	q.detach(qp)
	delete(q.pods, key)
	delete(q.gated, key)
}

// Pop returns the next pod to schedule: the head of the active queue, or,
// when it is empty, the pod of the backoff queue that would complete first
// (upstream's SchedulerPopFromBackoffQ, on by default). It first moves pods
// whose backoff is over and flushes pods that waited too long as
// unschedulable. nil means nothing is ready.
func (q *Queue) Pop() *QueuedPod {
	q.flush()
	var qp *QueuedPod
	switch {
	case q.active.Len() > 0:
		qp = heap.Pop(&q.active).(*QueuedPod)
	case q.backoff.Len() > 0:
		qp = heap.Pop(&q.backoff).(*QueuedPod)
	default:
		return nil
	}
	qp.where = inFlight
	qp.Attempts++
	if qp.InitialAttempt.IsZero() {
		qp.InitialAttempt = q.clock.Now()
	}
	q.moveRequested = false
	return qp
}

// Done returns a popped pod that failed to schedule. unschedulable says the
// filters rejected it (as opposed to an error): it then waits in the
// unschedulable pool for a cluster event, unless an event already happened
// during its attempt, in which case it backs off.
func (q *Queue) Done(qp *QueuedPod, unschedulable bool) {
	if q.pods[qp.Key] != qp || qp.where != inFlight {
		return
	}
	qp.UnschedulableCount++
	qp.BackoffExpiry = q.clock.Now().Add(q.backoffDuration(qp))
	if unschedulable && !q.moveRequested {
		qp.Timestamp = q.clock.Now()
		qp.where = inUnschedulable
		q.unschedulable[qp.Key] = qp
		return
	}
	q.toBackoffOrActive(qp)
}

// Forget drops a popped pod that was scheduled (or is gone).
func (q *Queue) Forget(qp *QueuedPod) {
	if q.pods[qp.Key] == qp {
		delete(q.pods, qp.Key)
		delete(q.gated, qp.Key)
	}
}

func (q *Queue) backoffDuration(qp *QueuedPod) time.Duration {
	if qp.UnschedulableCount == 0 {
		return 0
	}
	shift := qp.UnschedulableCount - 1
	if shift >= 62 || q.initialBackoff > q.maxBackoff>>shift {
		return q.maxBackoff
	}
	return q.initialBackoff << shift
}

// Gate keeps a pod out of scheduling while its preemption is in flight.
func (q *Queue) Gate(key string) { q.gated[key] = false }

// Ungate lets a pod be scheduled again once its preemption finished. If a
// cluster event came while it was gated and it waits as unschedulable, it
// moves now.
func (q *Queue) Ungate(key string) {
	moved, ok := q.gated[key]
	if !ok {
		return
	}
	delete(q.gated, key)
	if qp, waiting := q.unschedulable[key]; waiting && moved {
		q.requeue(qp)
	}
}

// Gated reports whether a pod's preemption is in flight.
func (q *Queue) Gated(key string) bool { _, ok := q.gated[key]; return ok }

// MoveAllToActiveOrBackoff is a cluster event that may make unschedulable
// pods schedulable (a pod deleted or finished, a node added or changed):
// every pod of the unschedulable pool moves to the backoff queue if its
// backoff is not over, else to the active queue. Gated pods stay.
func (q *Queue) MoveAllToActiveOrBackoff() {
	q.moveRequested = true
	if len(q.unschedulable) == 0 && len(q.gated) == 0 {
		return
	}
	for key := range q.gated {
		q.gated[key] = true
	}
	for _, qp := range q.sortedUnschedulable() {
		if _, gated := q.gated[qp.Key]; !gated {
			q.requeue(qp)
		}
	}
}

func (q *Queue) requeue(qp *QueuedPod) {
	delete(q.unschedulable, qp.Key)
	qp.where = inNone
	q.toBackoffOrActive(qp)
}

func (q *Queue) toBackoffOrActive(qp *QueuedPod) {
	if q.clock.Now().Before(qp.BackoffExpiry) {
		qp.where = inBackoff
		heap.Push(&q.backoff, qp)
		return
	}
	q.toActive(qp)
}

func (q *Queue) toActive(qp *QueuedPod) {
	qp.Timestamp = q.clock.Now()
	qp.where = inActive
	heap.Push(&q.active, qp)
}

func (q *Queue) detach(qp *QueuedPod) {
	switch qp.where {
	case inActive:
		heap.Remove(&q.active, qp.index)
	case inBackoff:
		heap.Remove(&q.backoff, qp.index)
	case inUnschedulable:
		delete(q.unschedulable, qp.Key)
	}
	qp.where = inNone
}

// flush moves pods whose backoff is over to the active queue and pods that
// waited longer than the limit in the unschedulable pool back.
func (q *Queue) flush() {
	now := q.clock.Now()
	for q.backoff.Len() > 0 && !now.Before(q.backoff.items[0].BackoffExpiry) {
		qp := heap.Pop(&q.backoff).(*QueuedPod)
		q.toActive(qp)
	}
	// The unschedulable pool is flushed on 30-second ticks.
	tick := q.start.Add(now.Sub(q.start) / UnschedulableFlushInterval * UnschedulableFlushInterval)
	if !tick.After(q.lastFlush) {
		return
	}
	q.lastFlush = tick
	for _, qp := range q.sortedUnschedulable() {
		if _, gated := q.gated[qp.Key]; !gated && tick.Sub(qp.Timestamp) > q.maxUnschedulableTime {
			q.requeue(qp)
		}
	}
}

// sortedUnschedulable lists the unschedulable pool in arrival order, so
// that moves do not depend on map order.
func (q *Queue) sortedUnschedulable() []*QueuedPod {
	out := make([]*QueuedPod, 0, len(q.unschedulable))
	for _, qp := range q.unschedulable {
		out = append(out, qp)
	}
	slices.SortFunc(out, func(a, b *QueuedPod) int { return a.seq - b.seq })
	return out
}

// nextTick returns the first flush tick at which a pod that entered the
// unschedulable pool at ts has waited longer than the limit.
func (q *Queue) nextTick(ts time.Time) time.Time {
	due := ts.Add(q.maxUnschedulableTime)
	n := due.Sub(q.start)/UnschedulableFlushInterval + 1
	return q.start.Add(n * UnschedulableFlushInterval)
}

// NextWakeup returns when the queue next has work without any cluster
// event: the earliest backoff expiry or unschedulable-pool flush. ok is
// false when nothing is waiting.
func (q *Queue) NextWakeup() (t time.Time, ok bool) {
	if q.active.Len() > 0 || q.backoff.Len() > 0 {
		return q.clock.Now(), true
	}
	for key, qp := range q.unschedulable {
		if _, gated := q.gated[key]; gated {
			continue
		}
		due := q.nextTick(qp.Timestamp)
		if !ok || due.Before(t) {
			t, ok = due, true
		}
	}
	return t, ok
}

// Pending returns every queued pod (for reports), in no particular order.
func (q *Queue) Pending() []*QueuedPod {
	out := make([]*QueuedPod, 0, len(q.pods))
	for _, qp := range q.pods {
		out = append(out, qp)
	}
	return out
}

func podKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// podHeap is a heap of queued pods with a configurable order.
type podHeap struct {
	items []*QueuedPod
	less  func(a, b *QueuedPod) bool
}

func (h *podHeap) Len() int           { return len(h.items) }
func (h *podHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *podHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].index, h.items[j].index = i, j
}
func (h *podHeap) Push(x any) {
	qp := x.(*QueuedPod)
	qp.index = len(h.items)
	h.items = append(h.items, qp)
}
func (h *podHeap) Pop() any {
	n := len(h.items)
	qp := h.items[n-1]
	h.items[n-1] = nil
	h.items = h.items[:n-1]
	return qp
}
