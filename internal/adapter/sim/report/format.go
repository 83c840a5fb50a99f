package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/reprieve/reprieve/internal/adapter/sim"
)

// esc escapes text for HTML element content and quoted attribute values.
func esc(s string) string { return html.EscapeString(s) }

// num formats a coordinate with at most one decimal, so output is short and
// byte-for-byte stable.
func num(v float64) string {
	r := math.Round(v*10) / 10
	if r == 0 {
		r = 0 // no "-0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// duration converts seconds to a duration rounded to the millisecond:
// never negative, the longest for any too long (sim.Seconds).
func duration(seconds float64) time.Duration {
	return sim.Seconds(seconds).Round(time.Millisecond)
}

// fmtDur prints seconds compactly: "0s", "1.5s", "4m30s", "10m", "1h5m".
func fmtDur(seconds float64) string {
	s := duration(seconds).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// fmtClock prints seconds since the start as h:mm:ss, with milliseconds
// only when there are any.
func fmtClock(seconds float64) string {
	ms := duration(seconds).Milliseconds()
	neg := ""
	if ms < 0 {
		neg, ms = "-", -ms
	}
	s := fmt.Sprintf("%s%d:%02d:%02d", neg, ms/3600000, ms/60000%60, ms/1000%60)
	if ms%1000 != 0 {
		s += fmt.Sprintf(".%03d", ms%1000)
	}
	return s
}

// truncate shortens s to at most n runes, ending it with "…" when cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	return string(r[:n-1]) + "…"
}

// timeSteps are the tick intervals, in seconds, the time axis chooses from.
var timeSteps = []float64{
	0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5,
	1, 2, 5, 10, 15, 30,
	60, 120, 300, 600, 900, 1800,
	3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600,
	86400, 2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400,
}

// timeTicks returns tick times within [from, to], at most maxTicks+1 of
// them, on a round interval.
func timeTicks(from, to float64, maxTicks int) []float64 {
	maxTicks = max(maxTicks, 1)
	span := to - from
	step := 0.0
	for _, s := range timeSteps {
		if span/s <= float64(maxTicks) {
			step = s
			break
		}
	}
	if step == 0 {
		step = math.Ceil(span/float64(maxTicks)/86400) * 86400
	}
	var out []float64
	for k := math.Ceil(from/step - 1e-9); ; k++ {
		t := k * step
		if t > to+span*1e-9 {
			break
		}
		out = append(out, t)
	}
	return out
}

// window is the span of time, in seconds since the start, that a report's
// charts show.
type window struct{ from, to float64 }

// activityWindow is the span from the first event of the results to their
// last (the pending series too), a little padded, within [0, end]: a run
// whose activity is over in seconds is not drawn on its hour's axis. It is
// the whole run when the activity covers most of it.
func activityWindow(end float64, results ...*sim.Result) window {
	first, last := math.Inf(1), math.Inf(-1)
	see := func(t float64) {
		first, last = math.Min(first, t), math.Max(last, t)
	}
	for _, r := range results {
		for _, e := range r.Events {
			see(e.Time.Seconds())
			see(e.LastTime().Seconds())
		}
		for _, s := range r.Pending {
			see(s.At)
		}
	}
	whole := window{0, end}
	if math.IsInf(first, 1) {
		return whole
	}
	span := math.Max(last-first, math.Max(end/1000, 0.001))
	pad := span * 0.04
	w := window{from: math.Max(0, first-pad), to: math.Min(end, first+span+pad)}
	// Round the window out to a twentieth of its span, on a round step.
	unit := timeSteps[0]
	for _, s := range timeSteps {
		if s <= span/20 {
			unit = s
		}
	}
	w.from = math.Floor(w.from/unit) * unit
	w.to = math.Min(end, math.Ceil(w.to/unit)*unit)
	if w.from < span*0.15 {
		w.from = 0
	}
	if w.to-w.from > end*0.8 {
		return whole
	}
	return w
}

// countTicks returns integer ticks from 0 covering peak with at most
// maxTicks intervals, and the axis maximum.
func countTicks(peak, maxTicks int) (ticks []int, top int) {
	step := 1
	for base := 1; ; base *= 10 {
		found := false
		for _, m := range []int{1, 2, 5} {
			if s := base * m; (peak+s-1)/s <= maxTicks {
				step, found = s, true
				break
			}
		}
		if found {
			break
		}
	}
	top = max((peak+step-1)/step*step, step)
	for v := 0; v <= top; v += step {
		ticks = append(ticks, v)
	}
	return ticks, top
}
