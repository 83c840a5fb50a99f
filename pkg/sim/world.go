package sim

import (
	"container/heap"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/reprieve/reprieve/internal/admission"
	"github.com/reprieve/reprieve/pkg/scheduler"
	"github.com/reprieve/reprieve/pkg/snapshot"
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
	start time.Time
	sched *scheduler.Scheduler
	rec   *recorder
	rng   *rand.Rand

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

func newWorld(start time.Time, seed uint64, rec *recorder) *world {
	return &world{
		clock:     testingclock.NewFakeClock(start),
		start:     start,
		rec:       rec,
		rng:       rand.New(rand.NewPCG(seed, 0x7369)),
		pods:      map[string]*v1.Pod{},
		admission: snapshot.Empty(),
		nodes:     map[string]*v1.Node{},
		owners:    map[types.UID]*controller{},
		dirty:     map[*controller]bool{},
		storage:   newStorage(),
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

// --- timers

type timer struct {
	at  time.Time
	seq int
	fn  func()
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(*timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

func (w *world) after(d time.Duration, fn func()) {
	w.timerSeq++
	heap.Push(&w.timers, &timer{at: w.now().Add(d), seq: w.timerSeq, fn: fn})
}

// advance moves the clock to t, running the timers due on the way, each at
// its own time; it never moves the clock back.
func (w *world) advance(t time.Time) {
	for len(w.timers) > 0 && !w.timers[0].at.After(t) && !w.stopped() {
		if at := w.timers[0].at; at.After(w.now()) {
			w.clock.SetTime(at)
		}
		tm := heap.Pop(&w.timers).(*timer)
		tm.fn()
		w.reconcile()
	}
	if t.After(w.now()) {
		w.clock.SetTime(t)
	}
}

// runDue runs every timer due now; timers may add more.
func (w *world) runDue() {
	for len(w.timers) > 0 && !w.timers[0].at.After(w.now()) && !w.stopped() {
		t := heap.Pop(&w.timers).(*timer)
		t.fn()
		w.reconcile()
	}
}

// --- objects

func (w *world) addNode(n *v1.Node) {
	n = n.DeepCopy()
	admission.DefaultNode(n)
	if n.UID == "" {
		n.UID = w.newUID()
	}
	w.nodes[n.Name] = n
	w.rec.node(n.Name, w.now())
	w.sched.OnNodeAdd(n)
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
// admission. A pod created bound starts at once.
func (w *world) createPod(p *v1.Pod) error {
	p = p.DeepCopy()
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
	if p.Spec.NodeName != "" {
		w.startPod(p)
	}
	w.pods[key] = p
	w.rec.podCreated(p, w.now())
	w.sched.OnPodAdd(p)
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
	exit := time.Duration(grace) * time.Second
	if s, err := strconv.ParseFloat(p.Annotations[AnnotationShutdownSeconds], 64); err == nil && s >= 0 && time.Duration(s*float64(time.Second)) < exit {
		exit = time.Duration(s * float64(time.Second))
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
	w.releaseClaims(p)
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

// --- controllers

func (w *world) ownerOf(p *v1.Pod) *controller {
	for _, ref := range p.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			return w.owners[ref.UID]
		}
	}
	return nil
}

func (w *world) addController(c *controller) {
	c.pods = map[string]bool{}
	w.owners[c.uid] = c
	w.ctrls = append(w.ctrls, c)
	w.dirty[c] = true
}

func (w *world) addReplicaSet(rs *appsv1.ReplicaSet, kind string, name string) error {
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return err
	}
	replicas := int32(1)
	if rs.Spec.Replicas != nil {
		replicas = *rs.Spec.Replicas
	}
	w.addController(&controller{kind: kind, namespace: rs.Namespace, name: name, uid: w.newUID(), selector: sel,
		template: rs.Spec.Template, replicas: replicas, podPrefix: rs.Name + "-"})
	return nil
}

func (w *world) addDeployment(d *appsv1.Deployment) error {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name + "-" + w.suffix(10)},
		Spec: appsv1.ReplicaSetSpec{Replicas: d.Spec.Replicas, Selector: d.Spec.Selector, Template: d.Spec.Template}}
	return w.addReplicaSet(rs, "Deployment", d.Name)
}

func (w *world) addJob(j *batchv1.Job) error {
	// The loader defaulted parallelism (1) and, when neither was set,
	// completions (1); completions unset is a work queue.
	parallelism, completions := int32(1), int32(-1)
	if j.Spec.Parallelism != nil {
		parallelism = *j.Spec.Parallelism
	}
	if j.Spec.Completions != nil {
		completions = *j.Spec.Completions
	} else if j.Spec.Parallelism == nil {
		completions = 1
	}
	var runFor time.Duration
	for _, a := range []map[string]string{j.Annotations, j.Spec.Template.Annotations} {
		if s, err := strconv.ParseFloat(a[AnnotationRunSeconds], 64); err == nil && s > 0 {
			runFor = time.Duration(s * float64(time.Second))
			break
		}
	}
	sel := labels.SelectorFromSet(j.Spec.Template.Labels)
	w.addController(&controller{kind: "Job", namespace: j.Namespace, name: j.Name, uid: w.newUID(), selector: sel,
		template: j.Spec.Template, replicas: parallelism, completions: completions, runFor: runFor, podPrefix: j.Name + "-"})
	return nil
}

func (w *world) findController(kind, namespace, name string) *controller {
	for _, c := range w.ctrls {
		if c.kind == kind && c.namespace == namespace && c.name == name && !c.deleted {
			return c
		}
	}
	return nil
}

// suffix returns n random characters as Kubernetes name generators use.
func (w *world) suffix(n int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[w.rng.IntN(len(alphabet))]
	}
	return string(b)
}

// reconcile runs the controllers whose pods changed, in creation order.
func (w *world) reconcile() {
	for len(w.dirty) > 0 && !w.stopped() {
		for _, c := range w.ctrls {
			if !w.dirty[c] {
				continue
			}
			delete(w.dirty, c)
			w.reconcileOne(c)
		}
	}
}

// reconcileOne creates or deletes pods so that the controller's active
// pods (not finished, not terminating) match its target.
func (w *world) reconcileOne(c *controller) {
	if c.deleted {
		return
	}
	if c.sts != nil {
		w.reconcileStatefulSet(c)
		return
	}
	var active []string
	for key := range c.pods {
		p := w.pods[key]
		if p != nil && p.DeletionTimestamp == nil && !terminalPhase(p) {
			active = append(active, key)
		}
	}
	slices.Sort(active)
	want := c.replicas
	if c.kind == "Job" {
		switch {
		case c.completions >= 0:
			want = min(c.replicas, c.completions-c.succeeded)
		case c.succeeded > 0:
			// A work queue creates no pods once one has succeeded.
			want = 0
		}
	}
	want = max(want, 0)
	ref := &v1.ObjectReference{Kind: c.kind, Namespace: c.namespace, Name: c.name}
	if c.kind == "Deployment" {
		ref.Kind = "ReplicaSet"
		ref.Name = c.podPrefix[:len(c.podPrefix)-1]
	}
	for n := int32(len(active)); n < want; n++ {
		if n%1024 == 0 && w.stopped() {
			return
		}
		p := &v1.Pod{ObjectMeta: *c.template.ObjectMeta.DeepCopy(), Spec: *c.template.Spec.DeepCopy()}
		p.Namespace = c.namespace
		p.Name = c.podPrefix + w.suffix(5)
		for w.pods[p.Namespace+"/"+p.Name] != nil {
			p.Name = c.podPrefix + w.suffix(5)
		}
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ref.Kind, Name: ref.Name, UID: c.uid, Controller: &yes}}
		if c.kind == "Job" {
			p.OwnerReferences[0].APIVersion = "batch/v1"
			if p.Spec.RestartPolicy == "" {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
			}
		}
		if err := w.createPod(p); err != nil {
			w.event(ref, v1.EventTypeWarning, "FailedCreate", "Error creating: "+err.Error())
			return
		}
		w.event(ref, v1.EventTypeNormal, "SuccessfulCreate", "Created pod: "+p.Name)
	}
	// Scale down: unscheduled pods first, then the newest.
	if excess := int32(len(active)) - want; excess > 0 {
		slices.SortFunc(active, func(a, b string) int {
			pa, pb := w.pods[a], w.pods[b]
			if (pa.Spec.NodeName == "") != (pb.Spec.NodeName == "") {
				if pa.Spec.NodeName == "" {
					return -1
				}
				return 1
			}
			if !pa.CreationTimestamp.Equal(&pb.CreationTimestamp) {
				return pb.CreationTimestamp.Compare(pa.CreationTimestamp.Time)
			}
			return cmpString(b, a)
		})
		for _, key := range active[:excess] {
			w.event(ref, v1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: "+w.pods[key].Name)
			w.deletePod(key)
		}
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (w *world) sortedPodKeys() []string {
	keys := make([]string, 0, len(w.pods))
	for k := range w.pods {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// --- scheduler.Cluster

func (w *world) Bind(_ context.Context, pod *v1.Pod, node string) error {
	w.calls++
	key := pod.Namespace + "/" + pod.Name
	p, ok := w.pods[key]
	if !ok || p.UID != pod.UID {
		return errNotFound{key}
	}
	if p.Spec.NodeName != "" {
		return fmt.Errorf("pod %s is already assigned to node %q", key, p.Spec.NodeName)
	}
	if _, ok := w.nodes[node]; !ok {
		return fmt.Errorf("node %q not found", node)
	}
	if w.waitForVolumes(pod) {
		// VolumeBinding's PreBind is still waiting for the claims: the pod
		// stays assumed until they are bound (finishBind).
		return nil
	}
	w.finishBind(p, node)
	return nil
}

// finishBind binds the stored pod p to node and starts it.
func (w *world) finishBind(pod *v1.Pod, node string) {
	key := pod.Namespace + "/" + pod.Name
	p, ok := w.pods[key]
	if !ok || p.UID != pod.UID || p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
		return
	}
	if _, ok := w.nodes[node]; !ok {
		return
	}
	old := p
	p = p.DeepCopy()
	p.Spec.NodeName = node
	if p.Status.NominatedNodeName != "" {
		w.rec.nominationEnded(p, node, w.now())
	}
	p.Status.NominatedNodeName = ""
	w.startPod(p)
	w.updatePod(old, p)
	w.rec.podBound(p, node, w.now())
	w.scheduleCompletion(p)
}

func (w *world) SetUnschedulable(_ context.Context, pod *v1.Pod, message string, setNominated bool, nominated string) error {
	w.calls++
	key := pod.Namespace + "/" + pod.Name
	p, ok := w.pods[key]
	if !ok || p.UID != pod.UID {
		return errNotFound{key}
	}
	old := p
	p = p.DeepCopy()
	setCondition(&p.Status, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable,
		Message: message, LastTransitionTime: metav1.NewTime(w.now())})
	if setNominated && p.Status.NominatedNodeName != nominated {
		if p.Status.NominatedNodeName != "" {
			w.rec.nominationEnded(p, "", w.now())
		}
		p.Status.NominatedNodeName = nominated
		if nominated != "" {
			w.rec.nominated(p, nominated, w.now())
		}
	}
	w.updatePod(old, p)
	return nil
}

func (w *world) Preempt(_ context.Context, victim *v1.Pod, condition v1.PodCondition) error {
	key := victim.Namespace + "/" + victim.Name
	p, ok := w.pods[key]
	if !ok || p.UID != victim.UID {
		return nil // already gone
	}
	w.calls += 2 // the DisruptionTarget condition, then the delete
	old := p
	p = p.DeepCopy()
	condition.LastTransitionTime = metav1.NewTime(w.now())
	setCondition(&p.Status, condition)
	w.updatePod(old, p)
	w.rec.preempted(p, w.now())
	if c := w.ownerOf(p); c != nil {
		c.lostToPreemption++
	}
	w.deletePod(key)
	return nil
}

func (w *world) ClearNominatedNode(_ context.Context, pod *v1.Pod) error {
	key := pod.Namespace + "/" + pod.Name
	p, ok := w.pods[key]
	if !ok || p.Status.NominatedNodeName == "" {
		return nil
	}
	w.calls++
	old := p
	p = p.DeepCopy()
	w.rec.nominationEnded(p, "", w.now())
	p.Status.NominatedNodeName = ""
	w.updatePod(old, p)
	return nil
}

func (w *world) Event(regarding, related *v1.Pod, eventType, reason, action, note string) {
	e := Event{Time: w.now().Sub(w.start), Type: eventType, Reason: reason, Action: action, Object: "pod/" + regarding.Name, Namespace: regarding.Namespace, Message: note}
	if related != nil {
		e.Related = "pod/" + related.Name
	}
	w.rec.event(e)
}

func (w *world) event(ref *v1.ObjectReference, eventType, reason, note string) {
	w.rec.event(Event{Time: w.now().Sub(w.start), Type: eventType, Reason: reason,
		Object: lowerKind(ref.Kind) + "/" + ref.Name, Namespace: ref.Namespace, Message: note})
}

func podRef(p *v1.Pod) *v1.ObjectReference {
	return &v1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
}

func lowerKind(k string) string {
	b := []byte(k)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
