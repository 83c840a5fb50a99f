// Package sim replays a workload over virtual time with reprieve's
// scheduler: the scheduling queue, nomination as a soft reservation,
// victims' graceful termination, controllers re-creating victims, and timed
// actions (create, delete, scale, cordon, remove nodes). Time only advances
// to the next thing that happens, so a simulation never sleeps and the same
// scenario and seed always give the same result.
package sim

import (
	"context"
	"fmt"
	"math"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/scheduler"
)

// Options configure a run.
type Options struct {
	// Seed overrides the scenario's seed when SeedSet.
	Seed    uint64
	SeedSet bool
	// Progress, when set, is called now and then with how far the run got
	// (pods done over pods expected), and once at the end.
	Progress func(Progress)
	// APIQPS and APIBurst are the scheduler client's rate limits (a
	// scheduler configuration's clientConnection) for a scenario whose
	// spec.costs does not set them; 0 means kube-scheduler's defaults.
	APIQPS   float64
	APIBurst int
	// Costs, when set, replaces the scenario's cost model (spec.costs),
	// e.g. FreeCosts to test a mechanism's timing on its own.
	Costs *CostModel
	// Features are the feature gates that change preemption; the zero
	// value is v1.37's default.
	Features profile.Features
	// Policy chooses preemption's victims; the zero value is upstream's.
	Policy profile.Policy
	// Parallelism bounds the goroutines of a scheduling cycle; 0 means
	// GOMAXPROCS.
	Parallelism int
	// Profiles are the scheduler's profiles (pkg/config); empty is one
	// default profile for default-scheduler.
	Profiles []profile.Profile
	// InitialBackoff and MaxBackoff are the scheduler's pod backoff; zero
	// means the defaults.
	InitialBackoff, MaxBackoff time.Duration
	// Observer, when set, is told about scheduling too (after the report's
	// own recorder), e.g. to time phases of a run in wall time.
	Observer scheduler.Observer
}

// Progress is how far a run has got, by work done.
type Progress struct {
	// Done counts the pods that are no longer pending (bound, or deleted
	// before they were); Expected is the pods the scenario creates over
	// its run (Estimate.Pods), or as many as were created when more were
	// (controllers replacing victims).
	Done, Expected int
	// Virtual is the virtual time reached; End is the scenario's end.
	Virtual, End time.Duration
	// Finished is set on the last call.
	Finished bool
}

// Fraction is Done over Expected, 1 once finished and below 1 before.
func (p Progress) Fraction() float64 {
	if p.Finished {
		return 1
	}
	if p.Expected <= 0 {
		return 0
	}
	return min(float64(p.Done)/float64(p.Expected), 0.999)
}

// observers fans scheduler notifications out.
type observers []scheduler.Observer

func (o observers) Attempt(p *v1.Pod, result scheduler.AttemptResult, d time.Duration) {
	for _, x := range o {
		x.Attempt(p, result, d)
	}
}

func (o observers) Scheduled(p *v1.Pod, node string, attempts int, since time.Duration) {
	for _, x := range o {
		x.Scheduled(p, node, attempts, since)
	}
}

func (o observers) Preemption(p *v1.Pod, node string, victims []*v1.Pod, pdb int, eval time.Duration) {
	for _, x := range o {
		x.Preemption(p, node, victims, pdb, eval)
	}
}

// Result is what a simulation produced.
type Result struct {
	Summary Summary        `json:"summary"`
	Events  []Event        `json:"events"`
	Pods    []PodHistory   `json:"pods"`
	Nodes   []*NodeHistory `json:"nodes"`
	Pending []Sample       `json:"pending"`
	// Replicas tell what became of preempted StatefulSet replicas.
	Replicas []ReplicaStory `json:"replicaStories,omitempty"`
	// EndSeconds is the simulated duration.
	EndSeconds float64 `json:"endSeconds"`
}

// Run simulates the scenario to its end.
func Run(ctx context.Context, sc *Scenario, opts Options) (*Result, error) {
	seed := sc.Seed
	if opts.SeedSet {
		seed = opts.Seed
	}
	rec := newRecorder(sc.Start)
	w := newWorld(sc.Start, sc.Start.Add(sc.End), seed, rec)
	w.storage.delay = sc.ProvisioningDelay
	w.budgets.delay = sc.DisruptionSyncDelay
	w.done = ctx.Done()
	var obs scheduler.Observer = rec
	if opts.Observer != nil {
		obs = observers{rec, opts.Observer}
	}
	w.sched = scheduler.New(w, w.clock, scheduler.Options{
		SchedulerName:  v1.DefaultSchedulerName,
		Seed:           seed,
		Features:       opts.Features,
		Policy:         opts.Policy,
		Parallelism:    opts.Parallelism,
		Profiles:       opts.Profiles,
		InitialBackoff: opts.InitialBackoff,
		MaxBackoff:     opts.MaxBackoff,
		Observer:       obs,
	})
	if err := w.apply(sc.Objects); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, interrupted(err, 0)
	}
	for _, a := range sc.Actions {
		w.after(a.At, func() {
			if err := w.act(a); err != nil {
				w.event(&v1.ObjectReference{Kind: "Simulation", Name: sc.Name}, v1.EventTypeWarning, "ActionFailed", err.Error())
			}
		})
	}

	model := sc.Costs
	if opts.Costs != nil {
		model = *opts.Costs
	}
	costs := model.resolved(opts.APIQPS, opts.APIBurst)
	progress := func(finished bool) {
		if opts.Progress == nil {
			return
		}
		done := len(rec.hist) - rec.nPend
		opts.Progress(Progress{Done: done, Expected: max(int(min(sc.Estimate.Pods, math.MaxInt32)), len(rec.hist)),
			Virtual: min(w.now().Sub(sc.Start), sc.End), End: sc.End, Finished: finished})
	}
	if err := w.run(ctx, sc.Start, sc.Start.Add(sc.End), costs, progress); err != nil {
		return nil, err
	}
	progress(true)
	res := &Result{
		Summary:    rec.summary(sc.Name, seed, sc.End, costs),
		Events:     rec.finishedEvents(),
		Pods:       rec.histories(),
		Nodes:      rec.nodes,
		Pending:    rec.pending,
		Replicas:   w.replicaStories(),
		EndSeconds: sc.End.Seconds(),
	}
	for i := range res.Pods {
		for j := range res.Pods[i].Nominations {
			if res.Pods[i].Nominations[j].Outcome == "open" {
				res.Pods[i].Nominations[j].To = ptr(sc.End.Seconds())
			}
		}
	}
	return res, nil
}

// run drives the world from start to end: the scheduler's cycles, each
// costing virtual time under the cost model (none when it is free), and
// the timers due in between; progress is told every so often. It leaves
// the clock at end, or returns the context's error as an interruption.
func (w *world) run(ctx context.Context, start, end time.Time, costs CostModel, progress func(finished bool)) error {
	api := newLimiter(costs)
	cycles := 0
	for steps := 0; ; steps++ {
		if err := ctx.Err(); err != nil {
			return interrupted(err, w.now().Sub(start))
		}
		w.runDue()
		for !w.stopped() && (costs.Free() || w.now().Before(end)) {
			if !costs.Free() {
				// The cycle computes for costs.Cycle, then its first API
				// call (the binding, or the status update of a pod that
				// does not fit) waits for its token: what is due
				// meanwhile happens first, and the cycle's decisions land
				// then.
				if next, ok := w.sched.NextWakeup(); !ok || next.After(w.now()) {
					break
				}
				at := api.take(w.now().Add(costs.Cycle))
				if at.After(end) {
					// The cycle's call would go after the end: it never
					// does, and the run is over.
					w.advance(end)
					break
				}
				w.advance(at)
			}
			w.calls = 0
			if !w.sched.ScheduleOne(ctx) {
				break
			}
			cycles++
			w.reconcile()
			// The cycle's further calls (a preemption's victims and
			// nominations) hold the scheduler until they have had their
			// turn under the client's rate limit.
			if !costs.Free() {
				t := w.now()
				for range w.calls - 1 {
					t = api.take(t)
				}
				w.advance(earliest(t, end))
			}
			w.runDue()
			if cycles%256 == 0 {
				progress(false)
			}
		}
		if err := ctx.Err(); err != nil {
			return interrupted(err, w.now().Sub(start))
		}
		if !costs.Free() && !w.now().Before(end) {
			break // the last cycle ran into the end
		}
		next, ok := w.sched.NextWakeup()
		if len(w.timers) > 0 && (!ok || w.timers[0].at.Before(next)) {
			next, ok = w.timers[0].at, true
		}
		if !ok || next.After(end) {
			break
		}
		if !next.After(w.now()) {
			// Work is due now but nothing could run: avoid spinning.
			next = w.now().Add(time.Millisecond)
		}
		w.clock.SetTime(next)
		if steps%64 == 0 {
			progress(false)
		}
	}
	if w.now().Before(end) {
		w.clock.SetTime(end)
	}
	return nil
}

// earliest returns the earlier of two times.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// interrupted says where a cancelled run stopped.
func interrupted(err error, at time.Duration) error {
	return fmt.Errorf("simulation stopped at virtual time %s: %w", at, err)
}

// apply creates every object of a set, in dependency order.
func (w *world) apply(set *manifest.Set) error {
	o := objectsOf(set)
	for _, ns := range o.namespaces {
		w.sched.OnNamespace(ns)
	}
	for _, pc := range o.priorityClasses {
		w.admission.SetPriorityClass(pc)
		w.sched.OnPriorityClass(pc)
	}
	nodes := make([]*v1.Node, 0, len(o.nodes))
	for _, n := range o.nodes {
		if _, exists := w.nodes[n.Name]; exists {
			return &manifest.InputError{Source: set.Origin(n), Object: "Node " + n.Name, Field: "metadata.name", Detail: "already exists"}
		}
		nodes = append(nodes, n.DeepCopy())
	}
	w.addNodes(nodes)
	w.budgets.addControllers(set)
	for _, pdb := range o.pdbs {
		w.addPDB(pdb)
	}
	// Services and ReplicationControllers (which the simulator does not
	// run) only give PodTopologySpread's default constraints their
	// selector; the controllers it runs register theirs as they start.
	for _, svc := range o.services {
		w.sched.OnSelector(func(s *snapshot.Snapshot) { s.SetService(svc) })
	}
	for _, rc := range o.replicationControllers {
		w.sched.OnSelector(func(s *snapshot.Snapshot) { s.SetReplicationController(rc) })
	}
	w.applyStorage(set.Objects.Storage)
	w.applyDRA(set.Objects)
	for _, t := range set.ResourceClaimTemplates {
		w.addClaimTemplate(t)
	}
	for _, d := range o.deployments {
		if err := w.addDeployment(d); err != nil {
			return &manifest.InputError{Source: set.Origin(d), Object: "Deployment " + d.Namespace + "/" + d.Name, Field: "spec.selector", Detail: err.Error()}
		}
	}
	for _, rs := range o.replicaSets {
		if err := w.addReplicaSet(rs, "ReplicaSet", rs.Name); err != nil {
			return &manifest.InputError{Source: set.Origin(rs), Object: "ReplicaSet " + rs.Namespace + "/" + rs.Name, Field: "spec.selector", Detail: err.Error()}
		}
	}
	for _, j := range o.jobs {
		if err := w.addJob(j); err != nil {
			return &manifest.InputError{Source: set.Origin(j), Object: "Job " + j.Namespace + "/" + j.Name, Detail: err.Error()}
		}
	}
	for _, s := range o.statefulSets {
		if err := w.addStatefulSet(s); err != nil {
			return &manifest.InputError{Source: set.Origin(s), Object: "StatefulSet " + s.Namespace + "/" + s.Name, Field: "spec.selector", Detail: err.Error()}
		}
	}
	for _, p := range o.pods {
		if p.Spec.NodeName != "" {
			if _, ok := w.nodes[p.Spec.NodeName]; !ok {
				return &manifest.InputError{Source: set.Origin(p), Object: "Pod " + p.Namespace + "/" + p.Name, Field: "spec.nodeName",
					Detail: fmt.Sprintf("node %q does not exist", p.Spec.NodeName)}
			}
		}
		if err := w.createPod(p.DeepCopy()); err != nil {
			return &manifest.InputError{Source: set.Origin(p), Object: "Pod " + p.Namespace + "/" + p.Name, Detail: err.Error()}
		}
	}
	w.reconcile()
	return nil
}

// act performs a timed action.
func (w *world) act(a TimedAction) error {
	x := a.Action
	if a.Create != nil {
		if err := w.apply(a.Create); err != nil {
			return err
		}
	}
	if cn := x.CreateNodes; cn != nil {
		nodes := make([]*v1.Node, 0, cn.Count)
		for i := 1; i <= cn.Count; i++ {
			if i%1024 == 0 && w.stopped() {
				return nil
			}
			n := cn.Template.DeepCopy()
			n.Name = fmt.Sprintf("%s-%05d", cn.Template.Name, i)
			if n.Labels == nil {
				n.Labels = map[string]string{}
			}
			n.Labels[v1.LabelHostname] = n.Name
			if _, exists := w.nodes[n.Name]; exists {
				return fmt.Errorf("createNodes: node %q already exists", n.Name)
			}
			nodes = append(nodes, n)
		}
		w.addNodes(nodes)
	}
	if cp := x.CreatePods; cp != nil {
		for i := 1; i <= cp.Count; i++ {
			if i%1024 == 0 && w.stopped() {
				return nil
			}
			p := cp.Template.DeepCopy()
			p.Name = fmt.Sprintf("%s-%05d", cp.Template.Name, i)
			if err := w.createPod(p); err != nil {
				return fmt.Errorf("createPods: %w", err)
			}
		}
	}
	for _, d := range x.Delete {
		if err := w.deleteObject(d); err != nil {
			return err
		}
	}
	if s := x.Scale; s != nil {
		c := w.findController(s.Kind, nsOrDefault(s.Namespace), s.Name)
		if c == nil {
			return fmt.Errorf("scale: %s %s/%s not found", s.Kind, s.Namespace, s.Name)
		}
		c.replicas = s.Replicas
		w.event(&v1.ObjectReference{Kind: s.Kind, Namespace: c.namespace, Name: s.Name}, v1.EventTypeNormal, "Scaled", fmt.Sprintf("Scaled to %d", s.Replicas))
		w.dirty[c] = true
	}
	if x.Cordon != "" {
		if err := w.setUnschedulable(x.Cordon, true); err != nil {
			return err
		}
	}
	if x.Uncordon != "" {
		if err := w.setUnschedulable(x.Uncordon, false); err != nil {
			return err
		}
	}
	if x.RemoveNode != "" {
		if err := w.removeNode(x.RemoveNode); err != nil {
			return err
		}
	}
	w.reconcile()
	return nil
}

func (w *world) deleteObject(d ObjectRef) error {
	ns := d.Namespace
	if ns == "" && d.Kind != "Node" {
		ns = "default"
	}
	switch d.Kind {
	case "Pod":
		if _, ok := w.pods[ns+"/"+d.Name]; !ok {
			return fmt.Errorf("delete: pod %s/%s not found", ns, d.Name)
		}
		w.deletePod(ns + "/" + d.Name)
	case "Node":
		return w.removeNode(d.Name)
	case "Deployment", "ReplicaSet", "Job", "StatefulSet":
		c := w.findController(d.Kind, ns, d.Name)
		if c == nil {
			return fmt.Errorf("delete: %s %s/%s not found", d.Kind, ns, d.Name)
		}
		c.deleted = true
		w.sched.OnSelector(func(s *snapshot.Snapshot) { c.forgetSelector(s) })
		for _, key := range w.sortedPodKeys() {
			if c.pods[key] {
				w.deletePod(key)
			}
		}
	case "PodDisruptionBudget":
		w.deletePDB(ns, d.Name)
	case "Service":
		w.sched.OnSelector(func(s *snapshot.Snapshot) { s.RemoveService(ns, d.Name) })
	case "ReplicationController":
		w.sched.OnSelector(func(s *snapshot.Snapshot) { s.RemoveReplicationController(ns, d.Name) })
	default:
		return fmt.Errorf("delete: kind %q is not supported", d.Kind)
	}
	return nil
}
