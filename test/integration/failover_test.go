package integration

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reprieve/reprieve/internal/adapter/kube"
	"github.com/reprieve/reprieve/internal/reprievetest"
)

// TestLeaderFailover runs two replicas with leader election. The leader
// schedules and preempts, then dies mid-run without releasing the lease
// (its client is cut off: nothing it does reaches the API server any
// more). The standby must take over within the lease duration, bind the
// preemptors the dead leader nominated once their victims are gone without
// preempting again, and schedule new pods; no pod may be bound twice and
// no victim evicted twice.
func TestLeaderFailover(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := e.world(t)
	const (
		leaseDuration = 4 * time.Second
		renewDeadline = 3 * time.Second
		retryPeriod   = 500 * time.Millisecond
		victimGrace   = 8 // seconds: victims still terminate when the standby takes over
	)
	le := func(id string) *kube.LeaderElection {
		return &kube.LeaderElection{Namespace: w.ns, Name: "reprieve", Identity: id,
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod}
	}
	for i := 1; i <= 3; i++ {
		n := fmt.Sprint("node-", i)
		w.node(reprievetest.Node(n).CPU("2").Memory("2Gi").Pods(32))
		w.running(withGrace(mkPod("low-"+n+"-a", low, "500m").Obj(), victimGrace), n, at(i))
		w.running(withGrace(mkPod("low-"+n+"-b", low, "500m").Obj(), victimGrace), n, at(i+10))
	}
	w.waitRunning("low-node-1-a", "low-node-1-b", "low-node-2-a", "low-node-2-b", "low-node-3-a", "low-node-3-b")

	a := w.startScheduler(schedOpts{le: le("replica-a")})
	w.waitFor("replica-a to lead", waitTimeout, func() (bool, error) { return w.leaseHolder() == "replica-a", nil })
	b := w.startScheduler(schedOpts{le: le("replica-b")})

	// The leader fills the free half of every node.
	var bound []string
	for i := range 3 {
		name := fmt.Sprint("fit-", i)
		w.pod(mkPod(name, medium, "1").Obj())
		bound = append(bound, name)
	}
	for _, n := range bound {
		w.waitBound(n)
	}
	// Two preemptors: each evicts the two low pods of a node.
	for i := range 2 {
		w.pod(mkPod(fmt.Sprint("preemptor-", i), high, "1").Obj())
	}
	nominated := map[string]string{}
	for i := range 2 {
		name := fmt.Sprint("preemptor-", i)
		nominated[name] = w.waitNominated(name)
	}
	if nominated["preemptor-0"] == nominated["preemptor-1"] {
		t.Fatalf("both preemptors nominated to %s", nominated["preemptor-0"])
	}
	var victims []string
	for _, node := range nominated {
		victims = append(victims, "low-"+node+"-a", "low-"+node+"-b")
	}
	for _, v := range victims {
		w.waitTerminating(v)
	}
	// Let the leader finish its calls for the preemptors (status patches).
	w.waitFor("the leader's preemption calls", waitTimeout, func() (bool, error) {
		return len(a.tap.Calls("PATCH", "/preemptor-1/status")) > 0 && len(a.tap.Calls("PATCH", "/preemptor-0/status")) > 0, nil
	})

	// Kill the leader without releasing the lease.
	cutAt := time.Now()
	a.tap.cut()
	t.Logf("leader replica-a cut off at %s", cutAt.Format("15:04:05.000"))

	// New work while nobody leads: a node dedicated to two new pods (the
	// preemptors must not fit there, or they would rightly go there).
	w.node(reprievetest.Node("node-4").CPU("2").Memory("2Gi").Pods(32).Label("dedicated", "late").Taint("dedicated", "late", v1.TaintEffectNoSchedule))
	for i := range 2 {
		name := fmt.Sprint("late-", i)
		w.pod(mkPod(name, medium, "1").NodeSelector("dedicated", "late").Toleration("dedicated", "late", v1.TaintEffectNoSchedule).Obj())
		bound = append(bound, name)
	}

	w.waitFor("replica-b to take the lease", leaseDuration+renewDeadline+5*time.Second, func() (bool, error) {
		return w.leaseHolder() == "replica-b", nil
	})
	takeover := time.Since(cutAt)
	t.Logf("replica-b leads %v after the cut (lease duration %v)", takeover.Round(time.Millisecond), leaseDuration)
	if takeover > leaseDuration+2*retryPeriod+2*time.Second {
		t.Errorf("takeover took %v, want within the lease duration %v (+ retries)", takeover, leaseDuration)
	}
	// The dead leader notices it lost the lease once its renew deadline passes.
	w.waitFor("replica-a's Run to return", renewDeadline+5*time.Second, func() (bool, error) { return a.exited(), nil })
	if !errors.Is(a.err, kube.ErrLeadershipLost) {
		t.Errorf("replica-a's Run returned %v, want ErrLeadershipLost", a.err)
	}

	for name, node := range nominated {
		if got := w.waitBound(name); got != node {
			t.Errorf("%s bound to %s, want its nomination %s", name, got, node)
		}
		bound = append(bound, name)
	}
	for _, n := range bound {
		w.waitBound(n)
	}
	for _, v := range victims {
		w.waitGone(v)
	}
	time.Sleep(settle)

	// Nothing done twice, nothing done by the standby before it led.
	binds := podCalls("POST", "binding", true, a.tap, b.tap)
	for _, n := range bound {
		if binds[w.ns+"/"+n] != 1 {
			t.Errorf("%s: %d successful bindings, want 1", n, binds[w.ns+"/"+n])
		}
	}
	for _, c := range append(a.tap.Calls("POST", "/binding"), b.tap.Calls("POST", "/binding")...) {
		if c.Code == 409 {
			t.Errorf("binding conflict: %v", c)
		}
	}
	dels := podCalls("DELETE", "", false, a.tap, b.tap)
	for _, v := range victims {
		if dels[w.ns+"/"+v] != 1 {
			t.Errorf("victim %s: %d deletes, want 1", v, dels[w.ns+"/"+v])
		}
	}
	if n := sum(dels); n != len(victims) {
		t.Errorf("%d deletes (%v), want %d", n, dels, len(victims))
	}
	for _, c := range b.tap.All() {
		if c.At.Before(cutAt) && !slices.Contains([]string{"GET", "LIST", "WATCH"}, c.Method) && !isLeaseCall(c) && !isEventCall(c) {
			t.Errorf("standby wrote before the leader died: %v", c)
		}
	}
	if b.exited() {
		t.Errorf("replica-b stopped: %v", b.err)
	}
	// Survivors: the low pods of the node nobody preempted on.
	for i := 1; i <= 3; i++ {
		n := fmt.Sprint("node-", i)
		if slices.Contains(victims, "low-"+n+"-a") {
			continue
		}
		for _, s := range []string{"a", "b"} {
			if _, err := w.get("low-" + n + "-" + s); apierrors.IsNotFound(err) {
				t.Errorf("low-%s-%s was deleted", n, s)
			}
		}
	}
}

// leaseHolder returns the holder of the world's "reprieve" Lease.
func (w *world) leaseHolder() string {
	l, err := w.Admin.CoordinationV1().Leases(w.ns).Get(w.ctx, "reprieve", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func isLeaseCall(c call) bool { return containsPath(c.Path, "/leases") }
func isEventCall(c call) bool { return containsPath(c.Path, "/events") }

func containsPath(p, part string) bool {
	for i := 0; i+len(part) <= len(p); i++ {
		if p[i:i+len(part)] == part {
			return true
		}
	}
	return false
}

// TestLeaderFailoverUnderLoad kills the leader (its client cut off, the
// lease not released) halfway through the preemption phase of the fault
// load, a standby running. The standby must take over and bind every
// preemptor with no pod deleted or bound twice and no victim beyond the
// three per preemptor needed.
func TestLeaderFailoverUnderLoad(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := e.world(t)
	const leaseDuration, renewDeadline, retryPeriod = 4 * time.Second, 3 * time.Second, 500 * time.Millisecond
	le := func(id string) *kube.LeaderElection {
		return &kube.LeaderElection{Namespace: w.ns, Name: "reprieve", Identity: id,
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod}
	}
	l := newFaultLoad(t, w, 1)
	a := w.startScheduler(schedOpts{le: le("replica-a"), clientConnection: defaultClient()})
	w.waitFor("replica-a to lead", waitTimeout, func() (bool, error) { return w.leaseHolder() == "replica-a", nil })
	b := w.startScheduler(schedOpts{le: le("replica-b"), clientConnection: defaultClient(), noWait: true})
	l.createPreemptors(t)
	l.waitHalf(t)
	cutAt := time.Now()
	a.tap.cut()
	w.waitFor("replica-b to take the lease", leaseDuration+renewDeadline+5*time.Second, func() (bool, error) {
		return w.leaseHolder() == "replica-b", nil
	})
	t.Logf("replica-b leads %v after the cut", time.Since(cutAt).Round(time.Millisecond))
	l.check(t, l.preemptors, faultNodes*faultVictims, faultNodes*faultVictims, a.tap, b.tap)
	for _, c := range b.tap.All() {
		if c.At.Before(cutAt) && !slices.Contains([]string{"GET", "LIST", "WATCH"}, c.Method) && !isLeaseCall(c) && !isEventCall(c) {
			t.Errorf("standby wrote before the leader died: %v", c)
		}
	}
	if b.exited() {
		t.Errorf("replica-b stopped: %v", b.err)
	}
}
