package integration

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/reprieve/reprieve/pkg/reprievetest"
)

// TestBenchPreemption is a wall-clock benchmark in the spirit of upstream's
// scheduler_perf PreemptionBasic: nodes filled with low-priority pods, then
// preemptors of higher priority that each need room (five victims). It
// runs only when asked for: REPRIEVE_INTEGRATION_BENCH=1, or -run naming
// it. Sizes: REPRIEVE_BENCH_NODES (200), REPRIEVE_BENCH_PODS (4000),
// REPRIEVE_BENCH_PREEMPTORS (200), a tenth of each with
// REPRIEVE_INTEGRATION_BENCH=quick; REPRIEVE_BENCH_PREBOUND=1 creates the
// low-priority pods already bound instead of having reprieve schedule them.
func TestBenchPreemption(t *testing.T) {
	if os.Getenv("REPRIEVE_INTEGRATION_BENCH") == "" && !runNames("TestBenchPreemption") {
		t.Skip("benchmark: set REPRIEVE_INTEGRATION_BENCH=1 or use -run TestBenchPreemption")
	}
	// Upstream-like sizes; REPRIEVE_INTEGRATION_BENCH=quick divides them by 10.
	scale := 1
	if os.Getenv("REPRIEVE_INTEGRATION_BENCH") == "quick" {
		scale = 10
	}
	numNodes := envInt(t, "REPRIEVE_BENCH_NODES", 200/scale)
	numLow := envInt(t, "REPRIEVE_BENCH_PODS", 4000/scale)
	numPreemptors := envInt(t, "REPRIEVE_BENCH_PREEMPTORS", 200/scale)
	prebound := os.Getenv("REPRIEVE_BENCH_PREBOUND") != ""
	perNode := (numLow + numNodes - 1) / numNodes
	// Every node holds perNode low pods of 4000m/perNode CPU: full. A
	// preemptor asks for a quarter of a node.
	lowCPU := fmt.Sprintf("%dm", 4000/perNode)
	victimsPer := (1000 + 4000/perNode - 1) / (4000 / perNode)

	e := newEnv(t, envOptions{noKubelet: true})
	w := e.world(t)
	ctx := context.Background()

	start := time.Now()
	parallel(t, numNodes, 8, func(i int) error {
		w.node(reprievetest.Node(fmt.Sprintf("node-%03d", i)).CPU("4").Memory("32Gi").Pods(110).Zone(fmt.Sprint("zone-", i%3)))
		return nil
	})
	t.Logf("created %d nodes in %v", numNodes, time.Since(start).Round(time.Millisecond))

	tracker := newBindTracker(t, w)
	grace := int64(0)
	lowPod := func(i int) *v1.Pod {
		p := w.podSpec(mkPod(fmt.Sprintf("low-%05d", i), low, lowCPU).Req("", "500Mi").Obj())
		p.Spec.TerminationGracePeriodSeconds = &grace
		return p
	}
	create := func(n int, mk func(int) *v1.Pod) time.Duration {
		start := time.Now()
		parallel(t, n, 16, func(i int) error {
			_, err := w.Admin.CoreV1().Pods(w.ns).Create(ctx, mk(i), metav1.CreateOptions{})
			return err
		})
		return time.Since(start)
	}

	var s *runningScheduler
	if prebound {
		d := create(numLow, func(i int) *v1.Pod {
			p := lowPod(i)
			p.Spec.NodeName = fmt.Sprintf("node-%03d", i/perNode)
			return p
		})
		t.Logf("created %d pre-bound low-priority pods in %v (%.0f pods/s)", numLow, d.Round(time.Millisecond), float64(numLow)/d.Seconds())
		s = w.startScheduler(schedOpts{})
	} else {
		d := create(numLow, lowPod)
		t.Logf("created %d pending low-priority pods in %v (%.0f pods/s)", numLow, d.Round(time.Millisecond), float64(numLow)/d.Seconds())
		t0 := time.Now()
		s = w.startScheduler(schedOpts{})
		synced := time.Since(t0)
		tracker.waitBound(t, numLow, 10*time.Minute)
		d = time.Since(t0)
		t.Logf("BENCH scheduling: %d pods on %d nodes in %v (caches synced after %v): %.1f pods/s",
			numLow, numNodes, d.Round(time.Millisecond), synced.Round(time.Millisecond), float64(numLow)/(d-synced).Seconds())
	}

	// Preemptors.
	t1 := time.Now()
	created := create(numPreemptors, func(i int) *v1.Pod {
		return w.podSpec(mkPod(fmt.Sprintf("preemptor-%04d", i), high, "1").Req("", "500Mi").Obj())
	})
	tracker.waitBound(t, numLow+numPreemptors, 10*time.Minute)
	d := time.Since(t1)
	// Victims are the pods deleted; a preemptor retried before the
	// scheduler's informer saw its victims go may delete them again, which
	// the API server answers with 404 (upstream's scheduler does the same).
	victims := sum(podCalls("DELETE", "", true, s.tap))
	repeated := sum(podCalls("DELETE", "", false, s.tap)) - victims
	t.Logf("BENCH preemption: %d preemptors (created in %v) bound in %v: %.1f preemptors/s; %d victims (want %d), %d repeated deletes: %.1f preemptions/s",
		numPreemptors, created.Round(time.Millisecond), d.Round(time.Millisecond), float64(numPreemptors)/d.Seconds(),
		victims, numPreemptors*victimsPer, repeated, float64(victims)/d.Seconds())
	// A preemptor retried before the scheduler's cache has seen its own
	// victims go finds them still there, not marked as terminating (with
	// a grace period of 0 they vanish at once), and may preempt again
	// elsewhere. The window is the informer's lag; allow 5% for it.
	if want := numPreemptors * victimsPer; victims < want || victims > want+want/20 {
		t.Errorf("%d victims, want %d (at most 5%% more)", victims, want)
	}
	refused := map[int]int{}
	for _, c := range s.tap.All() {
		if _, _, sub, ok := parsePodPath(c.Path); ok && sub == "binding" && (c.Code < 200 || c.Code > 299) {
			refused[c.Code]++
		}
	}
	t.Logf("bindings refused by the API server, by status code: %v", refused)
	logMetrics(t, s)
}

// bindTracker counts the world's pods that got bound, from an informer.
type bindTracker struct {
	mu    sync.Mutex
	seen  map[types.UID]bool
	bound atomic.Int64
}

func newBindTracker(t *testing.T, w *world) *bindTracker {
	bt := &bindTracker{seen: map[types.UID]bool{}}
	f := informers.NewSharedInformerFactoryWithOptions(w.Admin, 0, informers.WithNamespace(w.ns))
	inf := f.Core().V1().Pods().Informer()
	note := func(o any) {
		p := o.(*v1.Pod)
		if p.Spec.NodeName == "" {
			return
		}
		bt.mu.Lock()
		if !bt.seen[p.UID] {
			bt.seen[p.UID] = true
			bt.bound.Add(1)
		}
		bt.mu.Unlock()
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: note, UpdateFunc: func(_, o any) { note(o) }})
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
