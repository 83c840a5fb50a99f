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

	"github.com/reprieve/reprieve/internal/adapter/config"
	"github.com/reprieve/reprieve/internal/adapter/kube"
	"github.com/reprieve/reprieve/internal/reprievetest"
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
	runBurst(t).checkLatency(t)
}

// TestBurstAsShipped is TestBenchPreemption's burst at 200 nodes (800
// pending pods, then 200 preemptors), run by default: the scheduler as
// shipped — leader election on, kube-scheduler's client settings — must
// keep its lease through the backlog of bindings and bind every pod with
// exactly the victims needed.
func TestBurstAsShipped(t *testing.T) {
	if os.Getenv("REPRIEVE_INTEGRATION_BENCH") != "" || runNames("TestBenchPreemption") {
		t.Skip("TestBenchPreemption runs the same burst")
	}
	runBurst(t)
}

// runBurst runs TestBenchPreemption's burst and checks its counts.
func runBurst(t *testing.T) benchResult {
	defNodes := 200
	if os.Getenv("REPRIEVE_INTEGRATION_BENCH") == "quick" {
		defNodes = 20
	}
	numNodes := envInt(t, "REPRIEVE_BENCH_NODES", defNodes)
	cc := config.DefaultConnection().ClientConnection
	if os.Getenv("REPRIEVE_BENCH_QPS") != "" {
		cc.QPS = float32(envInt(t, "REPRIEVE_BENCH_QPS", 0))
	}
	if os.Getenv("REPRIEVE_BENCH_BURST") != "" {
		cc.Burst = int32(envInt(t, "REPRIEVE_BENCH_BURST", 0))
	}
	e := newEnv(t, envOptions{noKubelet: true})
	r := runPreemptionBasic(t, e, numNodes, cc, false)
	r.check(t)
	return r
}

// TestBenchUpstream runs the PreemptionBasic shape of TestBenchPreemption
// with kube-scheduler v1.37.2 (in-process) and with reprieve on the same
// kind of API server, interleaved (upstream, reprieve, upstream, ...), each
// run on a fresh etcd and API server, in two pairings: kube-scheduler's
// client defaults on both sides (QPS 50, burst 100) and raised settings on
// both (QPS 200, burst 400). It logs every run and a table of medians with
// the ratio reprieve/upstream. Opt-in: REPRIEVE_BENCH=1 or -run naming it.
// REPRIEVE_BENCH_SIZES (default "200,1000") and REPRIEVE_BENCH_ROUNDS (3)
// choose the sizes and the runs per side.
func TestBenchUpstream(t *testing.T) {
	if os.Getenv("REPRIEVE_BENCH") == "" && !runNames("TestBenchUpstream") {
		t.Skip("benchmark: set REPRIEVE_BENCH=1 or use -run TestBenchUpstream")
	}
	sizes := []int{200, 1000}
	if s := os.Getenv("REPRIEVE_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				t.Fatalf("REPRIEVE_BENCH_SIZES=%q: want positive integers separated by commas", s)
			}
			sizes = append(sizes, n)
		}
	}
	rounds := envInt(t, "REPRIEVE_BENCH_ROUNDS", 3)
	pairings := []struct {
		qps   float32
		burst int32
	}{{50, 100}, {200, 400}}
	type key struct {
		nodes    int
		qps      float32
		upstream bool
	}
	results := map[key][]benchResult{}
	for _, nodes := range sizes {
		for _, p := range pairings {
			cc := config.DefaultConnection().ClientConnection
			cc.QPS, cc.Burst = p.qps, p.burst
			for round := range rounds {
				for _, upstream := range []bool{true, false} {
					name := fmt.Sprintf("%s/nodes=%d/qps=%g/run=%d", side(upstream), nodes, p.qps, round+1)
					t.Run(name, func(t *testing.T) {
						e := newEnv(t, envOptions{noKubelet: true})
						r := runPreemptionBasic(t, e, nodes, cc, upstream)
						r.check(t)
						k := key{nodes, p.qps, upstream}
						results[k] = append(results[k], r)
					})
				}
			}
		}
	}
	t.Logf("BENCH TABLE (median of %d runs per side; ratio = reprieve / upstream)", rounds)
	t.Logf("| nodes | client QPS/burst | scheduler | init pods/s | preemptors/s | victims | Preempted events | t50 | t99 |")
	for _, nodes := range sizes {
		for _, p := range pairings {
			up, rp := results[key{nodes, p.qps, true}], results[key{nodes, p.qps, false}]
			if len(up) == 0 || len(rp) == 0 {
				continue
			}
			mu, mr := medianResult(up), medianResult(rp)
			for _, r := range []benchResult{mu, mr} {
				t.Logf("| %d | %g/%d | %s | %.1f | %.1f | %d | %d | %v | %v |", nodes, p.qps, p.burst, side(r.upstream), r.initRate, r.preRate, r.victims, r.preempted, r.t50, r.t99)
			}
			t.Logf("| %d | %g/%d | ratio | %.2f | %.2f | | | | |", nodes, p.qps, p.burst, mr.initRate/mu.initRate, mr.preRate/mu.preRate)
		}
	}
}

func side(upstream bool) string {
	if upstream {
		return "upstream"
	}
	return "reprieve"
}

// benchResult is one run of the PreemptionBasic shape.
type benchResult struct {
	upstream      bool
	nodes         int
	initRate      float64
	preRate       float64
	victims, need int
	twice         int // victims deleted more than once; -1 if unknown (upstream's calls are not tapped)
	preempted     int
	t50, t99      time.Duration
}

// check fails t if victims, Preempted events and victims needed differ, if
// a victim was deleted twice, or if t99 exceeds a second.
func (r benchResult) check(t *testing.T) {
	t.Helper()
	if r.victims != r.need || r.twice > 0 || r.preempted != r.need {
		t.Errorf("%s: victims deleted %d (%d more than once), Preempted events %d: want %d each, no victim deleted twice", side(r.upstream), r.victims, r.twice, r.preempted, r.need)
	}
}

// checkLatency fails if a preemptor's time from its last victim gone to
// its binding has a 99th percentile above a second (benchmarks only: a
// test must not depend on the machine's speed).
func (r benchResult) checkLatency(t *testing.T) {
	t.Helper()
	if !r.upstream && r.t99 > time.Second {
		t.Errorf("t99 from last victim gone to bound = %v, want ≤ 1s", r.t99)
	}
}

// medianResult returns, field by field, the median of rs (rates, counts
// and latencies taken independently).
func medianResult(rs []benchResult) benchResult {
	m := rs[0]
	medF := func(f func(benchResult) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	m.initRate = medF(func(r benchResult) float64 { return r.initRate })
	m.preRate = medF(func(r benchResult) float64 { return r.preRate })
	m.victims = int(medF(func(r benchResult) float64 { return float64(r.victims) }))
	m.preempted = int(medF(func(r benchResult) float64 { return float64(r.preempted) }))
	m.t50 = time.Duration(medF(func(r benchResult) float64 { return float64(r.t50) }))
	m.t99 = time.Duration(medF(func(r benchResult) float64 { return float64(r.t99) }))
	return m
}

// runPreemptionBasic runs the PreemptionBasic shape on e with numNodes
// nodes, scheduled by reprieve (upstream false, client settings cc) or by
// kube-scheduler v1.37.2 (upstream true, the same QPS and burst). Init
// pods/s is measured from the first init pod bound to the last (both
// schedulers start with every init pod pending); preemptors/s from the
// first preemptor created to the last bound.
func runPreemptionBasic(t *testing.T, e *env, numNodes int, cc config.ClientConnection, upstream bool) benchResult {
	t.Helper()
	const perNode, victimsPer = 4, 3
	numInit, numPreemptors := perNode*numNodes, numNodes
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
	var s *runningScheduler
	if upstream {
		w.startUpstream(t, cc)
	} else {
		// As shipped: leader election on, with kube-scheduler's lease
		// settings (15 s, renewed within 10 s, retried every 2 s).
		s = w.startScheduler(schedOpts{clientConnection: &cc})
	}
	tracker.waitBound(t, numInit, 10*time.Minute, s)
	initDur := tracker.span("init-")
	initRate := float64(numInit-1) / initDur.Seconds()

	t1 := time.Now()
	created := create(numPreemptors, func(i int) *v1.Pod {
		return w.podSpec(reprievetest.Pod("", fmt.Sprintf("preemptor-%04d", i)).PriorityClass(prio10.Name).Req("3000m", "500Mi").Obj())
	})
	tracker.waitBound(t, numInit+numPreemptors, 10*time.Minute, s)
	preDur := time.Since(t1)
	preRate := float64(numPreemptors) / preDur.Seconds()

	need := numPreemptors * victimsPer
	twice := -1
	if s != nil {
		twice = 0
		for _, n := range podCalls("DELETE", "", true, s.tap) {
			if n > 1 {
				twice++
			}
		}
	}
	// Preempted events go out asynchronously through the broadcasters.
	var preempted []eventsv1.Event
	deadline := time.Now().Add(10 * time.Second)
	for {
		preempted = preemptedEvents(t, w)
		if len(preempted) >= tracker.gone() || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	victims := tracker.gone()
	lags := tracker.lastVictimToBound(preempted)
	t50, t99 := percentile(lags, 50), percentile(lags, 99)
	t.Logf("last victim gone to bound: t90 %v, max %v", percentile(lags, 90), percentile(lags, 100))
	if os.Getenv("REPRIEVE_BENCH_DEBUG") != "" {
		tracker.debug(t, preempted, t1)
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	t.Logf("BENCH PreemptionBasic %s, %d nodes, client QPS %g burst %d: init %d pods in %v: %.1f pods/s; preemption %d preemptors (created in %v) bound in %v: %.1f preemptors/s; victims %d (needed %d, %d deleted more than once), Preempted events %d; last victim gone to bound: t50 %v, t99 %v (%d preemptors); peak RSS of the test process %d MiB",
		side(upstream), numNodes, cc.QPS, cc.Burst, numInit, initDur.Round(time.Millisecond), initRate,
		numPreemptors, created.Round(time.Millisecond), preDur.Round(time.Millisecond), preRate,
		victims, need, twice, len(preempted), t50, t99, len(lags), ru.Maxrss/1024)
	if s != nil {
		logMetrics(t, s)
	}
	return benchResult{upstream: upstream, nodes: numNodes, initRate: initRate, preRate: preRate,
		victims: victims, need: need, twice: twice, preempted: len(preempted), t50: t50, t99: t99}
}

// shippedLeaderElection is the leader election the product runs with by
// default (config.DefaultConnection), on a lease of the world's namespace.
func shippedLeaderElection(w *world, identity string) *kube.LeaderElection {
	le := config.DefaultConnection().LeaderElection
	return &kube.LeaderElection{Namespace: w.ns, Name: "reprieve", Identity: identity,
		LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
		ReleaseOnCancel: true}
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
	byUID   map[string]string // pod UID to name
	bound   atomic.Int64
}

func newBindTracker(t *testing.T, w *world) *bindTracker {
	bt := &bindTracker{boundAt: map[string]time.Time{}, goneAt: map[string]time.Time{}, byUID: map[string]string{}}
	f := informers.NewSharedInformerFactoryWithOptions(w.Admin, 0, informers.WithNamespace(w.ns))
	inf := f.Core().V1().Pods().Informer()
	note := func(o any) {
		p := o.(*v1.Pod)
		bt.mu.Lock()
		bt.byUID[string(p.UID)] = p.Name
		bt.mu.Unlock()
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

func (bt *bindTracker) waitBound(t *testing.T, n int, timeout time.Duration, s *runningScheduler) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for bt.bound.Load() < int64(n) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d pods bound after %v", bt.bound.Load(), n, timeout)
		}
		if s != nil {
			select {
			case <-s.done:
				t.Fatalf("the scheduler exited with %d of %d pods bound: %v", bt.bound.Load(), n, s.err)
			default:
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// span returns the time from the first to the last binding of the pods
// whose names start with prefix.
func (bt *bindTracker) span(prefix string) time.Duration {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	var first, last time.Time
	for p, b := range bt.boundAt {
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		if first.IsZero() || b.Before(first) {
			first = b
		}
		if b.After(last) {
			last = b
		}
	}
	return last.Sub(first)
}

// gone returns the number of pods seen deleted.
func (bt *bindTracker) gone() int {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	return len(bt.goneAt)
}

// lastVictimToBound returns, for each preemptor named as the related
// object of a Preempted event, the time from its last victim's deletion to
// its binding.
func (bt *bindTracker) lastVictimToBound(preempted []eventsv1.Event) []time.Duration {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	last := map[string]time.Time{}
	for _, ev := range preempted {
		p := bt.preemptor(ev)
		if p == "" {
			continue
		}
		if g, ok := bt.goneAt[ev.Regarding.Name]; ok && g.After(last[p]) {
			last[p] = g
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

// preemptor names the preemptor of a Preempted event: its related object,
// or (kube-scheduler's events carry none here) the pod whose UID the note
// names ("Preempted by pod UID on node N"). bt.mu must be held.
func (bt *bindTracker) preemptor(ev eventsv1.Event) string {
	if ev.Related != nil {
		return ev.Related.Name
	}
	f := strings.Fields(ev.Note)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "pod" {
			return bt.byUID[f[i+1]]
		}
	}
	return ""
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
		p := bt.preemptor(ev)
		r := rows[p]
		if r == nil {
			r = &row{p: p, bound: bt.boundAt[p].Sub(t1)}
			rows[p] = r
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
