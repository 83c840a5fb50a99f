package integration

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/reprieve/reprieve/pkg/config"
	"github.com/reprieve/reprieve/pkg/reprievetest"
)

// TestBenchPreemption is a wall-clock benchmark of upstream's
// scheduler_perf PreemptionBasic shape, reprieve run as users get it: nodes
// of 4 CPU / 32Gi / 110 pods, four pods of 900m / 500Mi per node at
// priority 0 with terminationGracePeriodSeconds 0 for reprieve to schedule,
// then one preemptor of 3000m / 500Mi at priority 10 per node, each needing
// three victims. The scheduler runs with its default client settings
// (kube-scheduler's: QPS 50, burst 100, protobuf) unless
// REPRIEVE_BENCH_QPS and REPRIEVE_BENCH_BURST say otherwise. It runs only
// when asked for: REPRIEVE_INTEGRATION_BENCH=1, or -run naming it. Sizes:
// REPRIEVE_BENCH_NODES (200; 20 with REPRIEVE_INTEGRATION_BENCH=quick).
//
// It reports init pods/s, preemptors/s, victims deleted, Preempted events,
// and per preemptor the time from its last victim gone (as a watch saw it)
// to its binding, and fails if a victim was deleted twice, if victims or
// Preempted events differ from the three per preemptor needed, or if that
// time's 99th percentile exceeds a second.
func TestBenchPreemption(t *testing.T) {
	if os.Getenv("REPRIEVE_INTEGRATION_BENCH") == "" && !runNames("TestBenchPreemption") {
		t.Skip("benchmark: set REPRIEVE_INTEGRATION_BENCH=1 or use -run TestBenchPreemption")
	}
	defNodes := 200
	if os.Getenv("REPRIEVE_INTEGRATION_BENCH") == "quick" {
		defNodes = 20
	}
	numNodes := envInt(t, "REPRIEVE_BENCH_NODES", defNodes)
	const perNode, victimsPer = 4, 3
	numInit, numPreemptors := perNode*numNodes, numNodes
	cc := config.DefaultConnection().ClientConnection
	if os.Getenv("REPRIEVE_BENCH_QPS") != "" {
		cc.QPS = float32(envInt(t, "REPRIEVE_BENCH_QPS", 0))
	}
	if os.Getenv("REPRIEVE_BENCH_BURST") != "" {
		cc.Burst = int32(envInt(t, "REPRIEVE_BENCH_BURST", 0))
	}

	e := newEnv(t, envOptions{noKubelet: true})
	w := e.world(t)
	ctx := context.Background()
	prio10 := reprievetest.PriorityClass("bench-10-"+w.ns, 10, false, false)
	if _, err := w.Admin.SchedulingV1().PriorityClasses().Create(ctx, prio10, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = w.Admin.SchedulingV1().PriorityClasses().Delete(context.Background(), prio10.Name, metav1.DeleteOptions{})
	})

	start := time.Now()
	parallel(t, numNodes, 8, func(i int) error {
		w.node(reprievetest.Node(fmt.Sprintf("node-%04d", i)).CPU("4").Memory("32Gi").Pods(110))
		return nil
	})
	t.Logf("created %d nodes in %v", numNodes, time.Since(start).Round(time.Millisecond))

	tracker := newBindTracker(t, w)
	grace := int64(0)
	create := func(n int, mk func(int) *v1.Pod) time.Duration {
		start := time.Now()
		parallel(t, n, 16, func(i int) error {
			_, err := w.Admin.CoreV1().Pods(w.ns).Create(ctx, mk(i), metav1.CreateOptions{})
			return err
		})
		return time.Since(start)
	}
	d := create(numInit, func(i int) *v1.Pod {
		p := w.podSpec(reprievetest.Pod("", fmt.Sprintf("init-%05d", i)).Req("900m", "500Mi").Obj())
		p.Spec.TerminationGracePeriodSeconds = &grace
		return p
	})
	t.Logf("created %d pending init pods in %v", numInit, d.Round(time.Millisecond))
	t0 := time.Now()
	s := w.startScheduler(schedOpts{clientConnection: &cc})
	synced := time.Since(t0)
	tracker.waitBound(t, numInit, 10*time.Minute)
	initDur := time.Since(t0) - synced
	initRate := float64(numInit) / initDur.Seconds()

	t1 := time.Now()
	created := create(numPreemptors, func(i int) *v1.Pod {
		return w.podSpec(reprievetest.Pod("", fmt.Sprintf("preemptor-%04d", i)).PriorityClass(prio10.Name).Req("3000m", "500Mi").Obj())
	})
	tracker.waitBound(t, numInit+numPreemptors, 10*time.Minute)
	preDur := time.Since(t1)
	preRate := float64(numPreemptors) / preDur.Seconds()

	need := numPreemptors * victimsPer
	deletes := podCalls("DELETE", "", true, s.tap)
	victims, twice := 0, 0
	for _, n := range deletes {
		victims++
		if n > 1 {
			twice++
		}
	}
	// Preempted events go out asynchronously through the broadcaster.
	var preempted []eventsv1.Event
	deadline := time.Now().Add(10 * time.Second)
	for {
		preempted = preemptedEvents(t, w)
		if len(preempted) >= victims || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	lags := tracker.lastVictimToBound(preempted)
	t50, t99 := percentile(lags, 50), percentile(lags, 99)
	t.Logf("last victim gone to bound: t90 %v, max %v", percentile(lags, 90), percentile(lags, 100))
	if os.Getenv("REPRIEVE_BENCH_DEBUG") != "" {
		tracker.debug(t, preempted, t1)
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	t.Logf("BENCH PreemptionBasic, %d nodes, client QPS %g burst %d: init %d pods in %v: %.1f pods/s; preemption %d preemptors (created in %v) bound in %v: %.1f preemptors/s; victims %d (needed %d, %d deleted more than once), Preempted events %d; last victim gone to bound: t50 %v, t99 %v (%d preemptors); peak RSS of the test process (API server, etcd and scheduler) %d MiB",
		numNodes, cc.QPS, cc.Burst, numInit, initDur.Round(time.Millisecond), initRate,
		numPreemptors, created.Round(time.Millisecond), preDur.Round(time.Millisecond), preRate,
		victims, need, twice, len(preempted), t50, t99, len(lags), ru.Maxrss/1024)
	if victims != need || twice > 0 || len(preempted) != need {
		t.Errorf("victims deleted %d (%d more than once), Preempted events %d: want %d each, no victim deleted twice", victims, twice, len(preempted), need)
	}
	if t99 > time.Second {
		t.Errorf("t99 from last victim gone to bound = %v, want ≤ 1s", t99)
	}
	logMetrics(t, s)
}

// preemptedEvents lists the world's Preempted events.
func preemptedEvents(t *testing.T, w *world) []eventsv1.Event {
	t.Helper()
	list, err := w.Admin.EventsV1().Events(w.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing events: %v", err)
	}
	return slices.DeleteFunc(list.Items, func(ev eventsv1.Event) bool { return ev.Reason != "Preempted" })
}

// percentile returns the p-th percentile of ds (nearest rank), 0 if empty.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)].Round(time.Millisecond)
}

// bindTracker follows the world's pods with an informer: when each was
// first seen bound and when each was seen deleted.
type bindTracker struct {
	mu      sync.Mutex
	boundAt map[string]time.Time
	goneAt  map[string]time.Time
	bound   atomic.Int64
}

func newBindTracker(t *testing.T, w *world) *bindTracker {
	bt := &bindTracker{boundAt: map[string]time.Time{}, goneAt: map[string]time.Time{}}
	f := informers.NewSharedInformerFactoryWithOptions(w.Admin, 0, informers.WithNamespace(w.ns))
	inf := f.Core().V1().Pods().Informer()
	note := func(o any) {
		p := o.(*v1.Pod)
		if p.Spec.NodeName == "" {
			return
		}
		now := time.Now()
		bt.mu.Lock()
		if _, ok := bt.boundAt[p.Name]; !ok {
			bt.boundAt[p.Name] = now
			bt.bound.Add(1)
		}
		bt.mu.Unlock()
	}
	gone := func(o any) {
		p, ok := o.(*v1.Pod)
		if !ok {
			tomb, isTomb := o.(cache.DeletedFinalStateUnknown)
			if p, ok = tomb.Obj.(*v1.Pod); !isTomb || !ok {
				return
			}
		}
		now := time.Now()
		bt.mu.Lock()
		bt.goneAt[p.Name] = now
		bt.mu.Unlock()
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: note, UpdateFunc: func(_, o any) { note(o) }, DeleteFunc: gone})
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	t.Cleanup(func() { cancel(); f.Shutdown() })
	return bt
}

func (bt *bindTracker) waitBound(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for bt.bound.Load() < int64(n) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d pods bound after %v", bt.bound.Load(), n, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lastVictimToBound returns, for each preemptor named as the related
// object of a Preempted event, the time from its last victim's deletion to
// its binding.
func (bt *bindTracker) lastVictimToBound(preempted []eventsv1.Event) []time.Duration {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	last := map[string]time.Time{}
	for _, ev := range preempted {
		if ev.Related == nil {
			continue
		}
		if g, ok := bt.goneAt[ev.Regarding.Name]; ok && g.After(last[ev.Related.Name]) {
			last[ev.Related.Name] = g
		}
	}
	var out []time.Duration
	for p, g := range last {
		if b, ok := bt.boundAt[p]; ok {
			out = append(out, b.Sub(g))
		}
	}
	return out
}

// parallel runs f(0..n-1) on workers goroutines, failing t on any error.
func parallel(t *testing.T, n, workers int, f func(i int) error) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		t.Fatal(err)
	}
}

// logMetrics prints the scheduler's own counters.
func logMetrics(t *testing.T, s *runningScheduler) {
	mfs, err := s.registry.Gather()
	if err != nil {
		t.Logf("metrics: %v", err)
		return
	}
	for _, mf := range mfs {
		name := mf.GetName()
		if !strings.HasPrefix(name, "scheduler_") {
			continue
		}
		unit := ""
		if strings.HasSuffix(name, "_seconds") {
			unit = "s"
		}
		for _, m := range mf.GetMetric() {
			labels := []string{}
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				t.Logf("metric %s{%s} = %v", name, strings.Join(labels, ","), m.GetCounter().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				if h.GetSampleCount() > 0 {
					t.Logf("metric %s{%s}: count %d, mean %.3g%s", name, strings.Join(labels, ","), h.GetSampleCount(), h.GetSampleSum()/float64(h.GetSampleCount()), unit)
				}
			}
		}
	}
}

// runNames reports whether -test.run names test explicitly.
func runNames(test string) bool {
	f := flag.Lookup("test.run")
	return f != nil && strings.Contains(f.Value.String(), test)
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

func (bt *bindTracker) debug(t *testing.T, preempted []eventsv1.Event, t1 time.Time) {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	type row struct {
		p     string
		gone  []time.Duration
		bound time.Duration
	}
	rows := map[string]*row{}
	for _, ev := range preempted {
		r := rows[ev.Related.Name]
		if r == nil {
			r = &row{p: ev.Related.Name, bound: bt.boundAt[ev.Related.Name].Sub(t1)}
			rows[ev.Related.Name] = r
		}
		r.gone = append(r.gone, bt.goneAt[ev.Regarding.Name].Sub(t1))
	}
	var all []*row
	for _, r := range rows {
		all = append(all, r)
	}
	slices.SortFunc(all, func(a, b *row) int { return int(a.bound - b.bound) })
	for _, r := range all {
		t.Logf("DEBUG %s gone %v bound %v", r.p, r.gone, r.bound)
	}
}
