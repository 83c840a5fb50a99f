package scheduler

import (
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Actions are what one scheduling cycle (Core.Cycle) decided must be done
// through the cluster, as raft's Ready: the core has changed its cache and
// queue already and waits for the outcome. Exactly one of Binding and
// Failure is set; Preemption only with Failure. The driver carries each
// one out and reports it back to the core that returned it: BindDone,
// PreemptionDone (before FailureDone when both are done in order), and
// FailureDone.
type Actions struct {
	// Pod is the pod the cycle scheduled, as the cache held it.
	Pod *v1.Pod
	// Binding, when set, binds Pod, which the cache holds on a node.
	Binding *Binding
	// Preemption, when set, preempts victims for Pod, which the cache
	// holds nominated and the queue gated.
	Preemption *Preemption
	// Failure, when set, records that Pod fits nowhere now.
	Failure *Failure
}

// attempt is the scheduling attempt an action belongs to, for the core to
// finish it when the outcome comes back.
type attempt struct {
	qp      *queuedPod
	pod     *snapshot.Pod
	started time.Time
}

// Binding is upstream's binding cycle for a pod the cycle assumed on Node:
// VolumeBinding's PreBind (Volumes, through a VolumeBinder), then
// DynamicResources' (Claims, through a ClaimBinder), then Bind; after a
// failure DynamicResources' Unreserve takes the pod out of the claims
// PreBind wrote. Then the Scheduled event, or a FailedScheduling event
// naming the error.
type Binding struct {
	Pod  *v1.Pod
	Node string
	// Profile is the pod's schedulerName, for a DetailObserver.
	Profile string
	// Volumes are the claims to bind or provision first, nil when none.
	Volumes *filter.VolumeBindings
	// Claims are the resource claims to allocate or reserve first, nil
	// when none.
	Claims *filter.DRAAllocation

	attempt *attempt
}

// BindResult is how a Binding went.
type BindResult struct {
	// Claims are the ResourceClaims PreBind wrote, as the API server
	// stored them, also those written before a failure.
	Claims []*resourceapi.ResourceClaim
	// Err is why the pod was not bound, nil when it was.
	Err error
}

// Preemption is upstream's asynchronous preemption for Preemptor on Node:
// ClearNominated lose their nomination, then each of Delete gets Condition
// and a graceful delete (Cluster.Preempt) and, unless it was gone already,
// a Preempted event.
type Preemption struct {
	Preemptor *v1.Pod
	Node      string
	// ClearNominated are the lower-priority pods nominated to Node.
	ClearNominated []*v1.Pod
	// Victims are every victim chosen; Delete those not terminating yet,
	// the only ones to preempt.
	Victims, Delete []*v1.Pod
	// Condition is the DisruptionTarget condition each victim gets.
	Condition v1.PodCondition
	// NumPDBViolations counts the victims whose budget is exceeded.
	NumPDBViolations int

	attempt    *attempt
	evaluation time.Duration
}

// Failure records a failed attempt: the PodScheduled=False condition with
// Reason and Message and the nomination (Cluster.SetUnschedulable), and a
// FailedScheduling warning event with Message.
type Failure struct {
	Pod *v1.Pod
	// Reason is v1.PodReasonUnschedulable when the pod fits nowhere, or
	// v1.PodReasonSchedulerError when the attempt failed with an error
	// (a PreFilter or Reserve error, a failed binding cycle): the pod then
	// backs off instead of waiting for a cluster event, as upstream's.
	Reason  string
	Message string
	// SetNominated says whether to set status.nominatedNodeName to
	// Nominated ("" clears it).
	SetNominated bool
	Nominated    string

	attempt *attempt
}
