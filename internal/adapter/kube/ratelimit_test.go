package kube

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"
)

// grants records the order in which requests started by start were
// granted tokens.
type grants struct {
	mu    sync.Mutex
	order []int
	wg    sync.WaitGroup
	l     *urgentFirstLimiter // the limiter of the last start
}

// start makes request i wait for a token in a goroutine and returns once it
// is queued.
func (g *grants) start(ctx context.Context, t *testing.T, l *urgentFirstLimiter, i int) {
	t.Helper()
	queued := func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.queues[urgentQueue]) + len(l.queues[ordinaryQueue])
	}
	before := queued()
	g.l = l
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := l.Wait(ctx); err == nil {
			g.mu.Lock()
			g.order = append(g.order, i)
			g.mu.Unlock()
		}
	}()
	for queued() == before {
		time.Sleep(time.Millisecond)
	}
}

// queued is how many requests wait in the limiter of the last start.
func (g *grants) queued() int {
	g.l.mu.Lock()
	defer g.l.mu.Unlock()
	return len(g.l.queues[urgentQueue]) + len(g.l.queues[ordinaryQueue])
}

// granted returns the requests granted so far, in order.
func (g *grants) granted() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.order...)
}

// step advances the clock by d and waits until n requests were granted.
// It first waits until the limiter, if requests still queue, has armed its
// timer on clk: a grant is seen (its request returns) before the limiter,
// still serving, arms the timer for the next token, which a step taken in
// between would then never reach.
func (g *grants) step(t *testing.T, clk *testingclock.FakeClock, d time.Duration, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for g.l != nil && !clk.HasWaiters() && g.queued() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("requests queue but the limiter has armed no timer")
		}
		time.Sleep(time.Millisecond)
	}
	clk.Step(d)
	for len(g.granted()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %d granted (%v), want %d", d, len(g.granted()), g.granted(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestUrgentFirstLimiter(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	l := newUrgentFirstLimiter(10, 2, clk) // a token every 100 ms, burst 2
	ctx := context.Background()
	// The burst is free at once.
	for range 2 {
		if !l.TryAccept() {
			t.Fatal("the burst was not available")
		}
	}
	if l.TryAccept() {
		t.Fatal("a third token within the burst")
	}
	var g grants
	// Three ordinary requests queue, then an urgent one.
	for i := range 3 {
		g.start(ctx, t, l, i)
	}
	g.start(urgent(ctx), t, l, 3)
	if got := g.granted(); len(got) != 0 {
		t.Fatalf("granted %v before any token came due", got)
	}
	g.step(t, clk, 100*time.Millisecond, 1)
	if got := g.granted(); got[0] != 3 {
		t.Fatalf("first granted %v, want the urgent request 3", got)
	}
	// Another urgent request arriving now still goes before the ordinary
	// ones queued earlier.
	g.start(urgent(ctx), t, l, 4)
	g.step(t, clk, 100*time.Millisecond, 2)
	g.step(t, clk, 100*time.Millisecond, 3)
	g.step(t, clk, 100*time.Millisecond, 4)
	g.step(t, clk, 100*time.Millisecond, 5)
	g.wg.Wait()
	want := []int{3, 4, 0, 1, 2}
	if got := g.granted(); !slices.Equal(got, want) {
		t.Errorf("grant order %v, want %v (urgent first, then first come first served)", got, want)
	}
	// Idle time refills up to the burst, no more.
	clk.Step(10 * time.Second)
	n := 0
	for l.TryAccept() {
		n++
	}
	if n != 2 {
		t.Errorf("%d tokens after a long idle time, want the burst 2", n)
	}
}

// TestUrgentFirstLimiterCancel: a waiter whose context ends leaves the
// queue, and the token it would have had goes to the next one.
func TestUrgentFirstLimiterCancel(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	l := newUrgentFirstLimiter(10, 1, clk)
	if !l.TryAccept() {
		t.Fatal("no burst")
	}
	var g grants
	ctx, cancel := context.WithCancel(context.Background())
	g.start(ctx, t, l, 0)
	g.start(context.Background(), t, l, 1)
	cancel()
	for {
		l.mu.Lock()
		n := len(l.queues[ordinaryQueue])
		l.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	g.step(t, clk, 100*time.Millisecond, 1)
	g.wg.Wait()
	if got := g.granted(); !slices.Equal(got, []int{1}) {
		t.Errorf("granted %v, want only 1 (0 gave up)", got)
	}
}

// TestUrgentFirstLimiterRate holds the limiter to its budget: over a run of
// steps with requests always waiting, no more than burst + qps × elapsed
// tokens are granted, and no fewer than qps × elapsed.
func TestUrgentFirstLimiterRate(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	const qps, burst = 50, 5
	l := newUrgentFirstLimiter(qps, burst, clk)
	var g grants
	const requests = 60
	for i := range requests {
		ctx := context.Background()
		if i%3 == 0 {
			ctx = urgent(ctx)
		}
		if l.TryAccept() {
			// Served at once from the burst.
			g.mu.Lock()
			g.order = append(g.order, i)
			g.mu.Unlock()
			continue
		}
		g.start(ctx, t, l, i)
	}
	if got := len(g.granted()); got != burst {
		t.Fatalf("%d granted at once, want the burst %d", got, burst)
	}
	for s := 1; s <= 20; s++ {
		clk.Step(50 * time.Millisecond) // 2.5 tokens a step
		time.Sleep(5 * time.Millisecond)
		elapsed := float64(s) * 0.05
		got := len(g.granted())
		if float64(got) > burst+qps*elapsed+1e-9 {
			t.Fatalf("after %.2fs %d granted, budget %.1f", elapsed, got, burst+qps*elapsed)
		}
	}
	g.step(t, clk, 2*time.Second, requests)
	g.wg.Wait()
}

// TestWithBindingsFirst installs the limiter only where client-go's own
// would apply.
func TestWithBindingsFirst(t *testing.T) {
	if got := WithBindingsFirst(&rest.Config{QPS: 50, Burst: 100}); got.RateLimiter == nil || got.RateLimiter.QPS() != 50 {
		t.Errorf("QPS 50: rate limiter %v", got.RateLimiter)
	}
	if got := WithBindingsFirst(&rest.Config{QPS: -1}); got.RateLimiter != nil {
		t.Errorf("QPS -1 (no limit): a rate limiter was installed")
	}
}
