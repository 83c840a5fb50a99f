package kube

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

// WithBindingsFirst returns a copy of cfg whose client's rate limiter (cfg's
// QPS and Burst, client-go's token bucket) hands the next token to a
// binding-cycle request (Bind, BindVolumes, BindClaims) before the ordinary
// requests already waiting: the preemption calls of later pods, status
// patches. kube-scheduler's client serves them first come, first served, so
// at its default QPS of 50 a preemptor whose victims are gone waits behind
// every delete queued since; here it waits for one token at most. The
// budget is the same: over any interval the client sends no more than
// Burst + QPS × interval requests. A cfg with its own RateLimiter, or with
// QPS ≤ 0 (no limit, or client-go's default), is returned unchanged.
func WithBindingsFirst(cfg *rest.Config) *rest.Config {
	if cfg.RateLimiter != nil || cfg.QPS <= 0 {
		return cfg
	}
	out := rest.CopyConfig(cfg)
	burst := cfg.Burst
	if burst <= 0 {
		burst = rest.DefaultBurst
	}
	out.RateLimiter = newUrgentFirstLimiter(float64(cfg.QPS), burst, clock.RealClock{})
	return out
}

// urgentKey marks a context whose requests go first (see WithBindingsFirst).
type urgentKey struct{}

// urgent returns ctx marked so that its client requests take the next token
// of a limiter made by WithBindingsFirst.
func urgent(ctx context.Context) context.Context {
	return context.WithValue(ctx, urgentKey{}, true)
}

// isUrgent reports whether ctx was marked by urgent.
func isUrgent(ctx context.Context) bool {
	v, _ := ctx.Value(urgentKey{}).(bool)
	return v
}

// urgentFirstLimiter is a token bucket of qps tokens a second holding at
// most burst, with two first-come-first-served queues of waiters: urgent
// ones are served before ordinary ones. It implements client-go's
// flowcontrol.RateLimiter.
type urgentFirstLimiter struct {
	qps   float64
	burst float64
	clock clock.WithDelayedExecution

	mu     sync.Mutex
	tokens float64
	last   time.Time
	// queues are the waiters, urgent first.
	queues [2][]*tokenWaiter
	// armed is the timer that serves the queues when the next token is
	// due, nil when none is.
	armed clock.Timer
}

// tokenWaiter is a request waiting for a token; ready is closed when it
// has one.
type tokenWaiter struct {
	ready   chan struct{}
	granted bool
}

const (
	urgentQueue = iota
	ordinaryQueue
)

var _ flowcontrol.RateLimiter = (*urgentFirstLimiter)(nil)

func newUrgentFirstLimiter(qps float64, burst int, clk clock.WithDelayedExecution) *urgentFirstLimiter {
	return &urgentFirstLimiter{qps: qps, burst: float64(burst), clock: clk, tokens: float64(burst), last: clk.Now()}
}

// refill adds the tokens earned since the last refill. Called with mu held.
func (l *urgentFirstLimiter) refill() {
	now := l.clock.Now()
	if elapsed := now.Sub(l.last).Seconds(); elapsed > 0 {
		l.tokens = min(l.burst, l.tokens+elapsed*l.qps)
	}
	l.last = now
}

// ahead reports whether a waiter already queued goes before a new request
// of queue q. Called with mu held.
func (l *urgentFirstLimiter) ahead(q int) bool {
	for i := 0; i <= q; i++ {
		if len(l.queues[i]) > 0 {
			return true
		}
	}
	return false
}

// serve grants tokens to the waiters in order while there are tokens, and
// arms a timer for the next token when waiters remain. Called with mu held.
func (l *urgentFirstLimiter) serve() {
	l.refill()
	for q := range l.queues {
		for len(l.queues[q]) > 0 && l.tokens >= 1 {
			w := l.queues[q][0]
			l.queues[q] = l.queues[q][1:]
			l.tokens--
			w.granted = true
			close(w.ready)
		}
	}
	if l.armed != nil || !l.ahead(ordinaryQueue) {
		return
	}
	wait := time.Duration((1 - l.tokens) / l.qps * float64(time.Second))
	// The callback reads the clock, which a fake clock holds locked while
	// it runs callbacks: serve from a goroutine of its own.
	l.armed = l.clock.AfterFunc(max(wait, time.Millisecond), func() { go l.onTimer() })
}

// onTimer serves the queues when the armed timer fires.
func (l *urgentFirstLimiter) onTimer() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = nil
	l.serve()
}

// take returns a token at once when one is free and no waiter goes
// first. Called with mu held.
func (l *urgentFirstLimiter) take(q int) bool {
	l.refill()
	if l.ahead(q) || l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}

// Wait blocks until the request may be sent, urgent requests (see urgent)
// before ordinary ones, or until ctx is done.
func (l *urgentFirstLimiter) Wait(ctx context.Context) error {
	q := ordinaryQueue
	if isUrgent(ctx) {
		q = urgentQueue
	}
	l.mu.Lock()
	if l.take(q) {
		l.mu.Unlock()
		return nil
	}
	w := &tokenWaiter{ready: make(chan struct{})}
	l.queues[q] = append(l.queues[q], w)
	l.serve()
	l.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.granted {
		// Granted as the context ended: the token goes to the next waiter.
		l.tokens++
		l.serve()
	} else {
		for i, other := range l.queues[q] {
			if other == w {
				l.queues[q] = append(l.queues[q][:i:i], l.queues[q][i+1:]...)
				break
			}
		}
	}
	return ctx.Err()
}

// TryAccept takes a token if one is free and nobody waits.
func (l *urgentFirstLimiter) TryAccept() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.take(ordinaryQueue)
}

// Accept blocks until an ordinary request may be sent.
func (l *urgentFirstLimiter) Accept() { _ = l.Wait(context.Background()) }

// Stop does nothing: the limiter holds a timer only while requests wait,
// and those are served (or give up with their contexts) as before.
func (l *urgentFirstLimiter) Stop() {}

// QPS is the rate of tokens.
func (l *urgentFirstLimiter) QPS() float32 { return float32(l.qps) }
