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

// limiter is client-go's token bucket in virtual time, kept as the
// theoretical arrival time of the next call (GCRA) so that it is exact in
// integer nanoseconds: a call at t goes at once while fewer than burst
// calls are ahead of the refill, else when a token is refilled.
type limiter struct {
	off       bool
	interval  time.Duration // 1/QPS
	tolerance time.Duration // (burst-1) intervals
	tat       time.Time
}

func newLimiter(m CostModel) *limiter {
	if m.QPS < 0 {
		return &limiter{off: true}
	}
	interval := time.Duration(math.Round(float64(time.Second) / m.QPS))
	return &limiter{interval: interval, tolerance: time.Duration(max(m.Burst, 1)-1) * interval}
}

// take returns when a call wanted at t may go.
func (l *limiter) take(t time.Time) time.Time {
	if l.off {
		return t
	}
	if l.tat.Before(t) {
		l.tat = t
	}
	at := t
	if ahead := l.tat.Sub(t); ahead > l.tolerance {
		at = l.tat.Add(-l.tolerance)
	}
	l.tat = l.tat.Add(l.interval)
	return at
}
