// Package report renders a simulation as one self-contained HTML page: the
// headline numbers, a per-node timeline of every pod, nomination and
// preemption, the number of pending pods over time and the event log.
//
// The page has inline CSS and SVG only (no scripts, nothing fetched); hover
// details are SVG <title> tooltips. The same result always renders to the
// same bytes.
package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/adapter/sim"
)

// maxEvents is how many events the log shows; the JSON output has them all.
const maxEvents = 5000

// builtinClasses are the PriorityClasses every cluster has.
var builtinClasses = map[string]int32{
	"system-cluster-critical": 2000000000,
	"system-node-critical":    2000001000,
}

// Write writes the report for res, the result of simulating sc.
func Write(w io.Writer, sc *sim.Scenario, res *sim.Result) error {
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, buildPage(sc, res)); err != nil {
		return fmt.Errorf("rendering report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

type page struct {
	Name        string
	Description string
	Meta        []string
	Cards       []card
	Waits       []waitRow
	Legend      template.HTML
	Timeline    template.HTML
	Pending     template.HTML
	Notices     []string
	Replicas    []replicaRow
	Events      []sim.Event
	EventsTotal int
	Warnings    int
	EventsOpen  bool
}

type card struct {
	Label, Value, Hint string
	Bad                bool // a non-zero count of something unwanted
}

type waitRow struct {
	Priority      int32
	Classes       string
	Color, Border string
	Scheduled     int
	Pending       int // pending at the end
	P50, P90, P99 string
}

func buildPage(sc *sim.Scenario, res *sim.Result) *page {
	s := res.Summary
	p := &page{Name: s.Scenario}
	end := res.EndSeconds
	if sc != nil {
		p.Name, p.Description = sc.Name, sc.Description
	}
	if p.Name == "" {
		p.Name = "simulation"
	}
	if !(end > 0) {
		end = 1
	}
	classes := priorityClassNames(sc)
	swatches := priorityColors(res.Pods, classes)
	colors := map[int32]swatch{}
	for _, sw := range swatches {
		colors[sw.Priority] = sw
	}

	p.Meta = append(p.Meta, fmt.Sprintf("seed %d", s.Seed), "virtual duration "+fmtDur(res.EndSeconds))
	if sc != nil {
		p.Meta = append(p.Meta, "starts "+sc.Start.UTC().Format("2006-01-02 15:04:05Z"))
	}
	p.Meta = append(p.Meta, plural(distinctNodes(res), "node"), plural(len(res.Pods), "pod"), plural(len(res.Events), "event"), s.Costs.String())

	p.Cards = []card{
		{Label: "pods (at start + created)", Value: fmt.Sprint(s.PodsCreated), Hint: "pods in the scenario at the start and created during the run"},
		{Label: "pods scheduled", Value: fmt.Sprint(s.PodsScheduled)},
		{Label: "pending at end", Value: fmt.Sprint(s.PodsPendingAtEnd), Bad: s.PodsPendingAtEnd > 0},
		{Label: "peak pending", Value: fmt.Sprint(s.PeakPending)},
		{Label: "scheduling attempts", Value: fmt.Sprint(s.SchedulingAttempts)},
		{Label: "preemption attempts", Value: fmt.Sprint(s.PreemptionAttempts), Hint: "scheduling attempts that ran preemption"},
		{Label: "preemptions", Value: fmt.Sprint(s.Preemptions), Hint: "preemption attempts that picked a node"},
		{Label: "pods preempted", Value: fmt.Sprint(s.PodsPreempted), Hint: "distinct pods evicted by preemption"},
		{Label: "victims chosen", Value: fmt.Sprint(s.Victims), Hint: "victims of every preemption; a terminating pod chosen again counts again"},
		{Label: "PDB violations", Value: fmt.Sprint(s.PDBViolations), Bad: s.PDBViolations > 0},
		{Label: "group disruptions", Value: fmt.Sprint(s.GroupDisruptions), Bad: s.GroupDisruptions > 0},
		{Label: "nominations lost", Value: fmt.Sprint(s.NominationsLost), Bad: s.NominationsLost > 0, Hint: "nominations cleared or moved before the pod was bound there"},
		{Label: "cascades", Value: fmt.Sprint(s.PreemptionCascades), Bad: s.PreemptionCascades > 0, Hint: "preemptions by a pod created to replace a victim"},
		{Label: "victim runtime lost", Value: fmtDur(s.VictimRuntimeLostS), Hint: "how long the victims had been running when preempted, summed"},
	}
	// One row per priority a pod had, highest first.
	waits := map[int32]sim.PriorityWaits{}
	for _, w := range s.TimeToSchedule {
		waits[w.Priority] = w
	}
	pendingAtEnd := map[int32]int{}
	for _, pod := range res.Pods {
		if pod.Bound == nil && pod.Gone == nil {
			pendingAtEnd[pod.Priority]++
		}
	}
	for _, sw := range swatches {
		row := waitRow{Priority: sw.Priority, Classes: sw.Classes, Color: sw.Fill, Border: sw.Base,
			Pending: pendingAtEnd[sw.Priority], P50: "–", P90: "–", P99: "–"}
		if w, ok := waits[sw.Priority]; ok {
			row.Scheduled, row.P50, row.P90, row.P99 = w.Scheduled, fmtDur(w.P50), fmtDur(w.P90), fmtDur(w.P99)
		}
		p.Waits = append(p.Waits, row)
	}

	win := activityWindow(end, res)
	t := layoutTimeline(res, end, win, 0)
	ctx := &svgContext{colors: colors, classes: classes, preemptors: preemptors(res.Events), id: "t-"}
	p.Legend = template.HTML(legendHTML(swatches))
	p.Timeline = template.HTML(t.svg(ctx))
	p.Pending = template.HTML(pendingSVG(res.Pending, t.g))
	p.Notices = append(p.Notices, windowNotices(t, win, end)...)
	var left []string
	if t.hiddenRows > 0 {
		left = append(left, fmt.Sprintf("%s that would need more than %d rows in a node's lane", plural(t.hiddenRows, "bar"), maxRows))
	}
	if t.hiddenPending > 0 {
		left = append(left, fmt.Sprintf("%s that would need more than %d rows in the pending lane", plural(t.hiddenPending, "wait"), maxRows))
	}
	if t.hiddenBudget > 0 {
		left = append(left, fmt.Sprintf("%s beyond the first %d", plural(t.hiddenBudget, "bar"), maxBars))
	}
	if len(left) > 0 {
		p.Notices = append(p.Notices, "The timeline leaves out "+strings.Join(left, ", and ")+"; the JSON output (-o json) has every pod.")
	}

	p.Replicas = replicaRows(res.Replicas)
	p.EventsTotal = len(res.Events)
	p.Events = res.Events[:min(len(res.Events), maxEvents)]
	for _, e := range res.Events {
		if e.Type == "Warning" {
			p.Warnings++
		}
	}
	p.EventsOpen = len(res.Events) <= 500
	return p
}

// windowNotices say what the timeline leaves out: nodes beyond maxLanes,
// and the time outside the window of activity.
func windowNotices(t *timeline, win window, end float64) []string {
	var out []string
	if t.totalNodes > maxLanes {
		out = append(out, fmt.Sprintf("The timeline shows the %d most preempted of %d nodes (then the most nominated, then the busiest).", maxLanes, t.totalNodes))
	}
	if win.from > 0 || win.to < end {
		out = append(out, fmt.Sprintf("The charts show %s to %s, from the first event to the last, of the %s run; drag across a chart to zoom in, double-click to zoom out.", fmtClock(win.from), fmtClock(win.to), fmtDur(end)))
	}
	return out
}

// distinctNodes counts the node names of the result.
func distinctNodes(res *sim.Result) int {
	names := make([]string, 0, len(res.Nodes))
	for _, n := range res.Nodes {
		names = append(names, n.Name)
	}
	slices.Sort(names)
	return len(slices.Compact(names))
}

// priorityClassNames maps priority values to the names of the classes with
// that value, from the scenario's objects and the built-in classes.
func priorityClassNames(sc *sim.Scenario) map[int32][]string {
	out := map[int32][]string{}
	addSet := func(s *manifest.Set) {
		if s == nil {
			return
		}
		for _, pc := range s.Objects.PriorityClasses {
			out[pc.Value] = append(out[pc.Value], pc.Name)
		}
	}
	if sc != nil {
		addSet(sc.Objects)
		for _, a := range sc.Actions {
			addSet(a.Create)
		}
	}
	for name, v := range builtinClasses {
		out[v] = append(out[v], name)
	}
	for v, names := range out {
		slices.Sort(names)
		out[v] = slices.Compact(names)
	}
	return out
}

// preemptors maps each victim ("namespace/name") to the pods its Preempted
// events name as related ("namespace/name"), in order.
func preemptors(events []sim.Event) map[string][]string {
	out := map[string][]string{}
	for _, e := range events {
		if e.Reason != "Preempted" || e.Related == "" {
			continue
		}
		name, ok := strings.CutPrefix(e.Object, "pod/")
		by, pod := strings.CutPrefix(e.Related, "pod/")
		if !ok || !pod {
			continue
		}
		key, by := e.Namespace+"/"+name, e.RelatedNamespace+"/"+by
		if !slices.Contains(out[key], by) {
			out[key] = append(out[key], by)
		}
	}
	return out
}

// legendHTML explains the timeline's colours and marks.
func legendHTML(swatches []swatch) string {
	var b strings.Builder
	b.WriteString(`<div class="legend"><span class="legend-title">priority</span>`)
	for _, sw := range swatches {
		label := fmt.Sprint(sw.Priority)
		if sw.Classes != "" {
			label += " " + sw.Classes
		}
		fmt.Fprintf(&b, `<span class="key"><i class="box" style="background:%s;border-color:%s"></i>%s</span>`, sw.Fill, sw.Base, esc(label))
	}
	b.WriteString(`</div>` + "\n" + `<div class="legend"><span class="legend-title">pods</span>`)
	b.WriteString(`<span class="key"><i class="box grace"></i>terminating</span>`)
	fmt.Fprintf(&b, `<span class="key"><b class="x" style="color:%s">✕</b>preempted</span>`, colorPreempt)
	b.WriteString(`<span class="key"><i class="box waiting"></i>pending (bottom lane)</span>`)
	b.WriteString(`</div>` + "\n" + `<div class="legend"><span class="legend-title">nominated</span>`)
	for _, o := range []struct{ outcome, label string }{
		{"bound", "kept: the pod was bound there"},
		{"lost", "lost: cleared, or the room taken by another pod"},
		{"open", "still nominated at the end"},
	} {
		c := outcomeColor(o.outcome)
		fmt.Fprintf(&b, `<span class="key"><i class="box dashed" style="border-color:%s;background:%s"></i>%s</span>`, c, mix(c, 0.07), o.label)
	}
	b.WriteString(`</div>` + "\n" + `<div class="legend"><span class="legend-title">nodes</span>`)
	fmt.Fprintf(&b, `<span class="key"><i class="tick" style="background:%s"></i>added</span><span class="key"><i class="tick" style="background:%s"></i>removed</span><span class="key"><i class="box" style="background:%s;border-color:%s;border-width:3px 0 0 0"></i>cordoned</span><span class="key"><i class="box absent"></i>absent</span>`, colorAdded, colorRemoved, mix(colorCordon, 0.1), colorCordon)
	b.WriteString(`</div>` + "\n")
	return b.String()
}
