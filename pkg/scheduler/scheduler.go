// Package scheduler is reprieve's scheduler core, shared by the virtual-time
// simulator and the live scheduler: a scheduling queue, a cluster cache (a
// snapshot maintained from events), and a scheduling cycle — Filter,
// PostFilter (preemption), Score, bind — that acts on the cluster through a
// small Cluster interface.
//
// Preemption is actuated as upstream's asynchronous preemption: the
// preemptor is nominated, each victim gets the DisruptionTarget condition and
// a graceful delete, lower-priority pods nominated to the node lose their
// nomination. The preemptor stays out of scheduling until those calls have
// returned and each victim is deleted or terminating (so that it never
// preempts again while its victims are still visible), and is retried at
// once when the cache sees its last victim deleted (see Queue.Gate).
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/reprieve/reprieve/pkg/config"
	"github.com/reprieve/reprieve/pkg/filter"
	"github.com/reprieve/reprieve/pkg/preemption"
	"github.com/reprieve/reprieve/pkg/score"
	"github.com/reprieve/reprieve/pkg/snapshot"
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

// Cluster is how the scheduler acts on the cluster. The scheduler never
// changes its own cache for these calls; it learns their effects from the
// event handlers (OnPodUpdate, OnPodDelete, ...), as from informers.
type Cluster interface {
	// Bind assigns pod to node (the pods/binding subresource).
	Bind(ctx context.Context, pod *v1.Pod, node string) error
	// SetUnschedulable records a failed attempt on a pending pod: the
	// PodScheduled=False condition with reason Unschedulable and message,
	// and status.nominatedNodeName set to nominated when setNominated is
	// true ("" clears it).
	SetUnschedulable(ctx context.Context, pod *v1.Pod, message string, setNominated bool, nominated string) error
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

// Observer is told what the scheduler does, for metrics and reports. With
// Options.Async its methods are also called from actuation goroutines, so
// they must then be safe for concurrent use.
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
	// kube-scheduler does. SchedulerName and Preemption's candidate budget
	// are then ignored.
	Profiles []config.Profile
	// Preemption configures DefaultPreemption (seed, candidate budget).
	Preemption preemption.Options
	// Seed seeds the scheduler's random choices (score ties, dry-run offsets).
	Seed uint64
	// InitialBackoff and MaxBackoff bound the backoff of pods that failed
	// to schedule; zero means the defaults (1s and 10s).
	InitialBackoff, MaxBackoff time.Duration
	// DefaultSelector gives PodTopologySpread's default constraints the
	// selector of the controllers owning a pod; nil disables them.
	DefaultSelector score.Selectors
	// Observer receives metrics; nil ignores them.
	Observer Observer
	// Parallelism bounds the goroutines of a scheduling cycle (filtering
	// and the preemption dry run), the caller's included; 0 means
	// GOMAXPROCS.
	Parallelism int
	// Async makes binding and preemption calls run in goroutines, as
	// upstream's binding cycle and asynchronous preemption do, so that the
	// next pod is scheduled meanwhile (the live scheduler). Without it the
	// calls return before ScheduleOne does, which keeps a simulation
	// deterministic.
	Async bool
}

// Scheduler schedules the pending pods of its profiles.
type Scheduler struct {
	opts    Options
	clock   clock.Clock
	cluster Cluster

	mu                 sync.Mutex
	snap               *snapshot.Snapshot
	queue              *Queue
	rng                *rand.Rand
	nextStartNodeIndex int
	// assumed are pods bound in the cache before the API confirmed it.
	assumed map[string]bool
	// filterBuffers and evaluator are the memory of scheduling cycles,
	// reused from one to the next (cycles run one at a time, under mu).
	filterBuffers filter.Buffers
	evaluator     preemption.Evaluator
	// claimsInFlight are the resource claims assumed by cycles whose
	// binding has not finished, by "namespace/name" (dra.go).
	claimsInFlight map[string]*claimInFlight
	// wake nudges Run when an event may have made work.
	wake chan struct{}

	// profiles are the profiles by schedulerName.
	profiles map[string]*config.Profile
}

// New returns a scheduler with an empty cache on clk, acting on cluster.
func New(cluster Cluster, clk clock.Clock, opts Options) *Scheduler {
	if opts.SchedulerName == "" {
		opts.SchedulerName = v1.DefaultSchedulerName
	}
	s := &Scheduler{
		opts:    opts,
		clock:   clk,
		cluster: cluster,
		snap:    snapshot.Empty(),
		queue:   NewQueue(clk),
		rng:     rand.New(rand.NewPCG(opts.Seed, 0x5eed)),
		assumed: map[string]bool{},
		wake:    make(chan struct{}, 1),
	}
	s.profiles = map[string]*config.Profile{}
	if len(opts.Profiles) == 0 {
		s.profiles[opts.SchedulerName] = &config.Profile{
			SchedulerName:               opts.SchedulerName,
			Preemption:                  true,
			HasPostFilter:               true,
			MinCandidateNodesPercentage: opts.Preemption.MinCandidateNodesPercentage,
			MinCandidateNodesAbsolute:   opts.Preemption.MinCandidateNodesAbsolute,
			Score:                       score.DefaultConfig(),
		}
	}
	// The scheduler's own copy: the caller may reuse its slice.
	own := slices.Clone(opts.Profiles)
	for i := range own {
		s.profiles[own[i].SchedulerName] = &own[i]
	}
	if opts.InitialBackoff > 0 {
		s.queue.initialBackoff = opts.InitialBackoff
	}
	if opts.MaxBackoff > 0 {
		s.queue.maxBackoff = opts.MaxBackoff
	}
	return s
}

// notify wakes Run; handlers call it after every change.
func (s *Scheduler) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run schedules pods until ctx is done, sleeping while there is nothing to
// do until an event arrives or the queue's next backoff or flush is due.
func (s *Scheduler) Run(ctx context.Context) {
	for ctx.Err() == nil {
		if s.ScheduleOne(ctx) {
			continue
		}
		var (
			t     clock.Timer
			timer <-chan time.Time
		)
		if next, ok := s.NextWakeup(); ok {
			t = s.clock.NewTimer(max(next.Sub(s.clock.Now()), time.Millisecond))
			timer = t.C()
		}
		select {
		case <-ctx.Done():
		case <-s.wake:
		case <-timer:
		}
		if t != nil {
			t.Stop()
		}
	}
}

// responsible reports whether this scheduler schedules pod.
func (s *Scheduler) responsible(pod *v1.Pod) bool {
	return s.profiles[pod.Spec.SchedulerName] != nil
}

func assigned(pod *v1.Pod) bool { return pod.Spec.NodeName != "" }

func terminal(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}

// OnPodAdd handles a new pod.
func (s *Scheduler) OnPodAdd(pod *v1.Pod) {
	defer s.notify()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.podAdded(pod)
}

func (s *Scheduler) podAdded(pod *v1.Pod) {
	switch {
	case terminal(pod):
		return
	case assigned(pod):
		s.upsert(pod)
	case s.responsible(pod) && pod.DeletionTimestamp == nil:
		s.upsert(pod)
		s.queue.Add(pod)
		s.reportAdded(podKey(pod))
	}
}

func (s *Scheduler) upsert(pod *v1.Pod) {
	if _, err := s.snap.UpdatePod(pod); err != nil {
		klog.Background().V(2).Info("Ignoring pod the cache cannot hold", "pod", klog.KObj(pod), "err", err)
	}
}

// OnPodUpdate handles a changed pod.
func (s *Scheduler) OnPodUpdate(old, pod *v1.Pod) {
	defer s.notify()
	s.mu.Lock()
	defer s.mu.Unlock()
	key := podKey(pod)
	switch {
	case terminal(pod):
		// A finished pod frees its node, as if deleted.
		s.podGone(key, old != nil && assigned(old) || assigned(pod))
	case assigned(pod):
		delete(s.assumed, key)
		s.queue.Delete(key)
		s.upsert(pod)
		if pod.DeletionTimestamp != nil {
			s.queue.VictimTerminating(key)
		}
	case s.responsible(pod) && pod.DeletionTimestamp == nil:
		s.upsert(pod)
		s.queue.Update(pod)
		if claimStatusesChanged(old, pod) {
			s.queue.MoveAllToActiveOrBackoff()
		}
	default:
		s.podGone(key, false)
	}
}

// OnPodDelete handles a deleted pod.
func (s *Scheduler) OnPodDelete(pod *v1.Pod) {
	defer s.notify()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.podGone(podKey(pod), assigned(pod))
}

func (s *Scheduler) podGone(key string, wasAssigned bool) {
	p := s.snap.Pod(key)
	wasAssigned = wasAssigned || p != nil && assigned(p.Obj)
	s.snap.RemovePod(key)
	s.queue.Delete(key)
	event := ""
	if wasAssigned {
		event = EventAssignedPodDelete
	}
	s.moves(event, func() {
		s.queue.VictimGone(key)
		if wasAssigned {
			s.queue.MoveAllToActiveOrBackoff()
		}
	})
	delete(s.assumed, key)
}

// OnNodeAdd handles a new node.
func (s *Scheduler) OnNodeAdd(node *v1.Node) { s.nodeChanged(node, EventNodeAdd) }

// OnNodeUpdate handles a changed node.
func (s *Scheduler) OnNodeUpdate(node *v1.Node) { s.nodeChanged(node, "") }

// nodeChanged updates the cache and moves the unschedulable pods, on event
// for the metrics ("" for an update: upstream names updates by what
// changed, which needs the old node).
func (s *Scheduler) nodeChanged(node *v1.Node, event string) {
	defer s.notify()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.snap.UpdateNode(node); err == nil {
		s.moves(event, s.queue.MoveAllToActiveOrBackoff)
	}
}

// OnNodeDelete handles a deleted node.
func (s *Scheduler) OnNodeDelete(name string) {
	defer s.notify()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap.RemoveNode(name)
}

// OnPDB handles a created or changed disruption budget.
func (s *Scheduler) OnPDB(pdb *policyv1.PodDisruptionBudget) {
	defer s.notify()
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.snap.SetPDB(pdb)
}

// OnPDBDelete handles a deleted disruption budget.
func (s *Scheduler) OnPDBDelete(namespace, name string) {
	defer s.notify()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap.RemovePDB(namespace, name)
}

// OnPriorityClass handles a created or changed priority class.
func (s *Scheduler) OnPriorityClass(pc *schedulingv1.PriorityClass) {
	defer s.notify()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap.SetPriorityClass(pc)
}

// OnNamespace handles a created or changed namespace.
func (s *Scheduler) OnNamespace(ns *v1.Namespace) {
	defer s.notify()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap.SetNamespace(ns)
}

// NextWakeup returns when the scheduler next has work without any cluster
// event (see Queue.NextWakeup).
func (s *Scheduler) NextWakeup() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queue.NextWakeup()
}

// Pending returns the number of pods waiting to be scheduled.
func (s *Scheduler) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queue.Len()
}

// QueueCounts returns the pending pods by queue (Queue.Counts).
func (s *Scheduler) QueueCounts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queue.Counts()
}

// Snapshot gives f the scheduler's cache, under the scheduler's lock.
func (s *Scheduler) Snapshot(f func(*snapshot.Snapshot)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.snap)
}

// decision is what a cycle decided, to be actuated without the lock.
type decision struct {
	qp      *QueuedPod
	pod     *snapshot.Pod
	node    string // bind here
	message string // FailedScheduling message
	// preemption outcome: evaluated is set when the dry run ran, plan when
	// it chose a node.
	evaluated      bool
	plan           *preemptionPlan
	clearNominated []*v1.Pod
	setNominated   bool
	nominated      string
	started        time.Time
	evaluation     time.Duration
	// volumes are the pod's claims to bind or provision before binding it
	// (VolumeBinding's PreBind, volumes.go), nil when it has none.
	volumes *filter.VolumeBindings
	// report describes the cycle for a DetailObserver (report.go).
	report CycleReport
	// claims are the pod's resource claims to allocate or reserve before
	// binding it (DynamicResources' PreBind, dra.go), nil when none.
	claims *filter.DRAAllocation
}

// preemptionPlan is what actuating a preemption needs of the dry run.
type preemptionPlan struct {
	node             string
	victims          []*v1.Pod
	numPDBViolations int
}

// ScheduleOne runs one scheduling cycle. It returns false when no pod was
// ready.
func (s *Scheduler) ScheduleOne(ctx context.Context) bool {
	s.mu.Lock()
	d := s.decide()
	s.mu.Unlock()
	if d == nil {
		return false
	}
	if do := s.detail(); do != nil && d.pod != nil {
		do.Cycle(d.pod.Obj, d.report)
	}
	if d.pod != nil {
		s.actuate(ctx, d)
	}
	return true
}

// decide pops a pod and runs Filter, PostFilter and Score on the cache. It
// assumes a bound pod in the cache at once, so that the next cycle sees it.
func (s *Scheduler) decide() *decision {
	for {
		qp := s.queue.Pop()
		if qp == nil {
			return nil
		}
		p := s.snap.Pod(qp.Key)
		if p == nil || assigned(p.Obj) || p.Obj.DeletionTimestamp != nil || len(p.Obj.Spec.SchedulingGates) > 0 {
			s.queue.Forget(qp)
			continue
		}
		return s.cycle(qp, p)
	}
}

func (s *Scheduler) cycle(qp *QueuedPod, p *snapshot.Pod) *decision {
	d := &decision{qp: qp, pod: p, started: s.clock.Now()}
	d.report.Profile = p.Obj.Spec.SchedulerName
	defer func() { d.report.Algorithm = s.clock.Since(d.started) }()
	prof := s.profiles[p.Obj.Spec.SchedulerName]
	fopts := prof.Filter
	fopts.Parallelism, fopts.Buffers = s.opts.Parallelism, &s.filterBuffers
	fopts.DRAPreemption = fopts.DRAPreemption || s.opts.Preemption.Features.DRAPreemption
	var c *filter.Cycle
	d.report.ExtensionPoints = append(d.report.ExtensionPoints, s.timed("PreFilter", func() filter.Code {
		c = filter.NewCycle(s.snap, p, fopts)
		return c.PreFilterStatus().Code
	}))
	nodes := s.snap.Nodes
	if len(nodes) == 0 {
		d.message = "no nodes available to schedule pods"
		// As upstream, a failure that is not a fit error clears the
		// nomination: the nominated node is no use any more.
		d.setNominated, d.nominated = p.Obj.Status.NominatedNodeName != "", ""
		return d
	}

	// A nominated node is likely the one the pod was preempting for: try it first.
	if nnn := p.Obj.Status.NominatedNodeName; nnn != "" {
		if n := s.snap.Node(nnn); n != nil && s.filterNominated(d, c, n) {
			var err error
			if d.claims, err = s.reserveClaims(c, p, n); err != nil {
				d.message = err.Error()
				return d
			}
			d.node = nnn
			d.volumes = volumeBindings(c, n)
			s.assume(p, nnn)
			return d
		}
	}
	want := score.NumFeasibleNodesToFindPercentage(len(nodes), prof.PercentageOfNodesToScore)
	if !prof.Score.HasScorePlugins() {
		// Without scoring the first feasible node is the answer.
		want = 1
	}
	var fr filter.Result
	var examined int
	filterRun := s.timed("Filter", func() filter.Code {
		fr, examined = c.FilterFrom(s.nextStartNodeIndex, want)
		return filterCode(fr)
	})
	if c.PreFilterStatus().IsSuccess() {
		d.report.ExtensionPoints = append(d.report.ExtensionPoints, filterRun)
	}
	s.nextStartNodeIndex = (s.nextStartNodeIndex + examined) % len(nodes)
	if len(fr.Feasible) > 0 {
		node := fr.Feasible[0]
		if len(fr.Feasible) > 1 {
			var scores []int64
			d.report.ExtensionPoints = append(d.report.ExtensionPoints, s.timed("Score", func() filter.Code {
				scores = score.Score(s.snap, p, fr.Feasible, score.Options{DefaultSelector: s.opts.DefaultSelector, Config: prof.Score})
				return filter.Success
			}))
			node = score.SelectHost(fr.Feasible, scores)
		}
		var err error
		if d.claims, err = s.reserveClaims(c, p, node); err != nil {
			d.message = err.Error()
			return d
		}
		d.node = node.Name
		d.volumes = volumeBindings(c, node)
		s.assume(p, node.Name)
		return d
	}

	// PostFilter: preemption.
	d.report.UnschedulablePlugins = rejectors(c, fr)
	if c.PreFilterStatus().Code == filter.Error {
		d.message = c.PreFilterStatus().Message()
		d.setNominated, d.nominated = p.Obj.Status.NominatedNodeName != "", ""
		return d
	}
	if !prof.Preemption {
		// No DefaultPreemption: the fit error alone. The nomination is
		// cleared only when no PostFilter plugin runs at all (a PostFilter
		// that cannot help, DynamicResources' for a pod without claims,
		// leaves it).
		d.message = filter.FitErrorMessage(len(nodes), c.PreFilterStatus(), fr.Statuses)
		if !prof.HasPostFilter {
			d.setNominated, d.nominated = p.Obj.Status.NominatedNodeName != "", ""
		}
		return d
	}
	popts := s.opts.Preemption
	popts.MinCandidateNodesPercentage = prof.MinCandidateNodesPercentage
	popts.MinCandidateNodesAbsolute = prof.MinCandidateNodesAbsolute
	popts.Seed = s.rng.Uint64()
	popts.Now = s.clock.Now()
	evalStart := s.clock.Now()
	res, err := s.evaluator.Evaluate(c, fr, popts)
	if err != nil {
		// Only a missing clock fails an evaluation, and popts has one.
		d.message = err.Error()
		return d
	}
	d.evaluation = s.clock.Since(evalStart)
	d.evaluated = true
	d.report.postFilter(res, d.evaluation)
	d.message = preemption.FailedSchedulingMessage(c, fr, res)
	switch {
	case res.Chosen != nil:
		node := res.Chosen.Node.Name
		d.plan = &preemptionPlan{node: node, numPDBViolations: res.Chosen.NumPDBViolations}
		for _, v := range res.Chosen.Victims {
			d.plan.victims = append(d.plan.victims, v.Pod.Obj)
		}
		d.setNominated, d.nominated = true, node
		// Lower-priority pods nominated to the node may no longer fit there.
		for _, np := range s.snap.NominatedPods(node) {
			if np.Priority < p.Priority && np.Key != p.Key {
				d.clearNominated = append(d.clearNominated, np.Obj)
			}
		}
		// The nominator learns at once, not when the API update comes back.
		for _, np := range d.clearNominated {
			s.nominate(np, "")
		}
		s.nominate(p.Obj, node)
		s.queue.Gate(qp.Key, d.plan.victims)
	case res.Eligible && res.Err == nil:
		// No candidate: the pod's nomination, if any, is cleared.
		d.setNominated, d.nominated = p.Obj.Status.NominatedNodeName != "", ""
	}
	return d
}

// nominate records a nomination in the cache before the API does.
func (s *Scheduler) nominate(pod *v1.Pod, node string) {
	obj := pod.DeepCopy()
	obj.Status.NominatedNodeName = node
	s.upsert(obj)
}

// assume binds the pod in the cache before the API does.
func (s *Scheduler) assume(p *snapshot.Pod, node string) {
	obj := p.Obj.DeepCopy()
	obj.Spec.NodeName = node
	obj.Status.NominatedNodeName = ""
	s.assumed[p.Key] = true
	s.upsert(obj)
}

// forget undoes assume after a failed bind.
func (s *Scheduler) forget(p *snapshot.Pod) {
	if s.assumed[p.Key] {
		delete(s.assumed, p.Key)
		s.upsert(p.Obj)
	}
}

// actuate carries out a decision through the cluster, without the lock.
func (s *Scheduler) actuate(ctx context.Context, d *decision) {
	if d.node != "" {
		if s.opts.Async {
			go s.bind(ctx, d)
		} else {
			s.bind(ctx, d)
		}
		return
	}
	pod := d.pod.Obj
	logger := klog.FromContext(ctx)
	obs := s.opts.Observer
	// Preemption: the pod is gated (see Queue.Gate).
	if d.plan != nil {
		if s.opts.Async {
			go s.preempt(ctx, d)
		} else {
			s.preempt(ctx, d)
		}
	} else if obs != nil && d.evaluated {
		obs.Preemption(pod, "", nil, 0, d.evaluation)
	}
	if err := s.cluster.SetUnschedulable(ctx, pod, d.message, d.setNominated, d.nominated); err != nil {
		logger.Error(err, "Updating pod status failed", "pod", klog.KObj(pod))
	}
	s.cluster.Event(pod, nil, v1.EventTypeWarning, ReasonFailedScheduling, ActionScheduling, d.message)
	s.mu.Lock()
	s.queue.Done(d.qp, true)
	s.reportQueued(d.qp, EventScheduleAttemptFailed)
	s.mu.Unlock()
	if obs != nil {
		obs.Attempt(pod, AttemptUnschedulable, s.clock.Since(d.started))
	}
}

// bind binds the assumed pod, or undoes the assumption when the API refuses.
func (s *Scheduler) bind(ctx context.Context, d *decision) {
	pod := d.pod.Obj
	obs := s.opts.Observer
	defer s.goroutine("binding")()
	claims, err := s.bindCalls(ctx, d)
	if err != nil {
		s.unreserveClaims(ctx, d, claims)
	}
	s.mu.Lock()
	s.releaseClaims(d, claims, err == nil)
	if err != nil {
		s.forget(d.pod)
		s.queue.Done(d.qp, false)
		s.reportQueued(d.qp, EventScheduleAttemptFailed)
		s.mu.Unlock()
		s.notify()
		klog.FromContext(ctx).Error(err, "Binding failed", "pod", klog.KObj(pod), "node", d.node)
		s.cluster.Event(pod, nil, v1.EventTypeWarning, ReasonFailedScheduling, ActionScheduling, fmt.Sprintf("Binding rejected: %v", err))
		if obs != nil {
			obs.Attempt(pod, AttemptError, s.clock.Since(d.started))
		}
		return
	}
	s.queue.Forget(d.qp)
	attempts, first := d.qp.Attempts, d.qp.InitialAttempt
	s.mu.Unlock()
	s.cluster.Event(pod, nil, v1.EventTypeNormal, ReasonScheduled, ActionBinding, fmt.Sprintf("Successfully assigned %s/%s to %s", pod.Namespace, pod.Name, d.node))
	if obs != nil {
		obs.Attempt(pod, AttemptScheduled, s.clock.Since(d.started))
		obs.Scheduled(pod, d.node, attempts, s.clock.Since(first))
	}
}

// preempt actuates a preemption as upstream's asynchronous preemption does:
// lower-priority pods nominated to the node lose their nomination, then each
// victim gets the DisruptionTarget condition and a graceful delete (all but
// the last concurrently when asynchronous), victims already terminating get
// no call. The queue learns when the calls have returned and whether one
// failed (Queue.Ungate).
func (s *Scheduler) preempt(ctx context.Context, d *decision) {
	pod := d.pod.Obj
	logger := klog.FromContext(ctx)
	plan := d.plan
	node := plan.node
	var failed atomic.Bool
	start := s.clock.Now()
	defer func() {
		s.reportPreemptionRun(pod, failed.Load(), start)
		s.mu.Lock()
		s.queue.Ungate(d.qp.Key, !failed.Load())
		s.mu.Unlock()
		s.notify()
	}()
	for _, np := range d.clearNominated {
		if err := s.cluster.ClearNominatedNode(ctx, np); err != nil {
			logger.Error(err, "Cannot clear nominatedNodeName of a lower-priority pod", "pod", klog.KObj(np), "node", node)
		}
	}
	condition := v1.PodCondition{
		Type:    v1.DisruptionTarget,
		Status:  v1.ConditionTrue,
		Reason:  v1.PodReasonPreemptionByScheduler,
		Message: fmt.Sprintf("%s: preempting to accommodate a higher priority pod", d.pod.Obj.Spec.SchedulerName),
	}
	var toDelete []*v1.Pod
	for _, v := range plan.victims {
		if v.DeletionTimestamp == nil {
			toDelete = append(toDelete, v)
		}
	}
	one := func(v *v1.Pod) {
		if err := s.cluster.Preempt(ctx, v, condition); errors.Is(err, ErrVictimGone) {
			logger.V(2).Info("Victim pod is already deleted", "victim", klog.KObj(v), "preemptor", klog.KObj(pod), "node", node)
			return
		} else if err != nil {
			failed.Store(true)
			logger.Error(err, "Preempting victim failed", "victim", klog.KObj(v), "preemptor", klog.KObj(pod))
			return
		}
		s.cluster.Event(v, pod, v1.EventTypeNormal, ReasonPreempted, ActionPreempting,
			fmt.Sprintf("Preempted by pod %s on node %s", pod.UID, node))
	}
	if s.opts.Async && len(toDelete) > 1 {
		var wg sync.WaitGroup
		for _, v := range toDelete[:len(toDelete)-1] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				one(v)
			}()
		}
		wg.Wait()
		one(toDelete[len(toDelete)-1])
	} else {
		for _, v := range toDelete {
			one(v)
		}
	}
	if obs := s.opts.Observer; obs != nil {
		obs.Preemption(pod, node, plan.victims, plan.numPDBViolations, d.evaluation)
	}
}
