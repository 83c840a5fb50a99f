package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/reprieve/reprieve/internal/adapter/config"
	"github.com/reprieve/reprieve/internal/adapter/kube"
	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/reprievetest"
)

// Priority classes every env has (the Priority admission plugin resolves
// spec.priority from them).
const (
	low       = "low"        // 100
	medium    = "medium"     // 1000
	high      = "high"       // 10000
	top       = "top"        // 100000
	highNever = "high-never" // 10000, preemptionPolicy Never
)

// Timeouts of the wait helpers.
const (
	poll        = 50 * time.Millisecond
	waitTimeout = 30 * time.Second
	// settle is how long a test watches for something that must not happen.
	settle = 3 * time.Second
)

func (e *env) createPriorityClasses() {
	for _, pc := range []*schedulingv1.PriorityClass{
		reprievetest.PriorityClass(low, 100, false, false),
		reprievetest.PriorityClass(medium, 1000, false, false),
		reprievetest.PriorityClass(high, 10000, false, false),
		reprievetest.PriorityClass(top, 100000, false, false),
		reprievetest.PriorityClass(highNever, 10000, false, true),
	} {
		if _, err := e.Admin.SchedulingV1().PriorityClasses().Create(context.Background(), pc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			e.t.Fatalf("creating PriorityClass %s: %v", pc.Name, err)
		}
	}
}

// world is one scenario's part of an env: a namespace, its nodes, and a
// scheduler name of its own. Its nodes and pods are deleted when the
// scenario ends, so scenarios can share an API server one after another.
type world struct {
	*env
	t     *testing.T
	ctx   context.Context
	ns    string
	sched string

	mu    sync.Mutex
	nodes []string
	// taps are those of the schedulers started in the world.
	taps []*tap
}

var nonAlnum = regexp.MustCompile(`[^a-z0-9]+`)

func (e *env) world(t *testing.T) *world {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	base := strings.Trim(nonAlnum.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 40 {
		base = strings.Trim(base[len(base)-40:], "-")
	}
	id := randomToken()[:5]
	w := &world{env: e, t: t, ctx: ctx, ns: base + "-" + id, sched: "reprieve-" + id}
	if _, err := e.Admin.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(w.cleanup)
	return w
}

// cleanup deletes the world's pods (at once) and nodes.
func (w *world) cleanup() {
	ctx := context.Background()
	zero := int64(0)
	_ = w.Admin.CoreV1().Pods(w.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	w.mu.Lock()
	nodes := w.nodes
	w.mu.Unlock()
	for _, n := range nodes {
		_ = w.Admin.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{})
	}
}

// node creates a ready node with the builder's labels, taints and
// allocatable (also as capacity), without the not-ready taint the API
// server's admission adds to new nodes.
func (w *world) node(b *reprievetest.NodeBuilder) *v1.Node {
	w.t.Helper()
	return w.createNode(b.Obj())
}

// createNode creates node (see node).
func (w *world) createNode(node *v1.Node) *v1.Node {
	w.t.Helper()
	want := node.DeepCopy()
	want.ResourceVersion = ""
	want.UID = ""
	status := want.Status
	want.Status = v1.NodeStatus{}
	n, err := w.Admin.CoreV1().Nodes().Create(w.ctx, want, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatalf("creating node %s: %v", want.Name, err)
	}
	w.mu.Lock()
	w.nodes = append(w.nodes, n.Name)
	w.mu.Unlock()
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err = w.Admin.CoreV1().Nodes().Get(w.ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t v1.Taint) bool { return t.Key == v1.TaintNodeNotReady })
		if len(want.Spec.Taints) == 0 && len(n.Spec.Taints) == 0 {
			n.Spec.Taints = nil
		}
		n, err = w.Admin.CoreV1().Nodes().Update(w.ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		w.t.Fatalf("removing the not-ready taint of %s: %v", want.Name, err)
	}
	n.Status = status
	n.Status.Capacity = status.Allocatable.DeepCopy()
	n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	n, err = w.Admin.CoreV1().Nodes().UpdateStatus(w.ctx, n, metav1.UpdateOptions{})
	if err != nil {
		w.t.Fatalf("setting the status of node %s: %v", want.Name, err)
	}
	return n
}

// podSpec fills in what every test pod has: the world's namespace and
// scheduler, a short grace period, no UID or status.
func (w *world) podSpec(p *v1.Pod) *v1.Pod {
	p = p.DeepCopy()
	p.Namespace = w.ns
	p.UID = ""
	p.Status = v1.PodStatus{}
	if p.Spec.SchedulerName == "" {
		p.Spec.SchedulerName = w.sched
	}
	if p.Spec.TerminationGracePeriodSeconds == nil {
		grace := int64(2)
		p.Spec.TerminationGracePeriodSeconds = &grace
	}
	return p
}

// pod creates a pending pod for the world's scheduler.
func (w *world) pod(p *v1.Pod) *v1.Pod {
	w.t.Helper()
	out, err := w.Admin.CoreV1().Pods(w.ns).Create(w.ctx, w.podSpec(p), metav1.CreateOptions{})
	if err != nil {
		w.t.Fatalf("creating pod %s: %v", p.Name, err)
	}
	return out
}

// running creates a pod bound to node, which the fake kubelet starts with
// status.startTime started.
func (w *world) running(p *v1.Pod, node string, started time.Time) *v1.Pod {
	w.t.Helper()
	p = w.podSpec(p)
	p.Spec.NodeName = node
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[startedAtAnnotation] = started.UTC().Format(time.RFC3339)
	out, err := w.Admin.CoreV1().Pods(w.ns).Create(w.ctx, p, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatalf("creating pod %s: %v", p.Name, err)
	}
	return out
}

// pdbWithStatus creates a budget and writes its status as given.
func (w *world) pdbWithStatus(pdb *policyv1.PodDisruptionBudget) *policyv1.PodDisruptionBudget {
	w.t.Helper()
	pdb = pdb.DeepCopy()
	pdb.UID, pdb.ResourceVersion = "", ""
	if pdb.Namespace == "" {
		pdb.Namespace = w.ns
	}
	status := pdb.Status
	out, err := w.Admin.PolicyV1().PodDisruptionBudgets(pdb.Namespace).Create(w.ctx, pdb, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatalf("creating PDB %s: %v", pdb.Name, err)
	}
	out.Status = status
	out.Status.ObservedGeneration = out.Generation
	out, err = w.Admin.PolicyV1().PodDisruptionBudgets(pdb.Namespace).UpdateStatus(w.ctx, out, metav1.UpdateOptions{})
	if err != nil {
		w.t.Fatalf("writing the status of PDB %s: %v", pdb.Name, err)
	}
	return out
}

// pdb creates a budget and writes its status as the disruption controller
// would have: allowed disruptions, healthy counts.
func (w *world) pdb(pdb *policyv1.PodDisruptionBudget, allowed, healthy, expected int32) *policyv1.PodDisruptionBudget {
	w.t.Helper()
	pdb = pdb.DeepCopy()
	pdb.Namespace = w.ns
	pdb.Status = policyv1.PodDisruptionBudgetStatus{}
	out, err := w.Admin.PolicyV1().PodDisruptionBudgets(w.ns).Create(w.ctx, pdb, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatalf("creating PDB %s: %v", pdb.Name, err)
	}
	out.Status = policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: out.Generation,
		DisruptionsAllowed: allowed,
		CurrentHealthy:     healthy,
		DesiredHealthy:     healthy - allowed,
		ExpectedPods:       expected,
	}
	out, err = w.Admin.PolicyV1().PodDisruptionBudgets(w.ns).UpdateStatus(w.ctx, out, metav1.UpdateOptions{})
	if err != nil {
		w.t.Fatalf("writing the status of PDB %s: %v", pdb.Name, err)
	}
	return out
}

// waitFor polls cond every 50 ms until it holds, failing the test after
// timeout with what and cond's last error.
func (w *world) waitFor(what string, timeout time.Duration, cond func() (bool, error)) {
	w.t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(w.ctx, poll, timeout, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok, nil
	})
	if err != nil {
		w.t.Logf("world state:\n%s", w.describe())
		w.t.Fatalf("timed out after %v waiting for %s (last error: %v)", timeout, what, last)
	}
}

// describe summarizes the world's nodes, pods and events, for failures.
func (w *world) describe() string {
	var b strings.Builder
	ctx := context.Background()
	nodes, _ := w.Admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	for _, n := range nodes.Items {
		fmt.Fprintf(&b, "  node %s taints=%v allocatable=%v\n", n.Name, n.Spec.Taints, n.Status.Allocatable)
	}
	pods, _ := w.Admin.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{})
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "  pod %s prio=%v node=%q nominated=%q phase=%s deleting=%v", p.Name, ptrVal(p.Spec.Priority), p.Spec.NodeName, p.Status.NominatedNodeName, p.Status.Phase, p.DeletionTimestamp != nil)
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled || c.Type == v1.DisruptionTarget {
				fmt.Fprintf(&b, " %s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message)
			}
		}
		b.WriteString("\n")
	}
	evs, _ := w.Admin.EventsV1().Events(w.ns).List(ctx, metav1.ListOptions{})
	for _, e := range evs.Items {
		fmt.Fprintf(&b, "  event %s %s/%s %s: %s\n", e.EventTime.Format("15:04:05.000"), e.Regarding.Name, e.Reason, e.Action, e.Note)
	}
	return b.String()
}

func ptrVal[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func (w *world) get(name string) (*v1.Pod, error) {
	return w.Admin.CoreV1().Pods(w.ns).Get(w.ctx, name, metav1.GetOptions{})
}

// mustGet returns the pod, failing the test if it cannot be read.
func (w *world) mustGet(name string) *v1.Pod {
	w.t.Helper()
	p, err := w.get(name)
	if err != nil {
		w.t.Fatalf("getting pod %s: %v", name, err)
	}
	return p
}

// waitBound waits until the pod is bound and returns its node.
func (w *world) waitBound(name string) string {
	w.t.Helper()
	var node string
	w.waitFor("pod "+name+" to be bound", waitTimeout, func() (bool, error) {
		p, err := w.get(name)
		if err != nil {
			return false, err
		}
		node = p.Spec.NodeName
		return node != "", nil
	})
	return node
}

// waitDecided waits until the scheduler bound the pod or recorded it
// unschedulable (PodScheduled condition).
func (w *world) waitDecided(name string) {
	w.t.Helper()
	w.waitFor("a scheduling decision about "+name, waitTimeout, func() (bool, error) {
		p, err := w.get(name)
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled {
				return true, nil
			}
		}
		return p.Spec.NodeName != "", nil
	})
}

// waitRunning waits until the fake kubelet has started the pods.
func (w *world) waitRunning(names ...string) {
	w.t.Helper()
	for _, name := range names {
		w.waitFor("pod "+name+" to run", waitTimeout, func() (bool, error) {
			p, err := w.get(name)
			return err == nil && p.Status.Phase == v1.PodRunning, err
		})
	}
}

// waitNominated waits until the pod has status.nominatedNodeName.
func (w *world) waitNominated(name string) string {
	w.t.Helper()
	var node string
	w.waitFor("pod "+name+" to be nominated", waitTimeout, func() (bool, error) {
		p, err := w.get(name)
		if err != nil {
			return false, err
		}
		node = p.Status.NominatedNodeName
		return node != "", nil
	})
	return node
}

// waitTerminating waits until the pod has a deletionTimestamp or is gone.
func (w *world) waitTerminating(name string) {
	w.t.Helper()
	w.waitFor("pod "+name+" to be terminating", waitTimeout, func() (bool, error) {
		p, err := w.get(name)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && p.DeletionTimestamp != nil, err
	})
}

// waitGone waits until the pod no longer exists.
func (w *world) waitGone(name string) {
	w.t.Helper()
	w.waitFor("pod "+name+" to be deleted", waitTimeout, func() (bool, error) {
		_, err := w.get(name)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// events returns the events.k8s.io/v1 events about the pod (regarding it),
// oldest first.
func (w *world) events(name string) []eventsv1.Event {
	w.t.Helper()
	list, err := w.Admin.EventsV1().Events(w.ns).List(w.ctx, metav1.ListOptions{})
	if err != nil {
		w.t.Fatalf("listing events: %v", err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == "Pod" && e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	return out
}

// waitEvent waits for an event with reason about the pod and returns the
// latest such event.
func (w *world) waitEvent(name, reason string) eventsv1.Event {
	w.t.Helper()
	var ev eventsv1.Event
	w.waitFor(fmt.Sprintf("a %s event about %s", reason, name), waitTimeout, func() (bool, error) {
		found := false
		for _, e := range w.events(name) {
			if e.Reason == reason {
				ev, found = e, true
			}
		}
		return found, nil
	})
	return ev
}

// reasons lists the reasons of the pod's events, oldest first.
func (w *world) reasons(name string) []string {
	var out []string
	for _, e := range w.events(name) {
		out = append(out, e.Reason)
	}
	return out
}

// podHistory records what a watch on one pod delivered.
type podHistory struct {
	mu     sync.Mutex
	events []podEvent
}

type podEvent struct {
	Type watch.EventType
	Pod  *v1.Pod
}

// watchPod records the watch events of one pod from now on.
func (w *world) watchPod(name string) *podHistory {
	w.t.Helper()
	h := &podHistory{}
	wi, err := w.Admin.CoreV1().Pods(w.ns).Watch(w.ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		w.t.Fatalf("watching pod %s: %v", name, err)
	}
	w.t.Cleanup(wi.Stop)
	go func() {
		for ev := range wi.ResultChan() {
			p, ok := ev.Object.(*v1.Pod)
			if !ok {
				continue
			}
			h.mu.Lock()
			h.events = append(h.events, podEvent{Type: ev.Type, Pod: p})
			h.mu.Unlock()
		}
	}()
	return h
}

func (h *podHistory) snapshot() []podEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

// disruptionTarget returns the pod's DisruptionTarget condition, if any.
func disruptionTarget(p *v1.Pod) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == v1.DisruptionTarget {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// runningScheduler is a kube.Run in a goroutine.
type runningScheduler struct {
	name    string
	tap     *tap
	cancel  context.CancelFunc
	done    chan struct{}
	err     error
	metrics string // address of /metrics, /readyz
	// registry holds the scheduler's metrics.
	registry *prometheus.Registry
}

type schedOpts struct {
	// config is the client configuration (default: the admin's).
	config *rest.Config
	// le enables leader election.
	le *kube.LeaderElection
	// noWait does not wait for the informer caches (standby replicas).
	noWait bool
	// clientConnection, when set, configures the clients as the product
	// does (kube.ApplyClientConnection, separate events and lease
	// clients), with leader election on as shipped unless le sets it;
	// otherwise the scheduler shares the harness's unthrottled settings.
	clientConnection *config.ClientConnection
	// policy is the victim policy (default upstream).
	policy profile.Policy
	// features are the feature gates (default all off, as v1.37).
	features profile.Features
}

// startScheduler runs reprieve's scheduler for the world's pods, with a
// client whose calls are tapped, and waits until its caches are synced.
func (w *world) startScheduler(o schedOpts) *runningScheduler {
	w.t.Helper()
	cfg := o.config
	if cfg == nil {
		cfg = w.AdminConfig
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningScheduler{name: w.sched, tap: newTap(), cancel: cancel, done: make(chan struct{}),
		metrics: fmt.Sprintf("127.0.0.1:%d", freePort(w.t)), registry: prometheus.NewRegistry()}
	var eventClient, leaseClient kubernetes.Interface
	if o.clientConnection != nil && o.le == nil {
		// The product's clients come with its leader election.
		o.le = shippedLeaderElection(w, "as-shipped")
	}
	if o.clientConnection != nil {
		// As kube.NewClients: events and the lease on clients of their
		// own, bindings first on the scheduler's.
		cfg = kube.ApplyClientConnection(cfg, *o.clientConnection)
		eventClient = r.tap.client(cfg)
		leaseClient = r.tap.client(cfg)
		cfg = kube.WithBindingsFirst(cfg)
	}
	go func() {
		defer close(r.done)
		r.err = kube.Run(ctx, kube.Config{
			Client:         r.tap.client(cfg),
			EventClient:    eventClient,
			LeaseClient:    leaseClient,
			SchedulerName:  w.sched,
			MetricsAddr:    r.metrics,
			Registry:       r.registry,
			LeaderElection: o.le,
			Seed:           1,
			Policy:         o.policy,
			Features:       o.features,
		})
	}()
	w.mu.Lock()
	w.taps = append(w.taps, r.tap)
	w.mu.Unlock()
	w.t.Cleanup(func() { _ = r.stop() })
	if !o.noWait {
		w.waitFor("the scheduler's caches to sync", waitTimeout, func() (bool, error) {
			select {
			case <-r.done:
				return false, fmt.Errorf("scheduler exited: %v", r.err)
			default:
			}
			return r.ready(), nil
		})
	}
	return r
}

func (r *runningScheduler) ready() bool {
	resp, err := http.Get("http://" + r.metrics + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// stop cancels the scheduler and returns what Run returned.
func (r *runningScheduler) stop() error {
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		return errors.New("scheduler did not stop within 30s")
	}
	return r.err
}

// exited reports whether Run has returned.
func (r *runningScheduler) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}
