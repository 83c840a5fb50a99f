package integration

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/reprieve/reprieve/internal/adapter/config"
	"github.com/reprieve/reprieve/internal/reprievetest"
)

// Fault tests run a small PreemptionBasic-shaped load — nodes of 4 CPU,
// four running pods of 900m per node at priority low, then one preemptor
// of 3000m at priority high per node, each needing three victims — and
// inject a fault halfway through the preemption phase. The load has
// faultNodes nodes: 50, or REPRIEVE_FAULT_NODES (200 is the burst of the
// reliability checks, about four times as long).
const (
	faultPerNode = 4
	faultVictims = 3 // per preemptor
)

var faultNodes = func() int {
	if n, err := strconv.Atoi(os.Getenv("REPRIEVE_FAULT_NODES")); err == nil && n > 0 {
		return n
	}
	return 50
}()

// faultLoad is the load of a fault test in a world.
type faultLoad struct {
	w       *world
	tracker *bindTracker
	// preemptors are the names of the preemptors created.
	preemptors []string
}

// newFaultLoad creates the nodes and the running init pods (grace
// seconds of termination grace); the scheduler is not started.
func newFaultLoad(t *testing.T, w *world, grace int64) *faultLoad {
	t.Helper()
	parallel(t, faultNodes, 8, func(i int) error {
		w.node(reprievetest.Node(fmt.Sprintf("node-%03d", i)).CPU("4").Memory("32Gi").Pods(110))
		return nil
	})
	l := &faultLoad{w: w, tracker: newBindTracker(t, w)}
	parallel(t, faultNodes*faultPerNode, 16, func(i int) error {
		p := withGrace(reprievetest.Pod("", fmt.Sprintf("init-%04d", i)).PriorityClass(low).Req("900m", "500Mi").Obj(), grace)
		w.running(p, fmt.Sprintf("node-%03d", i/faultPerNode), at(i))
		return nil
	})
	l.tracker.waitBound(t, faultNodes*faultPerNode, waitTimeout, nil)
	return l
}

// createPreemptors creates the preemptors, one per node.
func (l *faultLoad) createPreemptors(t *testing.T) {
	t.Helper()
	for i := range faultNodes {
		l.preemptors = append(l.preemptors, fmt.Sprintf("preemptor-%03d", i))
	}
	parallel(t, faultNodes, 16, func(i int) error {
		l.w.pod(reprievetest.Pod("", l.preemptors[i]).PriorityClass(high).Req("3000m", "500Mi").Obj())
		return nil
	})
}

// boundPreemptors counts the preemptors seen bound.
func (l *faultLoad) boundPreemptors() int {
	l.tracker.mu.Lock()
	defer l.tracker.mu.Unlock()
	n := 0
	for p := range l.tracker.boundAt {
		if strings.HasPrefix(p, "preemptor-") {
			n++
		}
	}
	return n
}

// waitHalf waits until half the preemptors are bound.
func (l *faultLoad) waitHalf(t *testing.T) {
	t.Helper()
	l.w.waitFor("half the preemptors bound", waitTimeout, func() (bool, error) {
		return l.boundPreemptors() >= faultNodes/2, nil
	})
	t.Logf("%d of %d preemptors bound when the fault is injected", l.boundPreemptors(), faultNodes)
}

// check waits until every preemptor in want is bound, then checks the
// outcome: no pod deleted twice by the schedulers behind taps, victims
// (init pods gone) at most maxVictims and at least minVictims, no init
// pod bound by a scheduler, and no pending pod left with a
// nominatedNodeName. It returns the number of victims.
func (l *faultLoad) check(t *testing.T, want []string, minVictims, maxVictims int, taps ...*tap) int {
	t.Helper()
	w := l.w
	start := time.Now()
	w.waitFor("every preemptor bound", 45*time.Second, func() (bool, error) {
		l.tracker.mu.Lock()
		defer l.tracker.mu.Unlock()
		for _, p := range want {
			if _, ok := l.tracker.boundAt[p]; !ok {
				return false, nil
			}
		}
		return true, nil
	})
	t.Logf("all %d preemptors bound %v after the check began", len(want), time.Since(start).Round(time.Millisecond))
	// Victims still terminating finish within their grace period.
	w.waitFor("no pod terminating", waitTimeout, func() (bool, error) {
		list, err := w.Admin.CoreV1().Pods(w.ns).List(w.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range list.Items {
			if p.DeletionTimestamp != nil {
				return false, nil
			}
		}
		return true, nil
	})
	time.Sleep(settle)

	victims := l.tracker.gone()
	for p := range l.tracker.goneAt {
		if strings.HasPrefix(p, "preemptor-") {
			victims-- // deleted by the test, not preempted
		}
	}
	if victims < minVictims || victims > maxVictims {
		t.Errorf("%d victims, want %d to %d", victims, minVictims, maxVictims)
	}
	for pod, n := range podCalls("DELETE", "", true, taps...) {
		if n > 1 {
			t.Errorf("%s deleted %d times", pod, n)
		}
	}
	binds := podCalls("POST", "binding", true, taps...)
	for pod, n := range binds {
		if n > 1 || !strings.Contains(pod, "/preemptor-") {
			t.Errorf("%s: %d successful bindings", pod, n)
		}
	}
	list, err := w.Admin.CoreV1().Pods(w.ns).List(w.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if p.Spec.NodeName == "" && p.Status.NominatedNodeName != "" {
			t.Errorf("%s pending with a stale nominatedNodeName %s", p.Name, p.Status.NominatedNodeName)
		}
	}
	t.Logf("outcome: %d of %d preemptors bound, %d victims, %d scheduler deletes, %d bindings", len(want), len(l.preemptors), victims, sum(podCalls("DELETE", "", true, taps...)), sum(binds))
	return victims
}

// defaultClient is the product's default client connection (QPS 50,
// burst 100, protobuf).
func defaultClient() *config.ClientConnection {
	cc := config.DefaultConnection().ClientConnection
	return &cc
}

// TestFaultVictimDeletedByOthers deletes some victims on the scheduler's
// behalf just before its own delete reaches the API server (between the
// preemptor's nomination and the victim's deletion), so the scheduler's
// delete finds the pod gone. Every preemptor must still be bound with no
// victim beyond the three per preemptor needed.
func TestFaultVictimDeletedByOthers(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := e.world(t)
	l := newFaultLoad(t, w, 1)
	zero := int64(0)
	var mu sync.Mutex
	stolen := map[string]bool{}
	cfg := rest.CopyConfig(w.AdminConfig)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if ns, name, sub, ok := parsePodPath(req.URL.Path); ok && req.Method == http.MethodDelete && sub == "" && ns == w.ns {
				mu.Lock()
				steal := len(stolen) < 20 && !stolen[name]
				if steal {
					stolen[name] = true
				}
				mu.Unlock()
				if steal {
					if err := w.Admin.CoreV1().Pods(ns).Delete(req.Context(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
						t.Logf("deleting %s for someone else: %v", name, err)
					}
				}
			}
			return rt.RoundTrip(req)
		})
	})
	s := w.startScheduler(schedOpts{config: cfg, clientConnection: defaultClient()})
	l.createPreemptors(t)
	l.check(t, l.preemptors, faultNodes*faultVictims, faultNodes*faultVictims, s.tap)
	mu.Lock()
	n := len(stolen)
	mu.Unlock()
	notFound := 0
	for _, c := range s.tap.Calls("DELETE", "") {
		if c.Code == http.StatusNotFound {
			notFound++
		}
	}
	t.Logf("%d victims deleted by someone else first; the scheduler's delete got 404 for %d", n, notFound)
	if n == 0 || notFound == 0 {
		t.Errorf("no victim was deleted by someone else first (%d stolen, %d 404s): the test did not test", n, notFound)
	}
	if s.exited() {
		t.Errorf("scheduler exited: %v", s.err)
	}
}

// TestFaultPreemptorDeleted deletes preemptors while their victims
// terminate (grace period 3 s). Their nominations go with them; nothing
// more is preempted for them; every other preemptor is bound.
func TestFaultPreemptorDeleted(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := e.world(t)
	l := newFaultLoad(t, w, 3)
	s := w.startScheduler(schedOpts{clientConnection: defaultClient()})
	l.createPreemptors(t)
	// Delete the first five preemptors nominated, while their victims
	// terminate.
	deleted := map[string]string{}
	w.waitFor("five preemptors nominated", waitTimeout, func() (bool, error) {
		list, err := w.Admin.CoreV1().Pods(w.ns).List(w.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range list.Items {
			if len(deleted) < 5 && p.Spec.NodeName == "" && p.Status.NominatedNodeName != "" && strings.HasPrefix(p.Name, "preemptor-") {
				if err := w.Admin.CoreV1().Pods(w.ns).Delete(w.ctx, p.Name, metav1.DeleteOptions{}); err != nil {
					return false, err
				}
				deleted[p.Name] = p.Status.NominatedNodeName
			}
		}
		return len(deleted) == 5, nil
	})
	terminating := 0
	for _, node := range deleted {
		pods, err := w.Admin.CoreV1().Pods(w.ns).List(w.ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil {
				terminating++
			}
		}
	}
	t.Logf("deleted %v; %d of their victims were terminating", deleted, terminating)
	if terminating == 0 {
		t.Errorf("no victim of a deleted preemptor was terminating: the test did not test")
	}
	var want []string
	for _, p := range l.preemptors {
		if _, ok := deleted[p]; !ok {
			want = append(want, p)
		}
	}
	// The space a deleted preemptor's victims free may serve another
	// preemptor, so fewer victims are fine; more than three per preemptor
	// are not.
	l.check(t, want, len(want)*faultVictims, faultNodes*faultVictims, s.tap)
	if s.exited() {
		t.Errorf("scheduler exited: %v", s.err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
