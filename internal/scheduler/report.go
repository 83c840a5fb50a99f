package scheduler

import (
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/preemption"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Queue names and events as upstream's scheduler_queue_incoming_pods_total
// labels them.
const (
	QueueActive        = "Active"
	QueueBackoff       = "Backoff"
	QueueUnschedulable = "Unschedulable"

	EventUnscheduledPodAdd     = "UnscheduledPodAdd"
	EventScheduleAttemptFailed = "ScheduleAttemptFailure"
	EventAssignedPodDelete     = "AssignedPodDelete"
	EventNodeAdd               = "NodeAdd"
)

// ExtensionPointRun is one run of an extension point in a scheduling or
// binding cycle: upstream's extension point name, the status code of the
// run (filter.Code's names) and how long it took.
type ExtensionPointRun struct {
	Name     string
	Status   string
	Duration time.Duration
}

// PluginRun is one plugin's run at an extension point.
type PluginRun struct {
	Plugin, ExtensionPoint, Status string
	Duration                       time.Duration
}

// CycleReport describes a scheduling cycle for a DetailObserver.
type CycleReport struct {
	// Profile is the pod's schedulerName.
	Profile string
	// Algorithm is the time from the start of the cycle to its decision
	// (Filter, Score and, when the pod fits nowhere, PostFilter).
	Algorithm time.Duration
	// ExtensionPoints are the extension points the cycle ran, in order.
	ExtensionPoints []ExtensionPointRun
	// Plugins are the runs of single plugins the cycle can time.
	Plugins []PluginRun
	// UnschedulablePlugins are the plugins that rejected the pod (empty
	// when it fits).
	UnschedulablePlugins []string
	// PostFilter is the status code of the preemption evaluation, "" when
	// it did not run.
	PostFilter string
	// Evaluations are the cycle's plugin calls at PreFilter, Filter
	// (including the preemption dry run's), PreScore and Score, as
	// upstream's scheduler_plugin_evaluation_total counts them; only
	// non-zero counts are listed.
	Evaluations []PluginEvaluation
}

// DetailObserver is an Observer that also learns the phases of cycles,
// the queue's arrivals and the scheduler's goroutines, for upstream's
// finer metrics. The scheduler uses these methods when Options.Observer
// implements them: the core calls Cycle and QueueIncoming (under Live's
// lock), the executor of actions Binding, Goroutines and
// PreemptionExecuted (under Live, on actuation goroutines without the
// lock). They must neither block nor call the scheduler.
type DetailObserver interface {
	Observer
	// Cycle is a finished scheduling cycle.
	Cycle(pod *v1.Pod, r CycleReport)
	// Binding is a finished binding cycle (PreBind, Bind).
	Binding(pod *v1.Pod, profile string, runs []ExtensionPointRun, plugins []PluginRun)
	// QueueIncoming is a pod entering a queue on an event.
	QueueIncoming(queue, event string)
	// Goroutines is a goroutine starting (+1) or ending (-1) an operation.
	Goroutines(operation string, delta int)
	// PreemptionExecuted is the end of a preemption's API calls: result is
	// "success" or "error", d how long the calls took.
	PreemptionExecuted(pod *v1.Pod, result string, d time.Duration)
}

// QueuedPodState is a pod the queue holds, for the unschedulable_pods
// gauge.
type QueuedPodState struct {
	Key string
	// Profile is the pod's schedulerName.
	Profile string
	// InFlight is set while the pod is in a scheduling or binding cycle.
	InFlight bool
	// Gated is set for a pod with scheduling gates (rejected by the
	// SchedulingGates PreEnqueue plugin).
	Gated bool
}

// QueuedPods returns the pods the queue holds, in no order.
func (s *Core) QueuedPods() []QueuedPodState {
	out := make([]QueuedPodState, 0, len(s.queue.pods))
	for _, qp := range s.queue.pods {
		out = append(out, QueuedPodState{
			Key:      qp.Key,
			Profile:  qp.Pod.Spec.SchedulerName,
			InFlight: qp.where == inFlight,
			Gated:    len(qp.Pod.Spec.SchedulingGates) > 0,
		})
	}
	return out
}

func (s *Core) detail() DetailObserver {
	do, _ := s.opts.Observer.(DetailObserver)
	return do
}

// queueLabel names the queue holding qp as upstream labels it.
func queueLabel(qp *queuedPod) string {
	switch qp.where {
	case inActive:
		return QueueActive
	case inBackoff:
		return QueueBackoff
	}
	return QueueUnschedulable
}

// reportQueued tells the observer where qp went on event.
func (s *Core) reportQueued(qp *queuedPod, event string) {
	do := s.detail()
	if do == nil || qp == nil || s.queue.pods[qp.Key] != qp {
		return
	}
	do.QueueIncoming(queueLabel(qp), event)
}

// reportAdded tells the observer about a pod schedulingQueue.Add enqueued.
func (s *Core) reportAdded(key string) {
	if qp := s.queue.pods[key]; qp != nil {
		label := QueueActive
		if len(qp.Pod.Spec.SchedulingGates) > 0 {
			label = QueueUnschedulable
		}
		if do := s.detail(); do != nil {
			do.QueueIncoming(label, EventUnscheduledPodAdd)
		}
	}
}

// timed runs f and returns its status and a run of the extension point,
// timed on clk.
func timed(clk clock.PassiveClock, name string, f func() filter.Code) ExtensionPointRun {
	start := clk.Now()
	code := f()
	return ExtensionPointRun{Name: name, Status: code.String(), Duration: clk.Since(start)}
}

// rejectors are the plugins that rejected the pod in a failed cycle.
func rejectors(c *filter.Cycle, fr filter.Result) []string {
	var out []string
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if st := c.PreFilterStatus(); !st.IsSuccess() {
		add(st.Plugin)
		return out
	}
	for _, st := range fr.Statuses {
		if !st.IsSuccess() {
			add(st.Plugin)
		}
	}
	return out
}

// filterNominated filters the pod on its nominated node, as a Filter run.
func (s *Core) filterNominated(d *decision, c *filter.Cycle, n *snapshot.Node, ev *evaluations) bool {
	var ok bool
	run := timed(s.clock, "Filter", func() filter.Code {
		st := c.FilterOne(n)
		ok = st.IsSuccess()
		if ev != nil && c.Filters(n) {
			c.CountFilterWithNominatedPods(&ev.filter, n, st, 1)
		}
		if st.Code == filter.Error {
			return filter.Error
		}
		return filter.Success
	})
	if c.PreFilterStatus().IsSuccess() {
		d.report.ExtensionPoints = append(d.report.ExtensionPoints, run)
	}
	return ok
}

// filterCode is the status of a Filter run as upstream reports it: Error
// when a filter failed on a node, else Success (rejections are not errors).
func filterCode(fr filter.Result) filter.Code {
	for _, st := range fr.Statuses {
		if st.Code == filter.Error {
			return filter.Error
		}
	}
	return filter.Success
}

// postFilter records DefaultPreemption's evaluation: Success when it chose
// a node, Error when a dry run failed without a candidate, else
// Unschedulable.
func (r *CycleReport) postFilter(res *preemption.Result, d time.Duration) {
	code := filter.Unschedulable
	switch {
	case res.Chosen != nil:
		code = filter.Success
	case res.Err != nil:
		code = filter.Error
	}
	r.PostFilter = code.String()
	r.ExtensionPoints = append(r.ExtensionPoints, ExtensionPointRun{Name: "PostFilter", Status: r.PostFilter, Duration: d})
	r.Plugins = append(r.Plugins, PluginRun{Plugin: "DefaultPreemption", ExtensionPoint: "PostFilter", Status: r.PostFilter, Duration: d})
}

func errCode(err error) filter.Code {
	if err != nil {
		return filter.Error
	}
	return filter.Success
}

// moves runs f, which may move pods out of the unschedulable pool, and
// reports each pod it moved on event ("" reports none).
func (s *Core) moves(event string, f func()) {
	do := s.detail()
	if do == nil || event == "" {
		f()
		return
	}
	moved := make([]*queuedPod, 0, len(s.queue.unschedulable))
	for _, qp := range s.queue.unschedulable {
		moved = append(moved, qp)
	}
	f()
	for _, qp := range moved {
		if s.queue.pods[qp.Key] == qp && qp.where != inUnschedulable {
			do.QueueIncoming(queueLabel(qp), event)
		}
	}
}
