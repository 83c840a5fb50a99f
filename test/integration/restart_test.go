package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/reprieve/reprieve/internal/reprievetest"
)

// TestAPIServerRestart stops the API server while the scheduler runs, in
// the middle of a preemption (the preemptor nominated, its victim
// terminating), and starts a new one on the same etcd at the same address.
// The scheduler must reconnect on its own, bind the preemptor once its
// victim is gone, schedule pods created after the restart, and lose
// nothing: every pod bound once, the victim deleted once, nothing else
// touched.
func TestAPIServerRestart(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := e.world(t)
	w.node(reprievetest.Node("node-1").CPU("2").Memory("2Gi").Pods(32).Label("node", "node-1"))
	w.node(reprievetest.Node("node-2").CPU("2").Memory("2Gi").Pods(32).Label("node", "node-2"))
	w.running(withGrace(mkPod("low-1", low, "1").Obj(), 5), "node-1", at(1))
	w.running(withGrace(mkPod("low-2", low, "1").Obj(), 5), "node-1", at(2))
	w.waitRunning("low-1", "low-2")
	s := w.startScheduler(schedOpts{})

	var pods []string
	for i := range 4 {
		name := fmt.Sprint("before-", i)
		w.pod(mkPod(name, medium, "250m").Obj())
		pods = append(pods, name)
	}
	before := map[string]string{}
	for _, n := range pods {
		before[n] = w.waitBound(n)
	}
	w.pod(mkPod("preemptor", high, "1").NodeSelector("node", "node-1").Obj())
	if got := w.waitNominated("preemptor"); got != "node-1" {
		t.Fatalf("preemptor nominated to %s", got)
	}
	w.waitTerminating("low-2")

	restartAt := time.Now()
	e.restartAPIServer(2 * time.Second)
	t.Logf("API server back %v after it was stopped", time.Since(restartAt).Round(time.Millisecond))

	for i := range 4 {
		name := fmt.Sprint("after-", i)
		w.pod(mkPod(name, medium, "250m").Obj())
		pods = append(pods, name)
	}
	for _, n := range pods {
		w.waitBound(n)
	}
	if got := w.waitBound("preemptor"); got != "node-1" {
		t.Errorf("preemptor bound to %s, want node-1", got)
	}
	t.Logf("all pods bound %v after the restart began", time.Since(restartAt).Round(time.Millisecond))
	w.waitGone("low-2")
	time.Sleep(settle)

	for n, node := range before {
		if got := w.mustGet(n).Spec.NodeName; got != node {
			t.Errorf("%s moved from %s to %s", n, node, got)
		}
	}
	if p := w.mustGet("low-1"); p.DeletionTimestamp != nil {
		t.Errorf("low-1 was preempted")
	}
	binds := podCalls("POST", "binding", true, s.tap)
	for _, n := range append(pods, "preemptor") {
		if binds[w.ns+"/"+n] != 1 {
			t.Errorf("%s: %d successful bindings, want 1", n, binds[w.ns+"/"+n])
		}
	}
	dels := podCalls("DELETE", "", false, s.tap)
	if dels[w.ns+"/low-2"] != 1 || sum(dels) != 1 {
		t.Errorf("deletes %v, want low-2 once", dels)
	}
	for _, n := range []string{"before-0", "after-0", "preemptor"} {
		w.waitEvent(n, "Scheduled")
	}
	if s.exited() {
		t.Errorf("scheduler exited: %v", s.err)
	}
}

// TestAPIServerRestartUnderLoad restarts the API server (on the same
// etcd) halfway through the preemption phase of the fault load. The
// scheduler must reconnect and bind every preemptor with no pod deleted
// or bound twice and no victim beyond the three per preemptor needed.
func TestAPIServerRestartUnderLoad(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := e.world(t)
	l := newFaultLoad(t, w, 1)
	s := w.startScheduler(schedOpts{clientConnection: defaultClient()})
	l.createPreemptors(t)
	l.waitHalf(t)
	restartAt := time.Now()
	e.restartAPIServer(2 * time.Second)
	t.Logf("API server back %v after it was stopped", time.Since(restartAt).Round(time.Millisecond))
	l.check(t, l.preemptors, faultNodes*faultVictims, faultNodes*faultVictims, s.tap)
	if s.exited() {
		t.Errorf("scheduler exited: %v", s.err)
	}
}
