// Package scheduler is reprieve's scheduler, shared by the virtual-time
// simulator and the live scheduler, split as etcd-io/raft splits RawNode
// from Node:
//
//   - Core is the synchronous core: a scheduling queue, a cluster cache (a
//     snapshot maintained from events) and a scheduling cycle — Filter,
//     PostFilter (preemption), Score, assume — that returns the Actions the
//     cycle decided (bind, preempt, record a failure) instead of calling
//     the cluster. It has no goroutines, no lock and no Cluster; its driver
//     carries the actions out and reports their outcome back (BindDone,
//     PreemptionDone, FailureDone).
//   - Scheduler is the synchronous driver the simulator uses: it carries a
//     cycle's actions out through a Cluster before ScheduleOne returns,
//     which keeps a simulation deterministic.
//   - Live is the live scheduler's wrapper: it owns the lock and the
//     goroutines, binding in a goroutine as upstream's binding cycle does
//     and preempting in one as upstream's asynchronous preemption does, so
//     that the next pod is scheduled meanwhile.
//
// Preemption is actuated as upstream's asynchronous preemption: the
// preemptor is nominated, each victim gets the DisruptionTarget condition and
// a graceful delete, lower-priority pods nominated to the node lose their
// nomination. The preemptor stays out of scheduling until those calls have
// returned and each victim is deleted or terminating (so that it never
// preempts again while its victims are still visible), and is retried at
// once when the cache sees its last victim deleted (see schedulingQueue.Gate).
package scheduler

import (
	"context"
	"errors"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/engine/profile"
)

// Event reasons and actions, as upstream records them.
const (
	ReasonScheduled        = "Scheduled"
	ReasonFailedScheduling = "FailedScheduling"
	ReasonPreempted        = "Preempted"
	ActionBinding          = "Binding"
	ActionScheduling       = "Scheduling"
	ActionPreempting       = "Preempting"
)

// Cluster is how the drivers (Scheduler, Live) carry a cycle's actions out;
// the core never calls it. Nothing changes the core's cache for these calls:
// it learns their effects from its event handlers (OnPodUpdate,
// OnPodDelete, ...), as from informers, which a Cluster may call while a
// call is in flight (the simulated world does, before it returns).
type Cluster interface {
	// Bind assigns pod to node (the pods/binding subresource).
	Bind(ctx context.Context, pod *v1.Pod, node string) error
	// SetUnschedulable records a failed attempt on a pending pod: the
	// PodScheduled=False condition with reason (Unschedulable, or
	// SchedulerError when the attempt failed with an error) and message,
	// and status.nominatedNodeName set to nominated when setNominated is
	// true ("" clears it).
	SetUnschedulable(ctx context.Context, pod *v1.Pod, reason, message string, setNominated bool, nominated string) error
	// Preempt adds condition (DisruptionTarget) to victim's status, then
	// deletes it with its own grace period. For a victim already gone it
	// may return an error wrapping ErrVictimGone: no Preempted event is
	// then recorded, as upstream records none.
	Preempt(ctx context.Context, victim *v1.Pod, condition v1.PodCondition) error
	// ClearNominatedNode clears status.nominatedNodeName of a pending pod.
	ClearNominatedNode(ctx context.Context, pod *v1.Pod) error
	// Event records an event about regarding (related may be nil).
	Event(regarding, related *v1.Pod, eventType, reason, action, note string)
}

// ErrVictimGone is wrapped by Cluster.Preempt when the victim was already
// deleted (or replaced by a pod of the same name): nothing was preempted.
var ErrVictimGone = errors.New("victim already gone")

// AttemptResult is the outcome of a scheduling cycle, named as upstream's
// schedule_attempts_total result label.
type AttemptResult string

// The outcomes of a scheduling cycle.
const (
	// AttemptScheduled: the pod was assumed on a node and is being bound.
	AttemptScheduled AttemptResult = "scheduled"
	// AttemptUnschedulable: the pod fits nowhere (preemption may have
	// nominated a node for it).
	AttemptUnschedulable AttemptResult = "unschedulable"
	// AttemptError: the cycle failed, or binding did.
	AttemptError AttemptResult = "error"
)

// Observer is told what the scheduler does, for metrics and reports. The
// core calls it from its methods; under Live these run on the scheduling
// loop and on actuation goroutines (one at a time, under Live's lock), and
// a DetailObserver's execution methods also from actuation goroutines
// without it, so an Observer given to Live must be safe for concurrent use.
type Observer interface {
	// Attempt is one scheduling cycle and its outcome.
	Attempt(pod *v1.Pod, result AttemptResult, duration time.Duration)
	// Scheduled is a pod bound after attempts cycles, sinceFirst after its
	// first attempt.
	Scheduled(pod *v1.Pod, node string, attempts int, sinceFirst time.Duration)
	// Preemption is a preemption attempt for pod: the nominated node and
	// the victims ("" node when preemption found none), and how long the
	// evaluation took.
	Preemption(pod *v1.Pod, node string, victims []*v1.Pod, numPDBViolations int, evaluation time.Duration)
}

// Options configure a Scheduler.
type Options struct {
	// SchedulerName is the spec.schedulerName of the pods to schedule when
	// Profiles is empty: one profile with the default plugins.
	SchedulerName string
	// Profiles, when set, are the scheduler's profiles (see pkg/config): it
	// schedules the pods whose schedulerName names one, each with that
	// profile's preemption, scoring and percentageOfNodesToScore, as
	// kube-scheduler does. SchedulerName is then ignored.
	Profiles []profile.Profile
	// Features are the feature gates that change preemption; the zero
	// value is v1.37's default.
	Features profile.Features
	// Policy chooses preemption's victims; the zero value is upstream's.
	Policy profile.Policy
	// Seed seeds the scheduler's random choices (score ties, dry-run offsets).
	Seed uint64
	// InitialBackoff and MaxBackoff bound the backoff of pods that failed
	// to schedule; zero means the defaults (1s and 10s).
	InitialBackoff, MaxBackoff time.Duration
	// Observer receives metrics; nil ignores them.
	Observer Observer
	// Parallelism bounds the goroutines of a scheduling cycle (filtering
	// and the preemption dry run), the caller's included; 0 means
	// GOMAXPROCS.
	Parallelism int
}
