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

// queuedPod is a pending pod in the scheduling queue.
type queuedPod struct {
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
	// rejectors are the plugins that rejected the pod in its last cycle
	// (none after an error), for the queueing hints of cluster events.
	rejectors []string
	// roomReady is set when the pod's preemption completed (every victim
	// deleted) while it was in flight: Done then sends it to the active
	// queue at once.
	roomReady bool
}

const (
	inNone = iota
	inActive
	inBackoff
	inUnschedulable
	inFlight
)

// Priority returns the pod's priority.
func (q *queuedPod) Priority() int32 { return corev1helpers.PodPriority(q.Pod) }

// schedulingQueue is upstream's PriorityQueue reduced to what a single
// profile needs: an active queue ordered by priority then arrival, a
// backoff queue, an unschedulable pool moved back by cluster events or
// after five minutes, and gating of preemptors until their preemption is
// complete (see Gate).
// It is not safe for concurrent use: the scheduler loop owns it.
type schedulingQueue struct {
	clock                clock.PassiveClock
	initialBackoff       time.Duration
	maxBackoff           time.Duration
	maxUnschedulableTime time.Duration

	active        podHeap
	backoff       podHeap
	unschedulable map[string]*queuedPod
	pods          map[string]*queuedPod
	// preempting are the preemptors whose preemption is not complete,
	// by pod key; victimOf indexes them by victim key. A blocked
	// preemptor stays out of the active and backoff queues; once all its
	// victims are deleted (and the calls have returned) it goes straight
	// to the active queue.
	preempting map[string]*preemptionState
	victimOf   map[string][]string
	// start anchors the unschedulable-pool flush ticks; lastFlush is the
	// last tick handled.
	start, lastFlush time.Time
	// moveRequested is set when a cluster event happens while a pod is in
	// flight, so that a pod failing that cycle goes to backoff, not to the
	// unschedulable pool (upstream's moveRequestCycle).
	moveRequested bool
	// inFlightHints are the queueing hints of the node events that
	// happened since the last Pop: a pod failing its cycle goes to backoff
	// if one of them says the event may help it, as upstream replays the
	// events an in-flight pod missed against its rejecting plugins.
	inFlightHints []func(*queuedPod) bool
	seq           int
}

// newSchedulingQueue returns an empty queue on clk with upstream's default timings.
func newSchedulingQueue(clk clock.PassiveClock) *schedulingQueue {
	q := &schedulingQueue{
		clock:                clk,
		initialBackoff:       DefaultInitialBackoff,
		maxBackoff:           DefaultMaxBackoff,
		maxUnschedulableTime: DefaultMaxUnschedulableTime,
		unschedulable:        map[string]*queuedPod{},
		pods:                 map[string]*queuedPod{},
		preempting:           map[string]*preemptionState{},
		victimOf:             map[string][]string{},
		start:                clk.Now(),
	}
	q.lastFlush = q.start
	q.active.less = activeLess
	q.backoff.less = func(a, b *queuedPod) bool {
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
func activeLess(a, b *queuedPod) bool {
	pa, pb := a.Priority(), b.Priority()
	if pa != pb {
		return pa > pb
	}
	if !a.Timestamp.Equal(b.Timestamp) {
		return a.Timestamp.Before(b.Timestamp)
	}
	return a.seq < b.seq
}

// Counts are the pending pods by the queue upstream's scheduler_pending_pods
// metric names; pods in a scheduling cycle are in none.
type Counts struct {
	Active, Backoff, Unschedulable, Gated int
}

// Counts returns the pending pods by queue. A preemptor waiting for its
// victims counts as unschedulable, as upstream keeps it; a pod with
// scheduling gates as gated.
func (q *schedulingQueue) Counts() Counts {
	var c Counts
	for _, qp := range q.pods {
		switch {
		case len(qp.Pod.Spec.SchedulingGates) > 0:
			c.Gated++
		case qp.where == inActive:
			c.Active++
		case qp.where == inBackoff:
			c.Backoff++
		case qp.where == inUnschedulable || qp.where == inNone:
			c.Unschedulable++
		}
	}
	return c
}

// Len returns the number of pods the queue knows, in any state.
func (q *schedulingQueue) Len() int { return len(q.pods) }

// Add enqueues a new pending pod in the active queue.
func (q *schedulingQueue) Add(pod *v1.Pod) {
	key := podKey(pod)
	if qp, ok := q.pods[key]; ok {
		qp.Pod = pod
		return
	}
	q.seq++
	qp := &queuedPod{Pod: pod, Key: key, Timestamp: q.clock.Now(), seq: q.seq}
	q.pods[key] = qp
	q.toActive(qp)
}

// Update replaces the pod object of a queued pod. A pod waiting in the
// unschedulable pool whose spec changed is moved back, since the change may
// make it schedulable.
func (q *schedulingQueue) Update(pod *v1.Pod) {
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
		if specChanged && !q.Gated(qp.Key) {
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
func (q *schedulingQueue) Delete(key string) {
	qp, ok := q.pods[key]
	if !ok {
		return
	}
	q.detach(qp)
	delete(q.pods, key)
	delete(q.preempting, key)
}

// Pop returns the next pod to schedule: the head of the active queue, or,
// when it is empty, the pod of the backoff queue that would complete first
// (upstream's SchedulerPopFromBackoffQ, on by default). It first moves pods
// whose backoff is over and flushes pods that waited too long as
// unschedulable. nil means nothing is ready.
func (q *schedulingQueue) Pop() *queuedPod {
	q.flush()
	var qp *queuedPod
	switch {
	case q.active.Len() > 0:
		qp = heap.Pop(&q.active).(*queuedPod)
	case q.backoff.Len() > 0:
		qp = heap.Pop(&q.backoff).(*queuedPod)
	default:
		return nil
	}
	qp.where = inFlight
	qp.Attempts++
	if qp.InitialAttempt.IsZero() {
		qp.InitialAttempt = q.clock.Now()
	}
	q.moveRequested = false
	q.inFlightHints = q.inFlightHints[:0]
	return qp
}

// Done returns a popped pod that failed to schedule. unschedulable says the
// filters rejected it (as opposed to an error): it then waits in the
// unschedulable pool for a cluster event, unless an event already happened
// during its attempt, in which case it backs off.
func (q *schedulingQueue) Done(qp *queuedPod, unschedulable bool) {
	if q.pods[qp.Key] != qp || qp.where != inFlight {
		return
	}
	qp.UnschedulableCount++
	qp.BackoffExpiry = q.clock.Now().Add(q.backoffDuration(qp))
	if qp.roomReady {
		// Its victims are gone: retry it at once, in its place.
		qp.roomReady = false
		q.pushActive(qp)
		return
	}
	moved := q.movedInFlight(qp)
	if p := q.preempting[qp.Key]; p != nil {
		// A preemptor keeps its place in the order (see activate).
		if p.blocked() || unschedulable && !moved {
			qp.where = inUnschedulable
			q.unschedulable[qp.Key] = qp
			return
		}
		q.toBackoffOrActive(qp)
		return
	}
	if unschedulable && !moved {
		qp.Timestamp = q.clock.Now()
		qp.where = inUnschedulable
		q.unschedulable[qp.Key] = qp
		return
	}
	q.toBackoffOrActive(qp)
}

// Forget drops a popped pod that was scheduled (or is gone).
func (q *schedulingQueue) Forget(qp *queuedPod) {
	if q.pods[qp.Key] == qp {
		delete(q.pods, qp.Key)
		delete(q.preempting, qp.Key)
	}
}

func (q *schedulingQueue) backoffDuration(qp *queuedPod) time.Duration {
	if qp.UnschedulableCount == 0 {
		return 0
	}
	shift := qp.UnschedulableCount - 1
	if shift >= 62 || q.initialBackoff > q.maxBackoff>>shift {
		return q.maxBackoff
	}
	return q.initialBackoff << shift
}

// MoveAllToActiveOrBackoff is a cluster event that may make unschedulable
// pods schedulable (a pod deleted or finished, a node added or changed):
// every pod of the unschedulable pool moves to the backoff queue if its
// backoff is not over, else to the active queue. Gated pods stay.
func (q *schedulingQueue) MoveAllToActiveOrBackoff() {
	q.moveRequested = true
	q.move(func(*queuedPod) bool { return true })
}

// MoveIf is a cluster event that may make the unschedulable pods for which
// worth returns true schedulable (upstream's queueing hints): they move as
// MoveAllToActiveOrBackoff moves them, the others stay. A pod in flight
// that fails its cycle afterwards backs off if worth returns true for it
// then (with the plugins that rejected it in that cycle), else it waits in
// the unschedulable pool.
func (q *schedulingQueue) MoveIf(worth func(*queuedPod) bool) {
	switch {
	case q.moveRequested:
		// The next failure backs off whatever the hints say: keep none.
	case len(q.inFlightHints) < maxInFlightHints:
		q.inFlightHints = append(q.inFlightHints, worth)
	default:
		// Many events while nothing was popped: keep no more, and let
		// the next failure back off as after any event.
		q.moveRequested = true
		q.inFlightHints = q.inFlightHints[:0]
	}
	q.move(worth)
}

// maxInFlightHints bounds the node events kept for a pod in flight.
const maxInFlightHints = 64

// movedInFlight reports whether an event that happened during qp's cycle
// may make it schedulable.
func (q *schedulingQueue) movedInFlight(qp *queuedPod) bool {
	if q.moveRequested {
		return true
	}
	for _, worth := range q.inFlightHints {
		if worth(qp) {
			return true
		}
	}
	return false
}

func (q *schedulingQueue) move(worth func(*queuedPod) bool) {
	for _, qp := range q.sortedUnschedulable() {
		if !q.Gated(qp.Key) && worth(qp) {
			q.requeue(qp)
		}
	}
}

func (q *schedulingQueue) requeue(qp *queuedPod) {
	delete(q.unschedulable, qp.Key)
	qp.where = inNone
	q.toBackoffOrActive(qp)
}

func (q *schedulingQueue) toBackoffOrActive(qp *queuedPod) {
	if q.clock.Now().Before(qp.BackoffExpiry) {
		qp.where = inBackoff
		heap.Push(&q.backoff, qp)
		return
	}
	q.toActive(qp)
}

func (q *schedulingQueue) toActive(qp *queuedPod) {
	qp.Timestamp = q.clock.Now()
	q.pushActive(qp)
}

// pushActive adds qp to the active queue with its timestamp unchanged.
func (q *schedulingQueue) pushActive(qp *queuedPod) {
	qp.where = inActive
	heap.Push(&q.active, qp)
}

func (q *schedulingQueue) detach(qp *queuedPod) {
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
func (q *schedulingQueue) flush() {
	now := q.clock.Now()
	for q.backoff.Len() > 0 && !now.Before(q.backoff.items[0].BackoffExpiry) {
		qp := heap.Pop(&q.backoff).(*queuedPod)
		q.toActive(qp)
	}
	// The unschedulable pool is flushed on 30-second ticks.
	tick := q.start.Add(now.Sub(q.start) / UnschedulableFlushInterval * UnschedulableFlushInterval)
	if !tick.After(q.lastFlush) {
		return
	}
	q.lastFlush = tick
	for _, qp := range q.sortedUnschedulable() {
		if !q.Gated(qp.Key) && tick.Sub(qp.Timestamp) > q.maxUnschedulableTime {
			q.requeue(qp)
		}
	}
}

// sortedUnschedulable lists the unschedulable pool in arrival order, so
// that moves do not depend on map order.
func (q *schedulingQueue) sortedUnschedulable() []*queuedPod {
	out := make([]*queuedPod, 0, len(q.unschedulable))
	for _, qp := range q.unschedulable {
		out = append(out, qp)
	}
	slices.SortFunc(out, func(a, b *queuedPod) int { return a.seq - b.seq })
	return out
}

// nextTick returns the first flush tick at which a pod that entered the
// unschedulable pool at ts has waited longer than the limit.
func (q *schedulingQueue) nextTick(ts time.Time) time.Time {
	due := ts.Add(q.maxUnschedulableTime)
	n := due.Sub(q.start)/UnschedulableFlushInterval + 1
	return q.start.Add(n * UnschedulableFlushInterval)
}

// NextWakeup returns when the queue next has work without any cluster
// event: the earliest backoff expiry or unschedulable-pool flush. ok is
// false when nothing is waiting.
func (q *schedulingQueue) NextWakeup() (t time.Time, ok bool) {
	if q.active.Len() > 0 || q.backoff.Len() > 0 {
		return q.clock.Now(), true
	}
	for key, qp := range q.unschedulable {
		if q.Gated(key) {
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
func (q *schedulingQueue) Pending() []*queuedPod {
	out := make([]*queuedPod, 0, len(q.pods))
	for _, qp := range q.pods {
		out = append(out, qp)
	}
	return out
}

func podKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// podHeap is a heap of queued pods with a configurable order.
type podHeap struct {
	items []*queuedPod
	less  func(a, b *queuedPod) bool
}

func (h *podHeap) Len() int           { return len(h.items) }
func (h *podHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *podHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].index, h.items[j].index = i, j
}
func (h *podHeap) Push(x any) {
	qp := x.(*queuedPod)
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
