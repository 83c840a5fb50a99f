package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/reprieve/reprieve/internal/adapter/admission"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
	"github.com/reprieve/reprieve/internal/scheduler"
)

// errNotFound is what the API returns for a missing object.
type errNotFound struct{ key string }

func (e errNotFound) Error() string { return fmt.Sprintf("pods %q not found", e.key) }

// world is the virtual cluster: the API server's objects, a kubelet that
// starts bound pods at once and ends terminating ones after their grace
// period, and the ReplicaSet, Deployment and Job controllers. It implements
// scheduler.Cluster and tells the scheduler about every change, as
// informers would.
type world struct {
	clock *testingclock.FakeClock
	// start and end are the run's; what is due after end never happens.
	start, end time.Time
	sched      *scheduler.Scheduler
	rec        *recorder
	rng        *rand.Rand

	// admission resolves pod priorities from the priority classes, as the
	// API server's Priority admission plugin does.
	admission *snapshot.Snapshot
	// storage is the PVs, claims and classes, with the claims' PreBind waits.
	storage storage

	pods     map[string]*v1.Pod
	nodes    map[string]*v1.Node
	owners   map[types.UID]*controller
	ctrls    []*controller // in creation order
	timers   timerHeap
	timerSeq int
	uidSeq   int
	dirty    map[*controller]bool
	// claims are the ResourceClaims by namespace/name (dra.go).
	claims map[string]*resourceapi.ResourceClaim
	// claimTemplates are the ResourceClaimTemplates by namespace/name
	// (dra_templates.go).
	claimTemplates map[string]*resourceapi.ResourceClaimTemplate

	// budgets is the disruption controller (disruption.go).
	budgets budgets

	// calls counts the API calls the scheduler made (binding, status
	// updates, victims' updates and deletes) since Run last reset it.
	calls int

	// done is closed when the run must stop (its context's Done); long
	// loops check it through stopped.
	done <-chan struct{}
}

// controller is a ReplicaSet, Deployment (modelled as its ReplicaSet), Job
// or StatefulSet.
type controller struct {
	kind, namespace, name string
	uid                   types.UID
	selector              labels.Selector
	template              v1.PodTemplateSpec
	replicas              int32 // ReplicaSet/Deployment: desired pods; Job: parallelism
	completions           int32 // Job only; -1 for a work queue (completions unset)
	succeeded             int32
	runFor                time.Duration // Job only
	podPrefix             string
	pods                  map[string]bool
	deleted               bool
	// lostToPreemption counts pods preempted that this controller must replace.
	lostToPreemption int
	// sts is set for a StatefulSet.
	sts *statefulSet
}

func newWorld(start, end time.Time, seed uint64, rec *recorder) *world {
	return &world{
		clock:          testingclock.NewFakeClock(start),
		start:          start,
		end:            end,
		rec:            rec,
		rng:            rand.New(rand.NewPCG(seed, 0x7369)),
		pods:           map[string]*v1.Pod{},
		admission:      snapshot.Empty(),
		nodes:          map[string]*v1.Node{},
		owners:         map[types.UID]*controller{},
		dirty:          map[*controller]bool{},
		claims:         map[string]*resourceapi.ResourceClaim{},
		claimTemplates: map[string]*resourceapi.ResourceClaimTemplate{},
		storage:        newStorage(),
		budgets:        newBudgets(DefaultDisruptionSyncDelay),
	}
}

func (w *world) now() time.Time { return w.clock.Now() }

// stopped reports whether the run was cancelled.
func (w *world) stopped() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

func (w *world) newUID() types.UID {
	w.uidSeq++
	return types.UID(fmt.Sprintf("uid-%06d", w.uidSeq))
}

// addNodes creates nodes, with names that do not exist yet, as the API
// server would: defaulted, with a UID. The world keeps them: the caller
// passes nodes of its own. The scheduler learns of them together, so that
// creating many takes linear time.
func (w *world) addNodes(nodes []*v1.Node) {
	for _, n := range nodes {
		admission.DefaultNode(n)
		if n.UID == "" {
			n.UID = w.newUID()
		}
		w.nodes[n.Name] = n
		w.rec.node(n.Name, w.now())
	}
	w.sched.OnNodesAdd(nodes)
}

func (w *world) setUnschedulable(name string, unschedulable bool) error {
	n, ok := w.nodes[name]
	if !ok {
		return fmt.Errorf("node %q not found", name)
	}
	n = n.DeepCopy()
	n.Spec.Unschedulable = unschedulable
	taint := v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}
	n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t v1.Taint) bool { return t.Key == taint.Key })
	if unschedulable {
		n.Spec.Taints = append(n.Spec.Taints, taint)
		w.event(&v1.ObjectReference{Kind: "Node", Name: name}, v1.EventTypeNormal, "NodeNotSchedulable", "Node "+name+" status is now: NodeNotSchedulable")
	} else {
		w.event(&v1.ObjectReference{Kind: "Node", Name: name}, v1.EventTypeNormal, "NodeSchedulable", "Node "+name+" status is now: NodeSchedulable")
	}
	w.nodes[name] = n
	w.sched.OnNodeUpdate(n)
	return nil
}

func (w *world) removeNode(name string) error {
	if _, ok := w.nodes[name]; !ok {
		return fmt.Errorf("node %q not found", name)
	}
	delete(w.nodes, name)
	w.event(&v1.ObjectReference{Kind: "Node", Name: name}, v1.EventTypeNormal, "RemovingNode", "Node "+name+" event: Removing Node "+name+" from Controller")
	w.sched.OnNodeDelete(name)
	w.rec.nodeRemoved(name, w.now())
	for _, key := range w.sortedPodKeys() {
		if p := w.pods[key]; p.Spec.NodeName == name {
			w.finalize(key)
		}
	}
	return nil
}

// createPod stores a new pod as the API server would: namespace, UID and
// creation time filled in, defaulted (requests from limits, scheduler
// name, grace period), priority and preemption policy resolved by
// admission. A pod created bound starts at once. The world keeps p: the
// caller passes a pod of its own and does not use it afterwards.
func (w *world) createPod(p *v1.Pod) error {
	if p.Namespace == "" {
		p.Namespace = metav1.NamespaceDefault
	}
	admission.DefaultPod(p)
	key := p.Namespace + "/" + p.Name
	if _, exists := w.pods[key]; exists {
		return fmt.Errorf("pods %q already exists", key)
	}
	prio, policy, err := w.admission.ResolvePriority(p)
	if err != nil {
		return err
	}
	p.Spec.Priority, p.Spec.PreemptionPolicy = &prio, &policy
	if p.UID == "" {
		p.UID = w.newUID()
	}
	p.CreationTimestamp = metav1.NewTime(w.now())
	if p.Spec.SchedulerName == "" {
		p.Spec.SchedulerName = v1.DefaultSchedulerName
	}
	if p.Status.Phase == "" {
		p.Status.Phase = v1.PodPending
	}
	if c := w.ownerOf(p); c != nil {
		c.pods[key] = true
		if c.lostToPreemption > 0 {
			c.lostToPreemption--
			w.rec.replacement(key)
		}
	}
	w.createPodClaims(p)
	if p.Spec.NodeName != "" {
		w.startPod(p)
	}
	w.pods[key] = p
	w.rec.podCreated(p, w.now())
	w.sched.OnPodAdd(p)
	w.budgetsSee(nil, p)
	if p.Spec.NodeName != "" {
		w.rec.podBound(p, p.Spec.NodeName, w.now())
		w.scheduleCompletion(p)
	}
	return nil
}

func (w *world) startPod(p *v1.Pod) {
	t := metav1.NewTime(w.now())
	p.Status.Phase = v1.PodRunning
	if p.Status.StartTime == nil {
		p.Status.StartTime = &t
	}
	setCondition(&p.Status, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: t})
	w.becomeReady(p)
}

func setCondition(st *v1.PodStatus, c v1.PodCondition) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

func (w *world) updatePod(old, p *v1.Pod) {
	w.pods[p.Namespace+"/"+p.Name] = p
	w.sched.OnPodUpdate(old, p)
	w.budgetsSee(old, p)
	if terminalPhase(p) && !terminalPhase(old) {
		w.releaseClaims(p)
	}
	if c := w.ownerOf(p); c != nil {
		w.dirty[c] = true
	}
}

// deletePod starts a graceful deletion: an unbound pod goes at once, a
// bound one keeps running until its grace period (or its shutdown time) is
// over.
func (w *world) deletePod(key string) {
	p, ok := w.pods[key]
	if !ok || p.DeletionTimestamp != nil {
		return
	}
	if p.Spec.NodeName == "" || terminalPhase(p) {
		w.finalize(key)
		return
	}
	grace := int64(v1.DefaultTerminationGracePeriodSeconds)
	if p.Spec.TerminationGracePeriodSeconds != nil {
		grace = *p.Spec.TerminationGracePeriodSeconds
	}
	exit := wholeSeconds(grace)
	if s, ok := annotationSeconds(p.Annotations, AnnotationShutdownSeconds); ok && s < exit {
		exit = s
	}
	old := p
	p = p.DeepCopy()
	t := metav1.NewTime(w.now())
	p.DeletionTimestamp = &t
	p.DeletionGracePeriodSeconds = &grace
	w.event(podRef(p), v1.EventTypeNormal, "Killing", fmt.Sprintf("Stopping container %s", p.Spec.Containers[0].Name))
	w.updatePod(old, p)
	w.rec.podTerminating(p, w.now())
	if exit == 0 {
		w.finalize(key)
		return
	}
	uid := p.UID
	w.after(exit, func() {
		if q, ok := w.pods[key]; ok && q.UID == uid {
			w.finalize(key)
		}
	})
}

// finalize removes a pod for good.
func (w *world) finalize(key string) {
	p, ok := w.pods[key]
	if !ok {
		return
	}
	delete(w.pods, key)
	if c := w.ownerOf(p); c != nil {
		delete(c.pods, key)
		w.dirty[c] = true
	}
	w.rec.podGone(p, w.now())
	w.sched.OnPodDelete(p)
	w.budgetsSee(p, nil)
	w.releaseClaims(p)
	w.deletePodClaims(p)
}

func terminalPhase(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}

// scheduleCompletion makes a Job's pod succeed after the Job's run time.
func (w *world) scheduleCompletion(p *v1.Pod) {
	c := w.ownerOf(p)
	if c == nil || c.kind != "Job" || c.runFor <= 0 {
		return
	}
	key, uid := p.Namespace+"/"+p.Name, p.UID
	w.after(c.runFor, func() {
		q, ok := w.pods[key]
		if !ok || q.UID != uid || q.DeletionTimestamp != nil || terminalPhase(q) {
			return
		}
		old := q
		q = q.DeepCopy()
		q.Status.Phase = v1.PodSucceeded
		c.succeeded++
		w.event(&v1.ObjectReference{Kind: "Job", Namespace: c.namespace, Name: c.name}, v1.EventTypeNormal, "PodSucceeded", "Pod "+q.Name+" succeeded")
		w.updatePod(old, q)
		w.rec.podFinished(q, w.now())
		if c.completions < 0 || c.succeeded >= c.completions {
			w.event(&v1.ObjectReference{Kind: "Job", Namespace: c.namespace, Name: c.name}, v1.EventTypeNormal, "Completed", "Job completed")
		}
	})
}
