package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/reprieve/reprieve/internal/reprievetest"
)

// rsLabel marks the pods of a replicaSet stand-in.
const rsLabel = "integration.reprieve.dev/rs"

// replicaSet stands in for the ReplicaSet controller, which does not run:
// it creates replicas pods from a template and, as the real controller
// does (it counts only pods without a deletionTimestamp), creates one
// replacement as soon as one of its pods starts terminating or disappears.
type replicaSet struct {
	w        *world
	name     string
	template *v1.Pod

	mu       sync.Mutex
	seq      int
	replaced map[types.UID]bool
	// Replacements counts the pods created to replace terminating ones.
	Replacements int
}

func (w *world) replicaSet(name string, replicas int, template *v1.Pod) *replicaSet {
	w.t.Helper()
	rs := &replicaSet{w: w, name: name, template: template, replaced: map[types.UID]bool{}}
	for range replicas {
		if err := rs.create(); err != nil {
			w.t.Fatalf("replicaset %s: %v", name, err)
		}
	}
	f := informers.NewSharedInformerFactoryWithOptions(w.Admin, 0, informers.WithNamespace(w.ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = rsLabel + "=" + name }))
	inf := f.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, o any) {
			if p := o.(*v1.Pod); p.DeletionTimestamp != nil {
				rs.replace(p.UID)
			}
		},
		DeleteFunc: func(o any) {
			if p, ok := o.(*v1.Pod); ok {
				rs.replace(p.UID)
			} else if tomb, ok := o.(cache.DeletedFinalStateUnknown); ok {
				if p, ok := tomb.Obj.(*v1.Pod); ok {
					rs.replace(p.UID)
				}
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	w.t.Cleanup(func() { cancel(); f.Shutdown() })
	return rs
}

func (rs *replicaSet) create() error {
	rs.mu.Lock()
	rs.seq++
	name := fmt.Sprintf("%s-%d", rs.name, rs.seq)
	rs.mu.Unlock()
	p := rs.w.podSpec(rs.template)
	p.Name = name
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[rsLabel] = rs.name
	_, err := rs.w.Admin.CoreV1().Pods(rs.w.ns).Create(context.Background(), p, metav1.CreateOptions{})
	return err
}

func (rs *replicaSet) replace(uid types.UID) {
	rs.mu.Lock()
	if rs.replaced[uid] {
		rs.mu.Unlock()
		return
	}
	rs.replaced[uid] = true
	rs.Replacements++
	rs.mu.Unlock()
	if err := rs.create(); err != nil {
		rs.w.t.Errorf("replicaset %s: creating a replacement: %v", rs.name, err)
	}
}

func (rs *replicaSet) replacements() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.Replacements
}

// pods lists the set's pods.
func (rs *replicaSet) pods() []v1.Pod {
	list, err := rs.w.Admin.CoreV1().Pods(rs.w.ns).List(context.Background(), metav1.ListOptions{LabelSelector: rsLabel + "=" + rs.name})
	if err != nil {
		rs.w.t.Fatalf("listing the pods of %s: %v", rs.name, err)
	}
	return list.Items
}

// testReplicaSetRecreation is modelled on the e2e test "PreemptionExecutionPath
// runs ReplicaSets to verify preemption running path": replica sets of
// three priorities fill a node's extended resource; a pod of a fourth,
// higher priority needs room. Exactly the victims needed are evicted, each
// once; their replacements, re-created at once by the replica set, stay
// pending and never make the preemptor preempt again.
func testReplicaSetRecreation(t *testing.T, e *env) {
	const fake = v1.ResourceName("example.com/fakecpu")
	w := e.world(t)
	w.node(reprievetest.Node("node-1").CPU("8").Memory("8Gi").Pods(110).Alloc(fake, "1000"))
	s := w.startScheduler(schedOpts{})

	tmpl := func(pc, q string) *v1.Pod {
		p := reprievetest.Pod("", "tmpl").PriorityClass(pc).Obj()
		p.Spec.Containers[0].Resources.Requests = v1.ResourceList{fake: mustQuantity(q)}
		p.Spec.Containers[0].Resources.Limits = v1.ResourceList{fake: mustQuantity(q)}
		return withGrace(p, 2)
	}
	// 4×100 (low) + 2×150 (medium) + 1×250 (high) = 950 of 1000.
	rs1 := w.replicaSet("rs1", 4, tmpl(low, "100"))
	rs2 := w.replicaSet("rs2", 2, tmpl(medium, "150"))
	rs3 := w.replicaSet("rs3", 1, tmpl(high, "250"))
	for _, rs := range []*replicaSet{rs1, rs2, rs3} {
		for _, p := range rs.pods() {
			w.waitBound(p.Name)
		}
	}

	// The preemptor needs 400: 50 are free, so the four 100s must go
	// (removing the medium 150s would need three victims of higher
	// priority).
	pre := tmpl(top, "400")
	pre.Name = "preemptor"
	w.pod(pre)
	if got := w.waitBound("preemptor"); got != "node-1" {
		t.Fatalf("preemptor bound to %q", got)
	}
	time.Sleep(settle)

	if got := rs1.replacements(); got != 4 {
		t.Errorf("rs1: %d pods replaced, want 4", got)
	}
	if got := rs2.replacements() + rs3.replacements(); got != 0 {
		t.Errorf("rs2, rs3: %d pods replaced, want 0", got)
	}
	dels := podCalls("DELETE", "", false, s.tap)
	if n := sum(dels); n != 4 {
		t.Errorf("scheduler deleted %d pods (%v), want 4", n, dels)
	}
	for pod, n := range dels {
		if n != 1 {
			t.Errorf("%s deleted %d times", pod, n)
		}
	}
	// The replacements (rs1-5 … rs1-8) are pending, never bound.
	pending := 0
	for _, p := range rs1.pods() {
		if p.Spec.NodeName == "" {
			pending++
		}
	}
	if pending != 4 {
		t.Errorf("%d rs1 pods pending, want the 4 replacements", pending)
	}
	preempted := 0
	for _, rs := range []*replicaSet{rs1, rs2, rs3} {
		for i := 1; i <= 8; i++ {
			for _, ev := range w.events(fmt.Sprintf("%s-%d", rs.name, i)) {
				if ev.Reason == "Preempted" {
					preempted++
				}
			}
		}
	}
	if preempted != 4 {
		t.Errorf("%d Preempted events, want 4", preempted)
	}
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
