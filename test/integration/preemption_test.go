package integration

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/reprieve/reprieve/internal/engine/profile"
	"github.com/reprieve/reprieve/internal/reprievetest"
)

// base is the start time the scenarios give running pods (plus offsets).
var base = time.Now().Add(-time.Hour).Truncate(time.Minute)

func at(minutes int) time.Time { return base.Add(time.Duration(minutes) * time.Minute) }

// mkPod is a pod of priority class pc requesting cpu.
func mkPod(name, pc, cpu string) *reprievetest.PodBuilder {
	return reprievetest.Pod("", name).PriorityClass(pc).Req(cpu, "")
}

// smallNode is upstream's test node: 500m CPU, 500 bytes of memory, 32 pods.
func smallNode(name string) *reprievetest.NodeBuilder {
	return reprievetest.Node(name).CPU("500m").Memory("500").Pods(32).Label("node", name)
}

func withGrace(p *v1.Pod, seconds int64) *v1.Pod {
	p.Spec.TerminationGracePeriodSeconds = &seconds
	return p
}

// TestPreemption runs the preemption scenarios, one API server for all.
func TestPreemption(t *testing.T) {
	e := newEnv(t, envOptions{})

	t.Run("basic", func(t *testing.T) {
		w := e.world(t)
		w.node(smallNode("node-1"))
		s := w.startScheduler(schedOpts{})
		w.pod(mkPod("victim", low, "400m").Obj())
		if got := w.waitBound("victim"); got != "node-1" {
			t.Fatalf("victim bound to %q, want node-1", got)
		}
		w.waitRunning("victim")
		victim := w.watchPod("victim")
		preemptor := w.watchPod("preemptor")

		w.pod(mkPod("preemptor", high, "400m").Obj())
		if got := w.waitBound("preemptor"); got != "node-1" {
			t.Fatalf("preemptor bound to %q, want node-1", got)
		}
		w.waitGone("victim")

		// The victim got the DisruptionTarget condition before it was deleted.
		checkConditionBeforeDeletion(t, victim.snapshot(), w.sched)
		// The preemptor was nominated before it was bound.
		nominatedFirst := false
		for _, ev := range preemptor.snapshot() {
			if ev.Pod.Spec.NodeName != "" {
				break
			}
			if ev.Pod.Status.NominatedNodeName == "node-1" {
				nominatedFirst = true
			}
		}
		if !nominatedFirst {
			t.Errorf("preemptor was not nominated to node-1 before it was bound")
		}
		if p := w.mustGet("preemptor"); p.Status.NominatedNodeName != "" {
			t.Errorf("preemptor still nominated to %q after binding", p.Status.NominatedNodeName)
		}
		wantCalls(t, s.tap, map[string]int{
			"DELETE " + w.ns + "/victim":          1,
			"PATCH " + w.ns + "/victim/status":    1,
			"POST " + w.ns + "/victim/binding":    1,
			"POST " + w.ns + "/preemptor/binding": 1,
			"DELETE " + w.ns + "/preemptor":       0,
			"PATCH " + w.ns + "/preemptor/status": 1,
		})
	})

	t.Run("victim-policy-minimal", func(t *testing.T) {
		// Upstream's greedy reprieve keeps the oldest pod, which takes
		// exactly the room the preemptor needs, and evicts both younger
		// ones; --victim-policy minimal evicts the oldest alone.
		w := e.world(t)
		w.node(smallNode("node-1"))
		w.running(mkPod("old", low, "250m").Obj(), "node-1", at(0))
		w.running(mkPod("young-1", low, "125m").Obj(), "node-1", at(1))
		w.running(mkPod("young-2", low, "125m").Obj(), "node-1", at(2))
		w.waitRunning("old", "young-1", "young-2")
		s := w.startScheduler(schedOpts{policy: profile.PolicyMinimal})
		w.pod(mkPod("preemptor", high, "250m").Obj())
		if got := w.waitBound("preemptor"); got != "node-1" {
			t.Fatalf("preemptor bound to %q, want node-1", got)
		}
		wantVictims(t, w, s, []string{"old"}, []string{"young-1", "young-2"})
	})

	t.Run("anti-affinity", func(t *testing.T) {
		// Upstream's "preemption is performed to satisfy anti-affinity": a
		// medium pod the preemptor repels and a low pod that repels the
		// preemptor both go, though the node has room.
		w := e.world(t)
		w.node(smallNode("node-1"))
		w.running(mkPod("pod-0", medium, "100m").Label("pod", "p0").Obj(), "node-1", at(0))
		w.running(mkPod("pod-1", low, "100m").Label("pod", "p1").PodAntiAffinity("node", map[string]string{"pod": "preemptor"}).Obj(), "node-1", at(1))
		w.running(mkPod("pod-2", low, "100m").Label("pod", "p2").Obj(), "node-1", at(2))
		w.waitRunning("pod-0", "pod-1", "pod-2")
		s := w.startScheduler(schedOpts{})
		w.pod(mkPod("preemptor", high, "100m").Label("pod", "preemptor").PodAntiAffinity("node", map[string]string{"pod": "p0"}).Obj())
		if got := w.waitBound("preemptor"); got != "node-1" {
			t.Fatalf("preemptor bound to %q, want node-1", got)
		}
		wantVictims(t, w, s, []string{"pod-0", "pod-1"}, []string{"pod-2"})
	})

	t.Run("anti-affinity-not-satisfiable", func(t *testing.T) {
		// Upstream's "preemption is not performed when anti-affinity is not
		// satisfied": the pod that repels the preemptor has its priority.
		w := e.world(t)
		w.node(smallNode("node-1"))
		w.running(mkPod("pod-0", medium, "100m").Label("pod", "p0").Obj(), "node-1", at(0))
		w.running(mkPod("pod-1", high, "100m").Label("pod", "p1").PodAntiAffinity("node", map[string]string{"pod": "preemptor"}).Obj(), "node-1", at(1))
		w.waitRunning("pod-0", "pod-1")
		s := w.startScheduler(schedOpts{})
		w.pod(mkPod("preemptor", high, "100m").Label("pod", "preemptor").PodAntiAffinity("node", map[string]string{"pod": "p0"}).Obj())
		ev := w.waitEvent("preemptor", "FailedScheduling")
		if !strings.Contains(ev.Note, "preemption: 0/1 nodes are available") {
			t.Errorf("FailedScheduling note %q: want no preemption candidate", ev.Note)
		}
		wantNoPreemption(t, w, s, "preemptor", "pod-0", "pod-1")
	})

	t.Run("unresolvable-filter", func(t *testing.T) {
		// A nodeSelector no node matches: preemption cannot help.
		w := e.world(t)
		w.node(smallNode("node-1"))
		w.running(mkPod("low-1", low, "400m").Obj(), "node-1", at(0))
		w.waitRunning("low-1")
		s := w.startScheduler(schedOpts{})
		w.pod(mkPod("preemptor", high, "400m").NodeSelector("disk", "ssd").Obj())
		ev := w.waitEvent("preemptor", "FailedScheduling")
		want := "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
		if ev.Note != want {
			t.Errorf("FailedScheduling note:\n got %q\nwant %q", ev.Note, want)
		}
		wantNoPreemption(t, w, s, "preemptor", "low-1")
	})

	t.Run("preemption-policy-never", func(t *testing.T) {
		w := e.world(t)
		w.node(smallNode("node-1"))
		w.running(mkPod("low-1", low, "400m").Obj(), "node-1", at(0))
		w.waitRunning("low-1")
		s := w.startScheduler(schedOpts{})
		w.pod(mkPod("preemptor", highNever, "400m").Obj())
		if p := w.mustGet("preemptor"); p.Spec.PreemptionPolicy == nil || *p.Spec.PreemptionPolicy != v1.PreemptNever {
			t.Fatalf("admission did not set preemptionPolicy Never: %v", p.Spec.PreemptionPolicy)
		}
		ev := w.waitEvent("preemptor", "FailedScheduling")
		want := "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
		if ev.Note != want {
			t.Errorf("FailedScheduling note:\n got %q\nwant %q", ev.Note, want)
		}
		wantNoPreemption(t, w, s, "preemptor", "low-1")
	})

	t.Run("pdb", func(t *testing.T) {
		testPDB(t, e)
	})

	t.Run("events", func(t *testing.T) {
		w := e.world(t)
		w.node(smallNode("node-1"))
		w.node(smallNode("node-2"))
		w.running(mkPod("low-1", low, "400m").Obj(), "node-1", at(0))
		w.running(mkPod("medium-2", medium, "400m").Obj(), "node-2", at(0))
		w.waitRunning("low-1", "medium-2")
		w.startScheduler(schedOpts{})
		pre := w.pod(mkPod("preemptor", high, "400m").Obj())
		if got := w.waitBound("preemptor"); got != "node-1" {
			t.Fatalf("preemptor bound to %q, want node-1", got)
		}

		preempted := w.waitEvent("low-1", "Preempted")
		wantEvent(t, preempted, v1.EventTypeNormal, "Preempting", fmt.Sprintf("Preempted by pod %s on node node-1", pre.UID), w.sched)
		if preempted.Related == nil || preempted.Related.Name != "preemptor" || preempted.Related.UID != pre.UID {
			t.Errorf("Preempted event related = %+v, want the preemptor", preempted.Related)
		}
		failed := w.waitEvent("preemptor", "FailedScheduling")
		wantEvent(t, failed, v1.EventTypeWarning, "Scheduling",
			"0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement for pod on node node-1, preempting 1 victims", w.sched)
		scheduled := w.waitEvent("preemptor", "Scheduled")
		wantEvent(t, scheduled, v1.EventTypeNormal, "Binding", fmt.Sprintf("Successfully assigned %s/preemptor to node-1", w.ns), w.sched)
		if got := w.reasons("preemptor"); !slices.Equal(got, []string{"FailedScheduling", "Scheduled"}) {
			t.Errorf("preemptor events %v, want [FailedScheduling Scheduled]", got)
		}
		if got := w.reasons("medium-2"); len(got) != 0 {
			t.Errorf("medium-2 has events %v, want none", got)
		}
	})

	t.Run("replicaset-recreation", func(t *testing.T) {
		testReplicaSetRecreation(t, e)
	})

	t.Run("nomination-moves-to-higher-priority", func(t *testing.T) {
		// Upstream's TestNominatedNode "mid-priority pod preempts
		// low-priority pod, followed by a high-priority pod with another
		// preemption", with victims that take 5 s to terminate.
		w := e.world(t)
		w.node(reprievetest.Node("node-1").CPU("5").Memory("1Gi").Pods(32))
		for i := 1; i <= 4; i++ {
			w.running(withGrace(mkPod(fmt.Sprint("low-", i), low, "1").Obj(), 5), "node-1", at(i))
		}
		w.waitRunning("low-1", "low-2", "low-3", "low-4")
		s := w.startScheduler(schedOpts{})

		w.pod(mkPod("medium", medium, "3").Obj())
		if got := w.waitNominated("medium"); got != "node-1" {
			t.Fatalf("medium nominated to %q, want node-1", got)
		}
		w.waitTerminating("low-4")
		w.waitTerminating("low-3")
		w.pod(mkPod("high", high, "4").Obj())
		if got := w.waitNominated("high"); got != "node-1" {
			t.Fatalf("high nominated to %q, want node-1", got)
		}
		// The medium pod lost its nomination when the high one took the
		// node, while the first victims are still terminating.
		w.waitFor("medium's nomination to be cleared", 2*time.Second, func() (bool, error) {
			p, err := w.get("medium")
			return err == nil && p.Status.NominatedNodeName == "", err
		})
		if p := w.mustGet("low-4"); p.DeletionTimestamp == nil {
			t.Fatalf("low-4 is not terminating")
		}
		if got := w.waitBound("high"); got != "node-1" {
			t.Fatalf("high bound to %q, want node-1", got)
		}
		w.waitGone("low-2")
		time.Sleep(settle)
		if p := w.mustGet("medium"); p.Spec.NodeName != "" || p.Status.NominatedNodeName != "" {
			t.Errorf("medium: nodeName %q, nominatedNodeName %q; want pending without nomination", p.Spec.NodeName, p.Status.NominatedNodeName)
		}
		if p := w.mustGet("low-1"); p.DeletionTimestamp != nil {
			t.Errorf("low-1 was preempted")
		}
		wantCalls(t, s.tap, map[string]int{
			"DELETE " + w.ns + "/low-1":        0,
			"DELETE " + w.ns + "/low-2":        1,
			"DELETE " + w.ns + "/low-3":        1,
			"DELETE " + w.ns + "/low-4":        1,
			"POST " + w.ns + "/high/binding":   1,
			"POST " + w.ns + "/medium/binding": 0,
		})
	})

	t.Run("higher-priority-takes-the-room", func(t *testing.T) {
		// Upstream's "... followed by a high-priority pod without additional
		// preemption": the high pod fits beside the terminating victim
		// because the medium pod's nomination does not count against it.
		w := e.world(t)
		w.node(reprievetest.Node("node-1").CPU("2").Memory("1Gi").Pods(32))
		w.running(withGrace(mkPod("low", low, "1").Obj(), 4), "node-1", at(0))
		w.waitRunning("low")
		s := w.startScheduler(schedOpts{})
		w.pod(mkPod("medium", medium, "2").Obj())
		w.waitNominated("medium")
		w.pod(mkPod("high", high, "1").Obj())
		if got := w.waitBound("high"); got != "node-1" {
			t.Fatalf("high bound to %q, want node-1", got)
		}
		// The medium pod's preemption of low goes on (high may be bound
		// before its delete is sent: bindings go first).
		w.waitGone("low")
		w.waitFor("medium's nomination to be cleared", waitTimeout, func() (bool, error) {
			p, err := w.get("medium")
			return err == nil && p.Status.NominatedNodeName == "", err
		})
		time.Sleep(settle)
		if p := w.mustGet("medium"); p.Spec.NodeName != "" {
			t.Errorf("medium bound to %s", p.Spec.NodeName)
		}
		wantCalls(t, s.tap, map[string]int{
			"DELETE " + w.ns + "/low":        1,
			"DELETE " + w.ns + "/high":       0,
			"POST " + w.ns + "/high/binding": 1,
		})
	})

	t.Run("nomination-cleared-no-candidates", func(t *testing.T) {
		// Upstream's "mid-priority pod preempts low-priority pod at the
		// beginning, but could not find candidates after the nominated node
		// is deleted".
		w := e.world(t)
		w.node(reprievetest.Node("taint-node").CPU("1").Pods(32).Taint("taint-node", "true", v1.TaintEffectNoSchedule))
		w.node(reprievetest.Node("fake-node").CPU("1").Pods(32))
		w.running(withGrace(mkPod("low", low, "1").Obj(), 30), "fake-node", at(0))
		w.waitRunning("low")
		w.startScheduler(schedOpts{})
		w.pod(mkPod("medium", medium, "1").Obj())
		if got := w.waitNominated("medium"); got != "fake-node" {
			t.Fatalf("medium nominated to %q, want fake-node", got)
		}
		zero := int64(0)
		if err := w.Admin.CoreV1().Nodes().Delete(w.ctx, "fake-node", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
		if err := w.Admin.CoreV1().Pods(w.ns).Delete(w.ctx, "low", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		w.waitFor("medium's nomination to be cleared", waitTimeout, func() (bool, error) {
			p, err := w.get("medium")
			return err == nil && p.Status.NominatedNodeName == "", err
		})
	})

	t.Run("nomination-cleared-no-nodes", func(t *testing.T) {
		// Upstream's "mid-priority pod preempts low-priority pod, followed by
		// a node deletion": with no node left the nomination is cleared
		// (upstream: ErrNoNodesAvailable carries clearNominatedNode).
		w := e.world(t)
		w.node(reprievetest.Node("fake-node").CPU("1").Pods(32))
		w.running(withGrace(mkPod("low", low, "1").Obj(), 30), "fake-node", at(0))
		w.waitRunning("low")
		w.startScheduler(schedOpts{})
		w.pod(mkPod("medium", medium, "1").Obj())
		w.waitNominated("medium")
		zero := int64(0)
		if err := w.Admin.CoreV1().Nodes().Delete(w.ctx, "fake-node", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
		if err := w.Admin.CoreV1().Pods(w.ns).Delete(w.ctx, "low", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		w.waitFor("medium's nomination to be cleared", 15*time.Second, func() (bool, error) {
			p, err := w.get("medium")
			return err == nil && p.Status.NominatedNodeName == "", err
		})
	})

	t.Run("cache-complete-at-start", func(t *testing.T) {
		// A scheduler starting on a busy cluster must count every running
		// pod before it schedules anything (kube.Feed once started the pod
		// and node informers together, and the cache dropped pods whose
		// node it had not seen yet: their nodes were then overcommitted).
		w := e.world(t)
		var names []string
		for i := range 20 {
			n := fmt.Sprintf("node-%02d", i)
			w.node(smallNode(n))
			for j := range 5 {
				name := fmt.Sprintf("run-%02d-%d", i, j)
				w.running(mkPod(name, medium, "100m").Obj(), n, at(j))
				names = append(names, name)
			}
		}
		w.waitRunning(names...)
		w.startScheduler(schedOpts{})
		for i := range 10 {
			w.pod(mkPod(fmt.Sprint("extra-", i), medium, "100m").Obj())
		}
		for i := range 10 {
			w.waitDecided(fmt.Sprint("extra-", i))
		}
		for i := range 10 {
			if p := w.mustGet(fmt.Sprint("extra-", i)); p.Spec.NodeName != "" {
				t.Errorf("extra-%d bound to the full node %s", i, p.Spec.NodeName)
			}
		}
	})

	t.Run("node-recreated", func(t *testing.T) {
		// A node object deleted and created again (a kubelet registering
		// anew) while its pods keep running: they still use the node, and
		// the scheduler must keep counting them, as upstream's cache does
		// (it keeps a deleted node's pods until they are deleted).
		w := e.world(t)
		w.node(smallNode("node-1"))
		w.running(mkPod("running", medium, "400m").Obj(), "node-1", at(0))
		w.waitRunning("running")
		w.startScheduler(schedOpts{})
		if err := w.Admin.CoreV1().Nodes().Delete(w.ctx, "node-1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		w.waitFor("node-1 to be gone", waitTimeout, func() (bool, error) {
			_, err := w.Admin.CoreV1().Nodes().Get(w.ctx, "node-1", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		time.Sleep(500 * time.Millisecond)
		w.node(smallNode("node-1"))
		w.pod(mkPod("newcomer", medium, "400m").Obj())
		w.waitDecided("newcomer")
		if p := w.mustGet("newcomer"); p.Spec.NodeName != "" {
			t.Errorf("newcomer bound to %s beside running: 800m on a 500m node", p.Spec.NodeName)
		}
	})

	t.Run("starvation", func(t *testing.T) {
		// Upstream's TestPreemptionStarvation/TestPreemptionRaces: pods of
		// the victims' priority created while the preemptor waits for its
		// victims must not take the room.
		w := e.world(t)
		w.node(smallNode("node-1"))
		for i := range 5 {
			w.running(withGrace(mkPod(fmt.Sprint("run-", i), medium, "100m").Obj(), 3), "node-1", at(i))
		}
		w.waitRunning("run-0", "run-1", "run-2", "run-3", "run-4")
		s := w.startScheduler(schedOpts{})
		w.pod(mkPod("preemptor", high, "300m").Obj())
		w.waitNominated("preemptor")
		for i := range 10 {
			w.pod(mkPod(fmt.Sprint("late-", i), medium, "100m").Obj())
		}
		if got := w.waitBound("preemptor"); got != "node-1" {
			t.Fatalf("preemptor bound to %q", got)
		}
		time.Sleep(settle)
		for i := range 10 {
			if p := w.mustGet(fmt.Sprint("late-", i)); p.Spec.NodeName != "" {
				t.Errorf("late-%d was bound to %s", i, p.Spec.NodeName)
			}
		}
		dels := podCalls("DELETE", "", false, s.tap)
		if n := sum(dels); n != 3 {
			t.Errorf("%d pods deleted (%v), want 3", n, dels)
		}
	})
}

// checkConditionBeforeDeletion checks a victim's watch history: the
// DisruptionTarget condition arrived on an update without a
// deletionTimestamp, before any update with one or the deletion.
func checkConditionBeforeDeletion(t *testing.T, hist []podEvent, sched string) {
	t.Helper()
	condAt, delAt := -1, -1
	for i, ev := range hist {
		if c := disruptionTarget(ev.Pod); c != nil && condAt < 0 {
			condAt = i
			if c.Status != v1.ConditionTrue || c.Reason != v1.PodReasonPreemptionByScheduler ||
				c.Message != sched+": preempting to accommodate a higher priority pod" {
				t.Errorf("DisruptionTarget condition %+v", *c)
			}
		}
		if (ev.Pod.DeletionTimestamp != nil || ev.Type == watch.Deleted) && delAt < 0 {
			delAt = i
		}
	}
	var seq []string
	for _, ev := range hist {
		seq = append(seq, fmt.Sprintf("%s(cond=%v,deleting=%v)", ev.Type, disruptionTarget(ev.Pod) != nil, ev.Pod.DeletionTimestamp != nil))
	}
	switch {
	case condAt < 0:
		t.Errorf("victim never got the DisruptionTarget condition; watch: %v", seq)
	case delAt < 0:
		t.Errorf("victim was never deleted; watch: %v", seq)
	case condAt >= delAt || hist[condAt].Pod.DeletionTimestamp != nil:
		t.Errorf("DisruptionTarget condition did not precede the deletion; watch: %v", seq)
	}
}

// wantCalls compares the tap's call counts for "METHOD ns/name[/sub]" keys.
// The tap records a call when its response comes back, which may be after
// the test saw its effect through the API server: counts are read again
// for up to a second until they match.
func wantCalls(t *testing.T, tp *tap, want map[string]int) {
	t.Helper()
	count := func() map[string]int {
		got := map[string]int{}
		for _, c := range tp.All() {
			ns, name, sub, ok := parsePodPath(c.Path)
			if !ok {
				continue
			}
			key := c.Method + " " + ns + "/" + name
			if sub != "" {
				key += "/" + sub
			}
			got[key]++
		}
		return got
	}
	got := count()
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); got = count() {
		match := true
		for k, n := range want {
			match = match && got[k] == n
		}
		if match {
			break
		}
		time.Sleep(poll)
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			t.Errorf("%s: %d calls, want %d", k, got[k], want[k])
		}
	}
}

// wantVictims checks that exactly victims were preempted (condition, then
// deleted) and that survivors still run untouched.
func wantVictims(t *testing.T, w *world, s *runningScheduler, victims, survivors []string) {
	t.Helper()
	for _, v := range victims {
		w.waitGone(v)
	}
	dels := podCalls("DELETE", "", false, s.tap)
	for _, v := range victims {
		if dels[w.ns+"/"+v] != 1 {
			t.Errorf("victim %s: %d deletes, want 1", v, dels[w.ns+"/"+v])
		}
	}
	for _, name := range survivors {
		p := w.mustGet(name)
		if p.DeletionTimestamp != nil || disruptionTarget(p) != nil || dels[w.ns+"/"+name] != 0 {
			t.Errorf("%s was preempted, want it to survive", name)
		}
	}
}

// wantNoPreemption checks, after a settle time, that the pod is neither
// bound nor nominated and that the scheduler touched none of others.
func wantNoPreemption(t *testing.T, w *world, s *runningScheduler, pod string, others ...string) {
	t.Helper()
	time.Sleep(settle)
	p := w.mustGet(pod)
	if p.Spec.NodeName != "" || p.Status.NominatedNodeName != "" {
		t.Errorf("%s: nodeName %q nominatedNodeName %q, want neither", pod, p.Spec.NodeName, p.Status.NominatedNodeName)
	}
	for _, o := range others {
		q := w.mustGet(o)
		if q.DeletionTimestamp != nil || disruptionTarget(q) != nil {
			t.Errorf("%s was preempted", o)
		}
		if got := w.reasons(o); slices.Contains(got, "Preempted") {
			t.Errorf("%s has a Preempted event", o)
		}
	}
	if d := podCalls("DELETE", "", false, s.tap); len(d) > 0 {
		t.Errorf("scheduler deleted pods: %v", d)
	}
}

// wantEvent checks an event's type, action, note and reporting controller.
func wantEvent(t *testing.T, ev eventsv1.Event, typ, action, note, controller string) {
	t.Helper()
	if ev.Type != typ || ev.Action != action || ev.Note != note || ev.ReportingController != controller {
		t.Errorf("%s event about %s:\n got type=%q action=%q controller=%q note=%q\nwant type=%q action=%q controller=%q note=%q",
			ev.Reason, ev.Regarding.Name, ev.Type, ev.Action, ev.ReportingController, ev.Note, typ, action, controller, note)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// testPDB runs upstream's TestPDBInPreemption cases, plus one where the
// node with fewer budget violations wins over lower-priority victims.
func testPDB(t *testing.T, e *env) {
	type existing struct {
		name, node, pc string
		labels         map[string]string
	}
	type budget struct {
		name         string
		minAvailable int
		selector     map[string]string
	}
	cases := []struct {
		name     string
		nodes    int
		pdbs     []budget
		pods     []existing
		cpu      string // preemptor's request
		wantNode string
		wantGone []string
	}{{
		name:  "non-violating-pod-preempted-despite-higher-priority",
		nodes: 1,
		pdbs:  []budget{{"pdb-1", 2, map[string]string{"foo": "bar"}}},
		pods: []existing{
			{"low-pod1", "node-1", low, map[string]string{"foo": "bar"}},
			{"low-pod2", "node-1", low, map[string]string{"foo": "bar"}},
			{"mid-pod3", "node-1", medium, nil},
		},
		cpu: "300m", wantNode: "node-1", wantGone: []string{"mid-pod3"},
	}, {
		name:  "node-without-violations-preferred",
		nodes: 2,
		pdbs:  []budget{{"pdb-1", 2, map[string]string{"foo": "bar"}}},
		pods: []existing{
			{"low-pod1", "node-1", low, map[string]string{"foo": "bar"}},
			{"mid-pod2", "node-2", medium, nil},
		},
		cpu: "500m", wantNode: "node-2", wantGone: []string{"mid-pod2"},
	}, {
		name:  "node-with-fewer-violations-preferred-upstream",
		nodes: 3,
		pdbs: []budget{
			{"pdb-1", 2, map[string]string{"foo1": "bar"}},
			{"pdb-2", 2, map[string]string{"foo2": "bar"}},
		},
		pods: []existing{
			{"low-pod1", "node-1", low, map[string]string{"foo1": "bar"}},
			{"mid-pod1", "node-1", medium, nil},
			{"low-pod2", "node-2", low, map[string]string{"foo2": "bar"}},
			{"mid-pod2", "node-2", medium, map[string]string{"foo2": "bar"}},
			{"low-pod4", "node-3", low, map[string]string{"foo2": "bar"}},
			{"low-pod5", "node-3", low, map[string]string{"foo2": "bar"}},
			{"low-pod6", "node-3", low, map[string]string{"foo2": "bar"}},
		},
		cpu: "500m", wantNode: "node-3", wantGone: []string{"low-pod4", "low-pod5", "low-pod6"},
	}, {
		// node-1's victims have the lowest priority but would break the
		// budget twice; node-2's break it once.
		name:  "node-with-fewer-violations-preferred",
		nodes: 2,
		pdbs:  []budget{{"guard", 3, map[string]string{"app": "guarded"}}},
		pods: []existing{
			{"g-1", "node-1", low, map[string]string{"app": "guarded"}},
			{"g-2", "node-1", low, map[string]string{"app": "guarded"}},
			{"g-3", "node-2", medium, map[string]string{"app": "guarded"}},
			{"m-4", "node-2", medium, nil},
		},
		cpu: "500m", wantNode: "node-2", wantGone: []string{"g-3", "m-4"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := e.world(t)
			for i := 1; i <= tc.nodes; i++ {
				w.node(smallNode(fmt.Sprint("node-", i)))
			}
			var names []string
			for i, p := range tc.pods {
				b := reprievetest.Pod("", p.name).PriorityClass(p.pc).Req("100m", "100")
				for k, v := range p.labels {
					b.Label(k, v)
				}
				w.running(b.Obj(), p.node, at(i))
				names = append(names, p.name)
			}
			w.waitRunning(names...)
			for _, b := range tc.pdbs {
				matching := 0
				for _, p := range tc.pods {
					if labelsMatch(b.selector, p.labels) {
						matching++
					}
				}
				minAvailable := intstr.FromInt32(int32(b.minAvailable))
				allowed := max(0, matching-b.minAvailable)
				w.pdb(&policyv1.PodDisruptionBudget{
					ObjectMeta: metav1.ObjectMeta{Name: b.name},
					Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: b.selector}},
				}, int32(allowed), int32(matching), int32(matching))
			}
			s := w.startScheduler(schedOpts{})
			w.pod(reprievetest.Pod("", "preemptor").PriorityClass(high).Req(tc.cpu, "200").Obj())
			if got := w.waitNominated("preemptor"); got != tc.wantNode {
				t.Errorf("preemptor nominated to %s, want %s", got, tc.wantNode)
			}
			if got := w.waitBound("preemptor"); got != tc.wantNode {
				t.Errorf("preemptor bound to %s, want %s", got, tc.wantNode)
			}
			var survivors []string
			for _, n := range names {
				if !slices.Contains(tc.wantGone, n) {
					survivors = append(survivors, n)
				}
			}
			wantVictims(t, w, s, tc.wantGone, survivors)
		})
	}
}

func labelsMatch(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
