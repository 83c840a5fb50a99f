package report

import "html/template"

// zoomBar is the line above a timeline that says which window the charts
// show and zooms out.
const zoomBar = `<div class="zoombar"><span class="zoom-label"></span> <button type="button" data-zoom="home">activity</button> <button type="button" data-zoom="all">whole run</button> <span class="zoom-help">drag across a chart to zoom in, double-click to zoom out</span></div>`

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="reprieve simulate">
<title>{{.Name}} · reprieve simulation</title>
<style>` + css + `</style>
</head>
<body>
<main>
<header class="panel">
<div class="kicker">reprieve simulation</div>
<h1>{{.Name}}</h1>
{{if .Description}}<p class="description">{{.Description}}</p>
{{end}}<p class="meta">{{range $i, $m := .Meta}}{{if $i}} · {{end}}<span>{{$m}}</span>{{end}}</p>
<div class="cards">
{{range .Cards}}<div class="card{{if .Bad}} bad{{end}}"{{if .Hint}} title="{{.Hint}}"{{end}}><div class="value">{{.Value}}</div><div class="label">{{.Label}}</div></div>
{{end}}</div>
{{if .Waits}}<h2>Time to schedule</h2>
<table class="waits">
<thead><tr><th>priority</th><th>class</th><th class="n">scheduled</th><th class="n">p50</th><th class="n">p90</th><th class="n">p99</th><th class="n">pending at end</th></tr></thead>
<tbody>
{{range .Waits}}<tr><td><i class="box" style="background:{{.Color}};border-color:{{.Border}}"></i>{{.Priority}}</td><td>{{.Classes}}</td><td class="n">{{.Scheduled}}</td><td class="n">{{.P50}}</td><td class="n">{{.P90}}</td><td class="n">{{.P99}}</td><td class="n{{if .Pending}} bad{{end}}">{{.Pending}}</td></tr>
{{end}}</tbody>
</table>
{{end}}</header>
{{range .Notices}}<p class="notice">{{.}}</p>
{{end}}{{if .Replicas}}<section class="panel">
<h2>Preempted replicas</h2>
<p class="help">StatefulSet replicas that were preempted, and what became of the replica re-created with the same name and claims.</p>
<table class="replicas">
<thead><tr><th>replica</th><th>preempted</th><th>afterwards</th><th>why pending</th><th>volumes</th></tr></thead>
<tbody>
{{range .Replicas}}<tr><td class="obj">{{.Pod}}</td><td>at {{.Preempted}} on {{.Node}}{{if .PreemptedBy}} by {{.PreemptedBy}}{{end}}</td><td{{if .Bad}} class="bad"{{end}}>{{.Fate}}</td><td>{{.Why}}</td><td>{{range .Volumes}}<div>{{.}}</div>{{end}}</td></tr>
{{end}}</tbody>
</table>
</section>
{{end}}<section class="panel">
<h2>Nodes over time</h2>
<p class="help">One lane per node; each bar is a pod from the moment it was bound until it was gone. Hover over a bar for its details.</p>
{{.Legend}}
` + zoomBar + `
<div class="chart">{{.Timeline}}</div>
</section>
<section class="panel">
<h2>Pending pods</h2>
<div class="chart">{{.Pending}}</div>
</section>
<section class="panel">
<details{{if .EventsOpen}} open{{end}}>
<summary><h2>Events</h2> <span class="count">{{.EventsTotal}} events{{if .Warnings}}, <span class="warn-count">{{.Warnings}} warnings</span>{{end}}{{if lt (len .Events) .EventsTotal}}; the first {{len .Events}} are shown{{end}}</span></summary>
<table class="events">
<thead><tr><th>time</th><th>namespace</th><th>type</th><th>reason</th><th>object</th><th>message</th></tr></thead>
<tbody>
{{range .Events}}<tr{{if eq .Type "Warning"}} class="warn"{{end}}><td class="time">{{.At}}{{with .Series}}<div class="related">×{{.Count}}, last {{.LastObservedAt}}</div>{{end}}</td><td>{{.Namespace}}</td><td><span class="type">{{.Type}}</span></td><td>{{.Reason}}</td><td class="obj">{{.Object}}{{if .Related}}<div class="related">↳ {{.Related}}{{if ne .RelatedNamespace .Namespace}} in {{.RelatedNamespace}}{{end}}</div>{{end}}</td><td>{{.Message}}</td></tr>
{{else}}<tr><td colspan="6" class="none">no events</td></tr>
{{end}}</tbody>
</table>
</details>
</section>
</main>
<script>` + zoomScript + `</script>
</body>
</html>
`))

const css = `
:root { --ink: #1f2937; --muted: #6b7280; --line: #e5e7eb; --bg: #f3f4f6; --bad: #b42318; --mono: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1372px; margin: 0 auto; padding: 20px 16px 40px; }
.panel { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 18px 20px; margin-bottom: 16px; box-shadow: 0 1px 2px rgba(0,0,0,.04); }
.kicker { font-size: 11px; letter-spacing: .08em; text-transform: uppercase; color: var(--muted); }
h1 { margin: 2px 0 4px; font-size: 26px; font-family: var(--mono); font-weight: 700; }
h2 { margin: 0 0 10px; font-size: 16px; font-weight: 650; }
header h2 { margin-top: 18px; }
.description { margin: 0 0 6px; font-size: 15px; }
.meta { margin: 0 0 14px; color: var(--muted); font-size: 13px; }
.help { margin: -4px 0 10px; color: var(--muted); font-size: 13px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(148px, 1fr)); gap: 8px; }
.card { border: 1px solid var(--line); border-left: 4px solid #cbd5e1; border-radius: 6px; padding: 8px 12px; background: #fcfcfd; }
.card .value { font-size: 22px; font-weight: 700; font-variant-numeric: tabular-nums; }
.card .label { font-size: 12px; color: var(--muted); }
.card.bad { border-left-color: var(--bad); background: #fef3f2; }
.card.bad .value { color: var(--bad); }
table { border-collapse: collapse; font-size: 13px; }
th { text-align: left; font-weight: 600; color: var(--muted); border-bottom: 1px solid var(--line); padding: 5px 10px; background: #fff; }
td { padding: 4px 10px; border-bottom: 1px solid #f0f1f3; vertical-align: top; }
td.bad { color: var(--bad); font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
.waits td:first-child { font-variant-numeric: tabular-nums; white-space: nowrap; }
i.box { display: inline-block; width: 14px; height: 11px; border: 1.5px solid; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
i.box.grace { border-color: #888; background: repeating-linear-gradient(135deg, #fff 0 2px, #c9c9c9 2px 4.5px); }
i.box.dashed { border-style: dashed; }
i.box.waiting { border-color: #888; background: #f3f3f3; }
i.box.absent { border-color: #cfd4da; background: repeating-linear-gradient(135deg, #f1f3f5 0 3px, #dde1e6 3px 5px); }
i.tick { display: inline-block; width: 3px; height: 13px; margin: 0 7px 0 4px; vertical-align: -2px; }
b.x { margin-right: 5px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: center; font-size: 12.5px; margin-bottom: 6px; }
.legend-title { font-size: 11px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); width: 64px; }
.key { white-space: nowrap; }
.key .sub { color: var(--muted); margin-right: 6px; }
.key i.box + i.box, .key .tick { margin-left: 4px; }
.chart { overflow-x: auto; margin-top: 8px; }
.zoombar { display: flex; gap: 8px; align-items: center; font-size: 12.5px; color: var(--muted); margin: 8px 0 0; }
.zoombar .zoom-label { color: var(--ink); font-variant-numeric: tabular-nums; }
.zoombar button { font: inherit; font-size: 12px; padding: 1px 9px; border: 1px solid #cbd5e1; border-radius: 5px; background: #f8fafc; cursor: pointer; }
.zoombar button:hover { background: #eef2f7; }
svg.zoomable { cursor: crosshair; user-select: none; }
svg .zoom-sel { fill: rgba(76,120,168,.15); stroke: #4c78a8; stroke-width: 1; pointer-events: none; }
.notice { background: #fffbeb; border: 1px solid #fcd34d; border-radius: 8px; padding: 8px 14px; margin: 0 0 16px; }
svg { display: block; font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
svg .grid line { stroke: #eceef1; stroke-width: 1; }
svg .frame { stroke: #c4c9d0; stroke-width: 1; }
svg .lane-sep { stroke: #e3e6ea; stroke-width: 1; }
svg .axis text { font-size: 11px; fill: var(--muted); text-anchor: middle; font-variant-numeric: tabular-nums; }
svg .axis-y text { text-anchor: end; }
svg .lane-name { font: 600 12px var(--mono); fill: var(--ink); }
svg .pending-name { font-style: italic; fill: var(--muted); }
svg .lane-sub { font: 10px var(--mono); fill: var(--muted); }
svg .hidden-count { fill: var(--bad); }
svg .bar-label, svg .nom-label { font: 11px var(--mono); pointer-events: none; }
svg .bar-label { fill: #111827; paint-order: stroke; stroke: rgba(255,255,255,.75); stroke-width: 2.5px; stroke-linejoin: round; }
svg .nom-label { paint-order: stroke; stroke: #fff; stroke-width: 2.5px; stroke-linejoin: round; font-weight: 600; }
svg .pod rect, svg .wait rect { stroke-width: 1; }
svg .pod rect.run { rx: 2px; }
svg .nom rect { stroke-width: 1.5; stroke-dasharray: 5 3; rx: 2px; }
svg .wait rect { stroke-dasharray: 2 2; }
svg .pod:hover rect, svg .wait:hover rect { stroke-width: 2; }
svg .nom:hover rect { stroke-width: 2.5; }
svg .preempt-halo { stroke: #fff; stroke-width: 5; stroke-linecap: round; fill: none; }
svg .preempt { stroke: ` + colorPreempt + `; stroke-width: 2.2; stroke-linecap: round; fill: none; }
svg .node-mark line { stroke-width: 2; }
svg .step { stroke-width: 2; stroke-linejoin: round; }
svg .tips rect { fill: transparent; }
svg .tips rect:hover { fill: rgba(76,120,168,.10); }
svg .peak { font-size: 11px; fill: #374151; font-weight: 600; }
details > summary { cursor: pointer; list-style: none; display: flex; align-items: baseline; gap: 10px; }
details > summary::-webkit-details-marker { display: none; }
details > summary::before { content: "▸"; color: var(--muted); }
details[open] > summary::before { content: "▾"; }
details > summary h2 { display: inline; margin: 0; }
.count { color: var(--muted); font-size: 13px; }
.warn-count { color: #b45309; font-weight: 600; }
table.events { width: 100%; margin-top: 10px; }
.events thead th { position: sticky; top: 0; }
.events td.time { font-family: var(--mono); font-size: 12px; white-space: nowrap; color: var(--muted); }
.events td.obj { font-family: var(--mono); font-size: 12px; white-space: nowrap; }
.related { color: var(--muted); }
td.none { color: var(--muted); font-style: italic; }
.events .type { font-size: 11px; padding: 1px 6px; border-radius: 8px; background: #eef2f7; color: #475569; }
.events tr.warn td { background: #fff8eb; }
.events tr.warn .type { background: #fde68a; color: #7c2d12; font-weight: 600; }
`
