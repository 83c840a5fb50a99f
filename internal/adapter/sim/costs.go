package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/reprieve/reprieve/internal/adapter/config"
)

// DefaultCycleCost is the virtual time one scheduling cycle takes when the
// scenario does not say. It is reprieve's own cycle as measured on a
// 2-core machine: BenchmarkSimulate schedules 3,570 pods per second of
// wall time at 1,000 nodes (0.28 ms per cycle) and BenchmarkPreemptionBasic
// 675 preemptors per second at 5,000 nodes, two cycles each (0.74 ms per
// cycle); 500µs is between the two.
const DefaultCycleCost = 500 * time.Microsecond

// CostModel is what the scheduler's work costs in virtual time: each
// scheduling cycle takes Cycle, and each API call it makes waits for a
// token of a bucket refilled at QPS with room for Burst, as client-go's
// rate limiter of kube-scheduler's client does. The scheduler is one worker:
// the next cycle starts once the previous one and its calls are done.
type CostModel struct {
	// Cycle is the time of one scheduling cycle.
	Cycle time.Duration
	// QPS is the API calls per second once Burst is spent; negative means
	// no limit, 0 unset (Run uses Options' value or config.DefaultQPS).
	QPS float64
	// Burst is how many calls may go at once; 0 means unset
	// (config.DefaultBurst).
	Burst int
}

// FreeCosts is the model in which the scheduler's work takes no virtual
// time: no cycle time and no rate limit.
func FreeCosts() CostModel { return CostModel{QPS: -1} }

// Free reports whether the model costs nothing: no cycle time, no limit.
func (c CostModel) Free() bool { return c.Cycle == 0 && c.QPS < 0 }

// costModel validates and defaults spec.costs; fail builds the error for a
// field.
func costModel(c *Costs, fail func(field, detail string) error) (CostModel, error) {
	m := CostModel{Cycle: DefaultCycleCost}
	if c == nil {
		return m, nil
	}
	if c.Cycle != nil {
		if c.Cycle.Duration < 0 {
			return m, fail("spec.costs.cycle", "must not be negative")
		}
		if c.Cycle.Duration > time.Minute {
			return m, fail("spec.costs.cycle", fmt.Sprintf("%s is longer than a minute: a scheduling cycle takes milliseconds", c.Cycle.Duration))
		}
		m.Cycle = c.Cycle.Duration
	}
	if c.APIQPS != nil {
		q := *c.APIQPS
		if q == 0 || math.IsNaN(q) || math.IsInf(q, 0) || q > 1e9 {
			return m, fail("spec.costs.apiQPS", "must be a positive number of calls per second, or negative for no limit")
		}
		m.QPS = q
	}
	if c.APIBurst != nil {
		if *c.APIBurst < 1 {
			return m, fail("spec.costs.apiBurst", "must be at least 1")
		}
		m.Burst = int(*c.APIBurst)
	}
	return m, nil
}

// resolved fills QPS and Burst left unset from qps and burst (a
// scheduler configuration's clientConnection; 0 means unset there too),
// else kube-scheduler's defaults.
func (c CostModel) resolved(qps float64, burst int) CostModel {
	if c.QPS == 0 {
		c.QPS = qps
	}
	if c.QPS == 0 {
		c.QPS = config.DefaultQPS
	}
	if c.Burst == 0 {
		c.Burst = burst
	}
	if c.Burst == 0 {
		c.Burst = config.DefaultBurst
	}
	return c
}

// limiter is client-go's token bucket in virtual time, kept in integers so
// that it is exact in nanoseconds and cannot overflow, however slow the
// rate: burst tokens at first, one more every interval (1/QPS; the longest
// duration, never, for a rate too slow to hold), a call taking one or
// waiting for the next. Calls come in time order (the scheduler is one
// worker); one wanted before the previous went waits for it.
type limiter struct {
	off      bool
	interval time.Duration
	burst    int64
	// tokens are the whole tokens in the bucket and partial the time
	// towards the next, at last (when a call last took one).
	tokens  int64
	partial time.Duration
	last    time.Time
	started bool
}

func newLimiter(m CostModel) *limiter {
	if m.QPS < 0 {
		return &limiter{off: true}
	}
	burst := int64(max(m.Burst, 1))
	return &limiter{interval: max(Seconds(1/m.QPS), 1), burst: burst, tokens: burst}
}

// take returns when a call wanted at t may go: past any run's end when the
// next token does not come in time.
func (l *limiter) take(t time.Time) time.Time {
	if l.off {
		return t
	}
	if l.started && t.Before(l.last) {
		t = l.last
	}
	if l.started {
		l.refill(t.Sub(l.last))
	}
	l.started, l.last = true, t
	if l.tokens > 0 {
		l.tokens--
		return t
	}
	at := t.Add(l.interval - l.partial)
	l.last, l.partial = at, 0
	return at
}

// refill adds the tokens of elapsed time, up to the burst.
func (l *limiter) refill(elapsed time.Duration) {
	if l.tokens >= l.burst {
		return
	}
	whole, rest := elapsed/l.interval, elapsed%l.interval
	if rest >= l.interval-l.partial { // partial+rest would reach interval, written not to overflow
		whole++
		l.partial = rest - (l.interval - l.partial)
	} else {
		l.partial += rest
	}
	if whole >= time.Duration(l.burst-l.tokens) {
		l.tokens, l.partial = l.burst, 0
		return
	}
	l.tokens += int64(whole)
}
