package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/reprieve/reprieve/internal/adapter/sim"
)

// Run is one run of a compared scenario: a victim policy, feature gates, or both.
type Run struct {
	// Policy names the run (the victim policy, or the entry of simulate's
	// --compare that set it up).
	Policy string
	// Result is what the run produced.
	Result *sim.Result
}

// policyColors tell the policies apart in the comparison's charts.
var policyColors = []string{"#4c78a8", "#e45756", "#54a24b", "#f58518", "#b279a2", "#72b7b2", "#9d755d", "#79706e"}

// WriteCompare writes one report for runs of the same scenario (sc) and
// seed, one per victim policy or set of feature gates: the headline
// numbers side by side, pending pods and evictions over time with one line
// per run, and each run's per-node timeline, chosen with tabs.
func WriteCompare(w io.Writer, sc *sim.Scenario, runs []Run) error {
	if len(runs) == 0 {
		return fmt.Errorf("rendering report: no runs to compare")
	}
	var buf bytes.Buffer
	if err := compareTemplate.Execute(&buf, buildCompare(sc, runs)); err != nil {
		return fmt.Errorf("rendering report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

type comparePage struct {
	Name, Description string
	Meta              []string
	Policies          []policyKey
	Rows              []compareRow
	Notices           []string
	Pending           template.HTML
	Evictions         template.HTML
	Legend            template.HTML
	Panels            []panel
	TabCSS            template.CSS
}

// policyKey is a policy's name and colour.
type policyKey struct {
	Name, Color string
	Index       int
	Evictions   int
}

// compareRow is one headline number for every policy; Best marks the
// columns with the best value.
type compareRow struct {
	Label, Hint string
	Cells       []compareCell
}

type compareCell struct {
	Value string
	Best  bool
}

// panel is one policy's timeline.
type panel struct {
	Policy   string
	Index    int
	Checked  bool
	Timeline template.HTML
	Notices  []string
}

func buildCompare(sc *sim.Scenario, runs []Run) *comparePage {
	s0 := runs[0].Result.Summary
	p := &comparePage{Name: s0.Scenario}
	if sc != nil {
		p.Name, p.Description = sc.Name, sc.Description
	}
	if p.Name == "" {
		p.Name = "simulation"
	}
	end := runs[0].Result.EndSeconds
	if !(end > 0) {
		end = 1
	}
	policies := "1 run"
	if len(runs) > 1 {
		policies = fmt.Sprintf("%d runs", len(runs))
	}
	p.Meta = []string{fmt.Sprintf("seed %d", s0.Seed), "virtual duration " + fmtDur(end), plural(distinctNodes(runs[0].Result), "node"),
		policies + ", same scenario and seed", s0.Costs.String()}

	results := make([]*sim.Result, len(runs))
	var allPods []sim.PodHistory
	for i, r := range runs {
		results[i] = r.Result
		allPods = append(allPods, r.Result.Pods...)
		p.Policies = append(p.Policies, policyKey{Name: r.Policy, Color: policyColors[i%len(policyColors)], Index: i, Evictions: r.Result.Summary.Victims})
	}
	p.Rows = compareRows(runs)

	win := activityWindow(end, results...)
	classes := priorityClassNames(sc)
	swatches := priorityColors(allPods, classes)
	colors := map[int32]swatch{}
	for _, sw := range swatches {
		colors[sw.Priority] = sw
	}
	// Lay every timeline out twice: the second time with the widest names'
	// column, so that all charts share one time axis.
	labelW := 0.0
	for _, r := range runs {
		labelW = math.Max(labelW, layoutTimeline(r.Result, end, win, 0).g.labelW)
	}
	var g geometry
	for i, r := range runs {
		t := layoutTimeline(r.Result, end, win, labelW)
		g = t.g
		ctx := &svgContext{colors: colors, classes: classes, preemptors: preemptors(r.Result.Events), id: fmt.Sprintf("t%d-", i)}
		pn := panel{Policy: r.Policy, Index: i, Checked: i == 0, Timeline: template.HTML(t.svg(ctx))}
		for _, n := range windowNotices(t, win, end) {
			if !strings.HasPrefix(n, "The charts show") {
				pn.Notices = append(pn.Notices, n)
			}
		}
		p.Panels = append(p.Panels, pn)
	}
	if win.from > 0 || win.to < end {
		p.Notices = append(p.Notices, fmt.Sprintf("The charts show %s to %s, from the first event to the last of any run, of the %s runs; drag across a chart to zoom in, double-click to zoom out.", fmtClock(win.from), fmtClock(win.to), fmtDur(end)))
	}
	var pending, evictions []series
	for i, r := range runs {
		color := p.Policies[i].Color
		pending = append(pending, series{name: r.Policy, color: color, samples: r.Result.Pending})
		evictions = append(evictions, series{name: r.Policy, color: color, samples: evictionSeries(r.Result)})
	}
	p.Pending = template.HTML(stepChart(pending, g, "Pending pods over time, one line per run", "pending"))
	p.Evictions = template.HTML(stepChart(evictions, g, "Evictions over time, one line per run", "evictions"))
	p.Legend = template.HTML(legendHTML(swatches))
	var css strings.Builder
	for i := range runs {
		fmt.Fprintf(&css, "#policy-%d:checked ~ .panels .panel-%d { display: block; }\n#policy-%d:checked ~ .tab-labels label[for=policy-%d] { background: #fff; color: var(--ink); border-bottom-color: #fff; font-weight: 650; }\n", i, i, i, i)
	}
	p.TabCSS = template.CSS(css.String())
	return p
}

// evictionSeries counts a run's evictions (victims chosen) over time: each
// victim's preemption, and again for a terminating victim chosen again.
func evictionSeries(res *sim.Result) []sim.Sample {
	var times []float64
	for _, e := range res.Events {
		if e.Reason == "Preempted" {
			times = append(times, e.Time.Seconds())
		}
	}
	slices.Sort(times)
	out := []sim.Sample{}
	for i, t := range times {
		if n := len(out); n > 0 && out[n-1].At == t {
			out[n-1].Pending = i + 1
			continue
		}
		out = append(out, sim.Sample{At: t, Pending: i + 1})
	}
	return out
}

// compareRows are the headline numbers, one row each, lower being better
// except for pods scheduled.
func compareRows(runs []Run) []compareRow {
	type metric struct {
		label, hint  string
		value        func(r *sim.Result) float64
		format       func(v float64) string
		higherBetter bool
	}
	count := func(v float64) string { return fmt.Sprint(int(v)) }
	top := topPriority(runs)
	wait := func(pick func(w sim.PriorityWaits) float64) func(r *sim.Result) float64 {
		return func(r *sim.Result) float64 {
			for _, w := range r.Summary.TimeToSchedule {
				if w.Priority == top {
					return pick(w)
				}
			}
			return math.NaN()
		}
	}
	metrics := []metric{
		{label: "evictions (victims chosen)", hint: "victims of every preemption", value: func(r *sim.Result) float64 { return float64(r.Summary.Victims) }, format: count},
		{label: "pods preempted", hint: "distinct pods evicted", value: func(r *sim.Result) float64 { return float64(r.Summary.PodsPreempted) }, format: count},
		{label: "preemptions", hint: "preemption attempts that picked a node", value: func(r *sim.Result) float64 { return float64(r.Summary.Preemptions) }, format: count},
		{label: "PDB violations", value: func(r *sim.Result) float64 { return float64(r.Summary.PDBViolations) }, format: count},
		{label: "runtime lost by victims", hint: "how long the victims had been running, summed", value: func(r *sim.Result) float64 { return r.Summary.VictimRuntimeLostS }, format: fmtDur},
		{label: "re-created victims pending at the end", value: func(r *sim.Result) float64 { return float64(replacementsPending(r)) }, format: count},
		{label: "preemption cascades", hint: "preemptions by a pod created to replace a victim", value: func(r *sim.Result) float64 { return float64(r.Summary.PreemptionCascades) }, format: count},
		{label: "pods pending at the end", value: func(r *sim.Result) float64 { return float64(r.Summary.PodsPendingAtEnd) }, format: count},
		{label: "pods scheduled", value: func(r *sim.Result) float64 { return float64(r.Summary.PodsScheduled) }, format: count, higherBetter: true},
	}
	if top != math.MinInt32 {
		metrics = append(metrics,
			metric{label: fmt.Sprintf("time to schedule, priority %d, p50", top), value: wait(func(w sim.PriorityWaits) float64 { return w.P50 }), format: fmtDur},
			metric{label: fmt.Sprintf("time to schedule, priority %d, p99", top), value: wait(func(w sim.PriorityWaits) float64 { return w.P99 }), format: fmtDur})
	}
	var rows []compareRow
	for _, m := range metrics {
		row := compareRow{Label: m.label, Hint: m.hint}
		vals := make([]float64, len(runs))
		best := math.NaN()
		for i, r := range runs {
			vals[i] = m.value(r.Result)
			if math.IsNaN(vals[i]) {
				continue
			}
			if math.IsNaN(best) || m.higherBetter && vals[i] > best || !m.higherBetter && vals[i] < best {
				best = vals[i]
			}
		}
		differ := false
		for _, v := range vals {
			differ = differ || v != vals[0]
		}
		for _, v := range vals {
			c := compareCell{Value: "–"}
			if !math.IsNaN(v) {
				c.Value, c.Best = m.format(v), differ && v == best
			}
			row.Cells = append(row.Cells, c)
		}
		rows = append(rows, row)
	}
	return rows
}

// topPriority is the highest priority with a time to schedule in any run,
// or math.MinInt32.
func topPriority(runs []Run) int32 {
	top := int32(math.MinInt32)
	for _, r := range runs {
		for _, w := range r.Result.Summary.TimeToSchedule {
			top = max(top, w.Priority)
		}
	}
	return top
}

// replacementsPending counts the pods controllers re-created for victims
// that were still pending at the end.
func replacementsPending(r *sim.Result) int {
	n := 0
	for _, h := range r.Pods {
		if h.Replacement && h.Bound == nil && h.Gone == nil {
			n++
		}
	}
	return n
}

var compareTemplate = template.Must(template.New("compare").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="reprieve simulate --compare">
<title>{{.Name}} · reprieve simulation, runs compared</title>
<style>` + css + compareCSS + `{{.TabCSS}}</style>
</head>
<body>
<main>
<header class="panel">
<div class="kicker">reprieve simulation · runs compared</div>
<h1>{{.Name}}</h1>
{{if .Description}}<p class="description">{{.Description}}</p>
{{end}}<p class="meta">{{range $i, $m := .Meta}}{{if $i}} · {{end}}<span>{{$m}}</span>{{end}}</p>
<table class="compare">
<thead><tr><th></th>{{range .Policies}}<th class="n"><i class="line" style="background:{{.Color}}"></i>{{.Name}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr><td{{if .Hint}} title="{{.Hint}}"{{end}}>{{.Label}}</td>{{range .Cells}}<td class="n{{if .Best}} best{{end}}">{{.Value}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
<p class="help">The best value of a row is marked when the runs differ.</p>
</header>
{{range .Notices}}<p class="notice">{{.}}</p>
{{end}}<section class="panel">
<h2>Pending pods</h2>
<div class="legend">{{range .Policies}}<span class="key"><i class="line" style="background:{{.Color}}"></i>{{.Name}}</span>{{end}}</div>
` + zoomBar + `
<div class="chart">{{.Pending}}</div>
</section>
<section class="panel">
<h2>Evictions over time</h2>
<div class="legend">{{range .Policies}}<span class="key"><i class="line" style="background:{{.Color}}"></i>{{.Name}}: {{.Evictions}}</span>{{end}}</div>
<div class="chart">{{.Evictions}}</div>
</section>
<section class="panel">
<h2>Nodes over time</h2>
<p class="help">One lane per node; each bar is a pod from the moment it was bound until it was gone. Choose a policy; hover over a bar for its details.</p>
{{.Legend}}
<div class="tabs">
{{range .Panels}}<input type="radio" name="policy" id="policy-{{.Index}}"{{if .Checked}} checked{{end}}>
{{end}}<div class="tab-labels">{{range .Panels}}<label for="policy-{{.Index}}">{{.Policy}}</label>{{end}}</div>
<div class="panels">
{{range .Panels}}<div class="tab-panel panel-{{.Index}}" data-policy="{{.Policy}}">
{{range .Notices}}<p class="notice">{{.}}</p>
{{end}}<div class="chart">{{.Timeline}}</div>
</div>
{{end}}</div>
</div>
</section>
</main>
<script>` + zoomScript + `</script>
<script>` + tabScript + `</script>
</body>
</html>
`))

// tabScript opens the tab that #policy=NAME in the address names (with
// #policy=NAME&zoom=FROM-TO both apply), so a link can show one policy.
const tabScript = `(function () {
"use strict";
var m = /policy=([^&]+)/.exec(location.hash);
if (!m) { return; }
var name = decodeURIComponent(m[1]);
document.querySelectorAll(".tab-panel").forEach(function (p, i) {
  var input = document.getElementById("policy-" + i);
  if (!input) { return; }
  if (p.dataset.policy === name) { input.checked = true; input.setAttribute("checked", ""); } else { input.removeAttribute("checked"); }
});
})();`

const compareCSS = `
table.compare { margin-top: 4px; font-size: 13.5px; }
table.compare td:first-child { color: var(--ink); padding-right: 24px; }
table.compare th.n { min-width: 110px; }
table.compare td.best { color: #1b7f3b; font-weight: 700; background: #eefaf1; }
i.line { display: inline-block; width: 16px; height: 3px; margin-right: 6px; vertical-align: 3px; border-radius: 2px; }
.tabs > input { position: absolute; opacity: 0; pointer-events: none; }
.tab-labels { display: flex; gap: 4px; border-bottom: 1px solid var(--line); margin-top: 10px; }
.tab-labels label { padding: 5px 14px; border: 1px solid var(--line); border-bottom: none; border-radius: 6px 6px 0 0; background: #f3f4f6; color: var(--muted); cursor: pointer; margin-bottom: -1px; font-family: var(--mono); font-size: 13px; }
.tab-panel { display: none; padding-top: 6px; }
`
