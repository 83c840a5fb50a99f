package scheduler

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// preemptionState is a preemptor's preemption as the queue follows it, as
// upstream's DefaultPreemption PreEnqueue check and its queueing hint on
// assigned-pod deletions do.
type preemptionState struct {
	// callsDone is set when the API calls (status patches and deletes)
	// have returned.
	callsDone bool
	// victims are the victims not yet deleted from the cache; the value
	// is true once the victim is terminating (deletionTimestamp set).
	victims map[string]bool
	// timestamp is the preemptor's place in the order when it was popped.
	timestamp time.Time
}

// blocked reports whether the preemptor must stay out of scheduling: its
// calls are in flight, or a victim is still in the cache and not
// terminating, so that a retry would see it and might preempt again.
func (p *preemptionState) blocked() bool {
	if !p.callsDone {
		return true
	}
	for _, terminating := range p.victims {
		if !terminating {
			return true
		}
	}
	return false
}

// Gate records that the popped pod key is preempting victims,
// as upstream's asynchronous preemption marks its preemptor: the pod stays
// out of the active and backoff queues until Ungate and until each victim
// is deleted or terminating (so that it never preempts again while its
// victims are still visible), and it is retried at once when the last
// victim is deleted.
func (q *schedulingQueue) Gate(key string, victims []*v1.Pod) {
	p := &preemptionState{victims: make(map[string]bool, len(victims))}
	if qp := q.pods[key]; qp != nil {
		p.timestamp = qp.Timestamp
	}
	for _, v := range victims {
		vk := podKey(v)
		p.victims[vk] = v.DeletionTimestamp != nil
		q.victimOf[vk] = append(q.victimOf[vk], key)
	}
	q.preempting[key] = p
}

// Ungate records that the API calls of a pod's preemption have returned.
// ok false means some failed: as upstream activates its preemptor then
// (no deletion may come), the pod is retried, after its backoff.
func (q *schedulingQueue) Ungate(key string, ok bool) {
	p := q.preempting[key]
	if p == nil {
		return
	}
	p.callsDone = true
	if !ok {
		delete(q.preempting, key)
		if qp := q.pods[key]; qp != nil && qp.where == inUnschedulable {
			q.requeue(qp)
		}
		return
	}
	q.progress(key, p)
}

// VictimTerminating records that a pod got its deletionTimestamp.
func (q *schedulingQueue) VictimTerminating(victim string) {
	for _, key := range q.victimOf[victim] {
		if p := q.preempting[key]; p != nil {
			if _, ok := p.victims[victim]; ok {
				p.victims[victim] = true
			}
		}
	}
}

// VictimGone records that a pod was deleted from the cache. A preemptor
// whose last victim it was, and whose calls have returned, moves to the
// active queue at once: the deletion is the event that makes room for it
// (upstream's queueing hint on assigned-pod deletions, without waiting for
// the backoff).
func (q *schedulingQueue) VictimGone(victim string) {
	keys := q.victimOf[victim]
	delete(q.victimOf, victim)
	for _, key := range keys {
		if p := q.preempting[key]; p != nil {
			delete(p.victims, victim)
			q.progress(key, p)
		}
	}
}

// progress activates a preemptor whose preemption is complete.
func (q *schedulingQueue) progress(key string, p *preemptionState) {
	if p.callsDone && len(p.victims) == 0 {
		q.activate(key)
	}
}

// activate ends a preemptor's preemption and moves it to the active queue,
// skipping its backoff, with the timestamp it had when it was popped for
// the preemption: it goes before the pods of its priority that arrived
// after that, rather than behind every one of them (which, with a queue
// full of untried preemptors, held it back until all of them had been
// tried: the stall of issue 12). It may have been moved meanwhile, as an
// ordinary unschedulable pod, once its victims were all terminating.
func (q *schedulingQueue) activate(key string) {
	p := q.preempting[key]
	delete(q.preempting, key)
	qp := q.pods[key]
	if qp == nil || p == nil {
		return
	}
	if !p.timestamp.IsZero() {
		qp.Timestamp = p.timestamp
	}
	switch qp.where {
	case inFlight:
		qp.roomReady = true
	case inUnschedulable, inBackoff, inActive:
		q.detach(qp)
		q.pushActive(qp)
	}
}

// Gated reports whether a pod's preemption keeps it out of scheduling.
func (q *schedulingQueue) Gated(key string) bool {
	p := q.preempting[key]
	return p != nil && p.blocked()
}
