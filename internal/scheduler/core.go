package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/reprieve/reprieve/internal/engine/filter"
	"github.com/reprieve/reprieve/internal/engine/preemption"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/score"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// Core is the scheduler's synchronous core, as raft's RawNode: events come
// in through its handlers (OnPodAdd, OnNodeUpdate, ...), Cycle runs one
// scheduling cycle and returns what must be done through the cluster, and
// the driver that did it reports the outcome back (BindDone,
// PreemptionDone, FailureDone). It starts no goroutines of its own (a
// cycle's filtering and dry run use Options.Parallelism), takes no lock and
// never calls the cluster: it is not safe for concurrent use, and its
// driver — Scheduler, Live, or a test — calls it from one goroutine at a
// time. An event may arrive between a cycle and its outcome, as from
// informers while an API call is in flight.
type Core struct {
	opts  Options
	clock clock.PassiveClock

	snap               *snapshot.Snapshot
	queue              *schedulingQueue
	rng                *rand.Rand
	nextStartNodeIndex int
	// assumed are pods bound in the cache before the API confirmed it.
	assumed map[string]bool
	// filterBuffers and evaluator are the memory of scheduling cycles,
	// reused from one to the next (cycles run one at a time).
	filterBuffers filter.Buffers
	evaluator     preemption.Evaluator
	// counter adds the preemption dry run's Filter calls to a cycle's
	// evaluation counts (seeded with them, read back after), for a
	// DetailObserver only; its memory is reused likewise.
	counter preemption.Counter
	// claimsInFlight are the resource claims assumed by cycles whose
	// binding has not finished, by "namespace/name" (dra.go).
	claimsInFlight map[string]*claimInFlight

	// profiles are the profiles by schedulerName.
	profiles map[string]*profile.Profile
}

// NewCore returns a core with an empty cache and queue on clk.
func NewCore(clk clock.PassiveClock, opts Options) *Core {
	if opts.SchedulerName == "" {
		opts.SchedulerName = v1.DefaultSchedulerName
	}
	s := &Core{
		opts:    opts,
		clock:   clk,
		snap:    snapshot.Empty(),
		queue:   newSchedulingQueue(clk),
		rng:     rand.New(rand.NewPCG(opts.Seed, 0x5eed)),
		assumed: map[string]bool{},
	}
	s.profiles = map[string]*profile.Profile{}
	if len(opts.Profiles) == 0 {
		s.profiles[opts.SchedulerName] = &profile.Profile{
			SchedulerName: opts.SchedulerName,
			Preemption:    true,
			HasPostFilter: true,
			Score:         score.DefaultConfig(),
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

// responsible reports whether this scheduler schedules pod.
func (s *Core) responsible(pod *v1.Pod) bool {
	return s.profiles[pod.Spec.SchedulerName] != nil
}

func assigned(pod *v1.Pod) bool { return pod.Spec.NodeName != "" }

func terminal(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}

// NextWakeup returns when the scheduler next has work without any cluster
// event (see schedulingQueue.NextWakeup).
func (s *Core) NextWakeup() (time.Time, bool) {
	return s.queue.NextWakeup()
}

// QueueCounts returns the pending pods by queue (schedulingQueue.Counts).
func (s *Core) QueueCounts() Counts {
	return s.queue.Counts()
}

// decision is what a cycle decided; Cycle turns it into Actions.
type decision struct {
	qp      *queuedPod
	pod     *snapshot.Pod
	node    string // bind here
	message string // FailedScheduling message
	// failed is set when the cycle failed with an error (upstream's Error
	// status) rather than finding no fit: reason SchedulerError.
	failed bool
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

// cycleState is what one cycle allocates, at once: its decision and plan,
// and the Actions and their parts that Cycle hands out.
type cycleState struct {
	decision
	attempt    attempt
	plan       preemptionPlan
	actions    Actions
	binding    Binding
	preemption Preemption
	failure    Failure
}

// preemptionPlan is what actuating a preemption needs of the dry run.
type preemptionPlan struct {
	node             string
	victims          []*v1.Pod
	numPDBViolations int
}

// Cycle runs one scheduling cycle: it pops the next pod and runs Filter,
// PostFilter and Score on the cache, and returns what the driver must do
// through the cluster. The pod is assumed on its node (and its claims
// reserved) in the cache before Cycle returns, so that the next cycle sees
// it; a preemptor is nominated in the cache and gated (schedulingQueue.Gate). nil
// means no pod was ready.
func (s *Core) Cycle() *Actions {
	cs := s.decide()
	if cs == nil {
		return nil
	}
	d := &cs.decision
	pod := d.pod.Obj()
	if do := s.detail(); do != nil {
		do.Cycle(pod, d.report)
	}
	at := &cs.attempt
	*at = attempt{qp: d.qp, pod: d.pod, started: d.started}
	a := &cs.actions
	a.Pod = pod
	if d.node != "" {
		cs.binding = Binding{Pod: pod, Node: d.node, Profile: d.report.Profile, Volumes: d.volumes, Claims: d.claims, attempt: at}
		a.Binding = &cs.binding
		return a
	}
	if plan := d.plan; plan != nil {
		p := &cs.preemption
		*p = Preemption{
			Preemptor:        pod,
			Node:             plan.node,
			ClearNominated:   d.clearNominated,
			Victims:          plan.victims,
			NumPDBViolations: plan.numPDBViolations,
			Condition: v1.PodCondition{
				Type:    v1.DisruptionTarget,
				Status:  v1.ConditionTrue,
				Reason:  v1.PodReasonPreemptionByScheduler,
				Message: fmt.Sprintf("%s: preempting to accommodate a higher priority pod", pod.Spec.SchedulerName),
			},
			attempt:    at,
			evaluation: d.evaluation,
		}
		// Victims already terminating get no call.
		p.Delete = make([]*v1.Pod, 0, len(plan.victims))
		for _, v := range plan.victims {
			if v.DeletionTimestamp == nil {
				p.Delete = append(p.Delete, v)
			}
		}
		a.Preemption = p
	} else if obs := s.opts.Observer; obs != nil && d.evaluated {
		obs.Preemption(pod, "", nil, 0, d.evaluation)
	}
	reason := v1.PodReasonUnschedulable
	if d.failed {
		reason = v1.PodReasonSchedulerError
	}
	cs.failure = Failure{Pod: pod, Reason: reason, Message: d.message, SetNominated: d.setNominated, Nominated: d.nominated, attempt: at}
	a.Failure = &cs.failure
	return a
}

// BindDone reports how a cycle's Binding went. The pod's in-flight claims
// end (kept as PreBind wrote them); a pod bound leaves the queue, one
// refused is taken off its node in the cache and backs off.
func (s *Core) BindDone(b *Binding, r BindResult) {
	s.releaseClaims(b, r.Claims, r.Err == nil)
	pod, at := b.Pod, b.attempt
	obs := s.opts.Observer
	if r.Err != nil {
		s.forget(at.pod)
		s.queue.Done(at.qp, false)
		s.reportQueued(at.qp, EventScheduleAttemptFailed)
		if obs != nil {
			obs.Attempt(pod, AttemptError, s.clock.Since(at.started))
		}
		return
	}
	s.queue.Forget(at.qp)
	if obs != nil {
		obs.Attempt(pod, AttemptScheduled, s.clock.Since(at.started))
		obs.Scheduled(pod, b.Node, at.qp.Attempts, s.clock.Since(at.qp.InitialAttempt))
	}
}

// PreemptionDone reports that a Preemption's API calls have returned,
// failed telling whether one failed (other than for a victim already
// gone): the preemptor waits for its victims to go, or, after a failure,
// is retried after its backoff (schedulingQueue.Ungate).
func (s *Core) PreemptionDone(p *Preemption, failed bool) {
	if obs := s.opts.Observer; obs != nil {
		obs.Preemption(p.Preemptor, p.Node, p.Victims, p.NumPDBViolations, p.evaluation)
	}
	s.queue.Ungate(p.attempt.qp.Key, !failed)
}

// FailureDone reports that a Failure was recorded (or its status update
// failed, which changes nothing here): the pod returns to the queue as
// unschedulable (schedulingQueue.Done), or, after an error, backs off. With a
// Preemption, report that first when its calls return first, as the
// synchronous driver does.
func (s *Core) FailureDone(f *Failure) {
	failed := f.Reason == v1.PodReasonSchedulerError
	s.queue.Done(f.attempt.qp, !failed)
	s.reportQueued(f.attempt.qp, EventScheduleAttemptFailed)
	if obs := s.opts.Observer; obs != nil {
		result := AttemptUnschedulable
		if failed {
			result = AttemptError
		}
		obs.Attempt(f.Pod, result, s.clock.Since(f.attempt.started))
	}
}

// decide pops a pod and runs Filter, PostFilter and Score on the cache. It
// assumes a bound pod in the cache at once, so that the next cycle sees it.
func (s *Core) decide() *cycleState {
	for {
		qp := s.queue.Pop()
		if qp == nil {
			return nil
		}
		p := s.snap.Pod(qp.Key)
		if p == nil || assigned(p.Obj()) || p.Obj().DeletionTimestamp != nil || len(p.Obj().Spec.SchedulingGates) > 0 {
			s.queue.Forget(qp)
			continue
		}
		return s.cycle(qp, p)
	}
}

func (s *Core) cycle(qp *queuedPod, p *snapshot.Pod) *cycleState {
	cs := &cycleState{decision: decision{qp: qp, pod: p, started: s.clock.Now()}}
	qp.rejectors = nil
	d := &cs.decision
	d.report.Profile = p.Obj().Spec.SchedulerName
	defer func() { d.report.Algorithm = s.clock.Since(d.started) }()
	// ev counts the plugins' calls, for a DetailObserver only (see
	// evaluations).
	var ev *evaluations
	if s.detail() != nil {
		ev = &evaluations{}
		defer func() { d.report.Evaluations = ev.report() }()
	}
	prof := s.profiles[p.Obj().Spec.SchedulerName]
	fopts := prof.Filter
	fopts.Parallelism, fopts.Buffers = s.opts.Parallelism, &s.filterBuffers
	fopts.DRAPreemption = fopts.DRAPreemption || s.opts.Features.DRAPreemption
	fopts.SpreadEmptySelectorMatchesAll = s.opts.Features.Semantics.SpreadEmptySelectorMatchesAll
	fopts.CSIDriverNotRequired = s.opts.Features.Semantics.CSIDriverNotRequired
	var c *filter.Cycle
	// Room for PreFilter, Filter and Score or PostFilter, and one more.
	d.report.ExtensionPoints = make([]ExtensionPointRun, 0, 4)
	d.report.ExtensionPoints = append(d.report.ExtensionPoints, timed(s.clock, "PreFilter", func() filter.Code {
		c = filter.NewCycle(s.snap, p, fopts)
		return c.PreFilterStatus().Code
	}))
	if ev != nil {
		c.CountPreFilter(&ev.filter)
	}
	nodes := s.snap.Nodes
	if len(nodes) == 0 {
		d.message = "no nodes available to schedule pods"
		// As upstream, a failure that is not a fit error clears the
		// nomination: the nominated node is no use any more.
		d.setNominated, d.nominated = p.Obj().Status.NominatedNodeName != "", ""
		return cs
	}

	// A nominated node is likely the one the pod was preempting for: try it first.
	if nnn := p.Obj().Status.NominatedNodeName; nnn != "" {
		if n := s.snap.Node(nnn); n != nil && s.filterNominated(d, c, n, ev) {
			s.place(d, c, n)
			return cs
		}
	}
	want := score.NumFeasibleNodesToFindPercentage(len(nodes), prof.PercentageOfNodesToScore)
	if !prof.Score.HasScorePlugins() {
		// Without scoring the first feasible node is the answer.
		want = 1
	}
	var fr filter.Result
	var examined int
	filterRun := timed(s.clock, "Filter", func() filter.Code {
		fr, examined = c.FilterFrom(s.nextStartNodeIndex, want)
		return filterCode(fr)
	})
	if c.PreFilterStatus().IsSuccess() {
		d.report.ExtensionPoints = append(d.report.ExtensionPoints, filterRun)
	}
	if ev != nil {
		ev.searched(c, nodes, fr, s.nextStartNodeIndex, examined)
	}
	s.nextStartNodeIndex = (s.nextStartNodeIndex + examined) % len(nodes)
	if len(fr.Feasible) > 0 {
		node := fr.Feasible[0]
		if len(fr.Feasible) > 1 {
			var scores []int64
			d.report.ExtensionPoints = append(d.report.ExtensionPoints, timed(s.clock, "Score", func() filter.Code {
				sopts := score.Options{Config: prof.Score, Devices: c, SpreadEmptySelectorMatchesAll: s.opts.Features.Semantics.SpreadEmptySelectorMatchesAll}
				if ev == nil {
					scores = score.Score(s.snap, p, fr.Feasible, sopts)
					return filter.Success
				}
				plugins, _ := score.ScorePlugins(s.snap, p, fr.Feasible, sopts)
				ev.scored(prof.Score, plugins, len(fr.Feasible))
				scores = score.Total(plugins, len(fr.Feasible))
				return filter.Success
			}))
			node = score.SelectHost(fr.Feasible, scores)
		}
		s.place(d, c, node)
		return cs
	}
	s.postFilter(cs, c, fr, prof, ev)
	return cs
}

// place is Reserve for the pod of d on node: its claims reserved in the
// cache, its volume bindings noted, and the pod assumed there; a Reserve
// error fails the cycle.
func (s *Core) place(d *decision, c *filter.Cycle, node *snapshot.Node) {
	var err error
	if d.claims, err = s.reserveClaims(c, d.pod, node); err != nil {
		d.message, d.failed = err.Error(), true
		return
	}
	d.node = node.Name
	d.volumes = volumeBindings(c, node)
	s.assume(d.pod, node.Name)
}

// postFilter is the PostFilter of a pod that fits nowhere (fr):
// DefaultPreemption's dry run, and, when it chooses a node, the pod
// nominated there and gated until its victims are gone.
func (s *Core) postFilter(cs *cycleState, c *filter.Cycle, fr filter.Result, prof *profile.Profile, ev *evaluations) {
	d := &cs.decision
	p, qp, nodes := d.pod, d.qp, s.snap.Nodes
	d.report.UnschedulablePlugins = rejectors(c, fr)
	qp.rejectors = d.report.UnschedulablePlugins
	if c.PreFilterStatus().Code == filter.Error {
		d.message, d.failed = c.PreFilterStatus().Message(), true
		d.setNominated, d.nominated = p.Obj().Status.NominatedNodeName != "", ""
		return
	}
	if !prof.Preemption {
		// No DefaultPreemption: the fit error alone. The nomination is
		// cleared only when no PostFilter plugin runs at all (a PostFilter
		// that cannot help, DynamicResources' for a pod without claims,
		// leaves it).
		d.message = filter.FitErrorMessage(len(nodes), c.PreFilterStatus(), fr.Statuses)
		if !prof.HasPostFilter {
			d.setNominated, d.nominated = p.Obj().Status.NominatedNodeName != "", ""
		}
		return
	}
	popts := preemption.Options{
		MinCandidateNodesPercentage: prof.MinCandidateNodesPercentage,
		MinCandidateNodesAbsolute:   prof.MinCandidateNodesAbsolute,
		Seed:                        s.rng.Uint64(),
		Now:                         s.clock.Now(),
		Features:                    s.opts.Features,
		Policy:                      s.opts.Policy,
	}
	if ev != nil {
		// The counter adds the dry run's Filter calls to the cycle's.
		s.counter.Evaluations = ev.filter
		popts.Counter = &s.counter
	}
	evalStart := s.clock.Now()
	res, err := s.evaluator.Evaluate(c, fr, popts)
	if err != nil {
		// Only a missing clock fails an evaluation, and popts has one.
		d.message, d.failed = err.Error(), true
		return
	}
	d.evaluation = s.clock.Since(evalStart)
	d.evaluated = true
	if ev != nil {
		ev.filter = s.counter.Evaluations
	}
	d.report.postFilter(res, d.evaluation)
	d.message = preemption.FailedSchedulingMessage(c, fr, res)
	switch {
	case res.Chosen != nil:
		node := res.Chosen.Node.Name
		cs.plan = preemptionPlan{node: node, numPDBViolations: res.Chosen.NumPDBViolations}
		d.plan = &cs.plan
		for _, v := range res.Chosen.Victims {
			d.plan.victims = append(d.plan.victims, v.Pod.Obj())
		}
		d.setNominated, d.nominated = true, node
		// Lower-priority pods nominated to the node may no longer fit there.
		for _, np := range s.snap.NominatedPods(node) {
			if np.Priority < p.Priority && np.Key != p.Key {
				d.clearNominated = append(d.clearNominated, np.Obj())
			}
		}
		// The nominator learns at once, not when the API update comes back.
		for _, np := range d.clearNominated {
			s.nominate(np, "")
		}
		s.nominate(p.Obj(), node)
		s.queue.Gate(qp.Key, d.plan.victims)
	case res.Eligible && res.Err == nil:
		// No candidate: the pod's nomination, if any, is cleared.
		d.setNominated, d.nominated = p.Obj().Status.NominatedNodeName != "", ""
	}
}

// nominate records a nomination in the cache before the API does.
func (s *Core) nominate(pod *v1.Pod, node string) {
	obj := pod.DeepCopy()
	obj.Status.NominatedNodeName = node
	s.upsert(obj)
}

// assume binds the pod in the cache before the API does.
func (s *Core) assume(p *snapshot.Pod, node string) {
	obj := p.Obj().DeepCopy()
	obj.Spec.NodeName = node
	obj.Status.NominatedNodeName = ""
	s.assumed[p.Key] = true
	s.upsert(obj)
}

// forget undoes assume after a failed bind.
func (s *Core) forget(p *snapshot.Pod) {
	if s.assumed[p.Key] {
		delete(s.assumed, p.Key)
		s.upsert(p.Obj())
	}
}
