package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/reprieve/reprieve/internal/engine/filter"
)

// executor carries Actions out through a Cluster for a driver; the
// drivers differ only in where it runs and how the outcome gets back to
// the core. It reports the execution itself (binding cycle runs,
// goroutines, preemption calls) to a DetailObserver; the core reports its
// decisions.
type executor struct {
	cluster Cluster
	clock   clock.PassiveClock
	detail  DetailObserver
}

func newExecutor(cluster Cluster, clk clock.PassiveClock, obs Observer) executor {
	do, _ := obs.(DetailObserver)
	return executor{cluster: cluster, clock: clk, detail: do}
}

// bind runs b's binding cycle, hands its result to done (which reports it
// to the core) and records the event. A failed binding cycle is recorded as
// upstream's failure handler records an error: the PodScheduled condition
// with reason SchedulerError and the nomination cleared, and a
// FailedScheduling event, both with the failing plugin's error.
func (e executor) bind(ctx context.Context, b *Binding, done func(BindResult)) {
	defer e.goroutine("binding")()
	claims, err := e.bindCalls(ctx, b)
	if err != nil {
		e.unreserveClaims(ctx, b, claims)
	}
	done(BindResult{Claims: claims, Err: err})
	pod := b.Pod
	if err != nil {
		klog.FromContext(ctx).Error(err, "Binding failed", "pod", klog.KObj(pod), "node", b.Node)
		e.fail(ctx, &Failure{Pod: pod, Reason: v1.PodReasonSchedulerError, Message: err.Error(), SetNominated: pod.Status.NominatedNodeName != ""})
		return
	}
	e.cluster.Event(pod, nil, v1.EventTypeNormal, ReasonScheduled, ActionBinding, fmt.Sprintf("Successfully assigned %s/%s to %s", pod.Namespace, pod.Name, b.Node))
}

// bindCalls runs PreBind (volumes, then claims, as upstream orders them)
// and Bind, and reports them to a DetailObserver. It returns the claims
// PreBind wrote.
func (e executor) bindCalls(ctx context.Context, b *Binding) ([]*resourceapi.ResourceClaim, error) {
	var err error
	var claims []*resourceapi.ResourceClaim
	runs := append(make([]ExtensionPointRun, 0, 2), timed(e.clock, "PreBind", func() filter.Code {
		if err = e.bindVolumes(ctx, b); err != nil {
			err = fmt.Errorf("running PreBind plugin %q: %w", "VolumeBinding", err)
		} else if claims, err = e.bindClaims(ctx, b); err != nil {
			err = fmt.Errorf("running PreBind plugin %q: %w", "DynamicResources", err)
		}
		return errCode(err)
	}))
	var plugins []PluginRun
	if err == nil {
		bind := timed(e.clock, "Bind", func() filter.Code {
			if err = e.cluster.Bind(ctx, b.Pod, b.Node); err != nil {
				err = fmt.Errorf("running Bind plugin %q: %w", "DefaultBinder", err)
			}
			return errCode(err)
		})
		runs = append(runs, bind)
		plugins = append(plugins, PluginRun{Plugin: "DefaultBinder", ExtensionPoint: "Bind", Status: bind.Status, Duration: bind.Duration})
	}
	if e.detail != nil {
		e.detail.Binding(b.Pod, b.Profile, runs, plugins)
	}
	return claims, err
}

// preempt makes p's API calls: lower-priority pods nominated to the node
// lose their nomination, then each victim to delete gets the condition and
// a graceful delete, all but the last concurrently when concurrent is set
// (upstream's asynchronous preemption). It reports whether a call failed.
func (e executor) preempt(ctx context.Context, p *Preemption, concurrent bool) (failed bool) {
	logger := klog.FromContext(ctx)
	pod, node := p.Preemptor, p.Node
	start := e.clock.Now()
	for _, np := range p.ClearNominated {
		if err := e.cluster.ClearNominatedNode(ctx, np); err != nil {
			logger.Error(err, "Cannot clear nominatedNodeName of a lower-priority pod", "pod", klog.KObj(np), "node", node)
		}
	}
	var anyFailed atomic.Bool
	one := func(v *v1.Pod) {
		if err := e.cluster.Preempt(ctx, v, p.Condition); errors.Is(err, ErrVictimGone) {
			logger.V(2).Info("Victim pod is already deleted", "victim", klog.KObj(v), "preemptor", klog.KObj(pod), "node", node)
			return
		} else if err != nil {
			anyFailed.Store(true)
			logger.Error(err, "Preempting victim failed", "victim", klog.KObj(v), "preemptor", klog.KObj(pod))
			return
		}
		e.cluster.Event(v, pod, v1.EventTypeNormal, ReasonPreempted, ActionPreempting,
			fmt.Sprintf("Preempted by pod %s on node %s", pod.UID, node))
	}
	if n := len(p.Delete); concurrent && n > 1 {
		var wg sync.WaitGroup
		for _, v := range p.Delete[:n-1] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				one(v)
			}()
		}
		wg.Wait()
		one(p.Delete[n-1])
	} else {
		for _, v := range p.Delete {
			one(v)
		}
	}
	failed = anyFailed.Load()
	if e.detail != nil {
		result := "success"
		if failed {
			result = "error"
		}
		e.detail.PreemptionExecuted(pod, result, e.clock.Since(start))
	}
	return failed
}

// fail records a failed attempt: the pod's status, then the event.
func (e executor) fail(ctx context.Context, f *Failure) {
	if err := e.cluster.SetUnschedulable(ctx, f.Pod, f.Reason, f.Message, f.SetNominated, f.Nominated); err != nil {
		klog.FromContext(ctx).Error(err, "Updating pod status failed", "pod", klog.KObj(f.Pod))
	}
	e.cluster.Event(f.Pod, nil, v1.EventTypeWarning, ReasonFailedScheduling, ActionScheduling, f.Message)
}

// goroutine counts a goroutine of operation until the returned func runs.
func (e executor) goroutine(operation string) func() {
	do := e.detail
	if do == nil {
		return func() {}
	}
	do.Goroutines(operation, 1)
	return func() { do.Goroutines(operation, -1) }
}

// Scheduler is the synchronous driver, as the simulator uses it: ScheduleOne
// runs a cycle of its Core and carries the actions out through the Cluster
// before it returns, in a fixed order and on the caller's goroutine, so
// that a run is deterministic. The Core is embedded: its event handlers
// and queries are called on the same goroutine as ScheduleOne (the
// Cluster may call them from inside its calls).
type Scheduler struct {
	*Core
	exec executor
}

// New returns a synchronous scheduler with an empty cache on clk, acting on
// cluster.
func New(cluster Cluster, clk clock.PassiveClock, opts Options) *Scheduler {
	return &Scheduler{Core: NewCore(clk, opts), exec: newExecutor(cluster, clk, opts.Observer)}
}

// ScheduleOne runs one scheduling cycle and carries out what it decided:
// the binding cycle; or the preemption's calls, then the failure's status
// and event, each outcome reported to the core as soon as it is known. It
// returns false when no pod was ready.
func (s *Scheduler) ScheduleOne(ctx context.Context) bool {
	a := s.Cycle()
	if a == nil {
		return false
	}
	if b := a.Binding; b != nil {
		s.exec.bind(ctx, b, func(r BindResult) { s.BindDone(b, r) })
		return true
	}
	if p := a.Preemption; p != nil {
		s.PreemptionDone(p, s.exec.preempt(ctx, p, false))
	}
	s.exec.fail(ctx, a.Failure)
	s.FailureDone(a.Failure)
	return true
}
