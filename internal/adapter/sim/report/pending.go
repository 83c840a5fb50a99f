package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/reprieve/reprieve/internal/adapter/sim"
)

const (
	chartH   = 170 // plot height of the step charts
	chartTop = 14
	// maxStepTips is how many steps of a step chart get a tooltip.
	maxStepTips = 1000
	lineColor   = "#4c78a8"
)

// series is one line of a step chart: a count from each sample's time on.
type series struct {
	name, color string
	samples     []sim.Sample
}

// pendingSVG draws the number of pending pods over time as a step chart on
// the timeline's time axis.
func pendingSVG(samples []sim.Sample, g geometry) string {
	return stepChart([]series{{name: "pending", color: lineColor, samples: samples}}, g, "Pending pods over time", "pending")
}

// stepChart draws counts over time, one step line per series, on the
// timeline's time axis. One series is drawn filled, with a tooltip per step
// and its peak called out; several are lines only, told apart by colour.
func stepChart(all []series, g geometry, label, what string) string {
	peak := 0
	for _, sr := range all {
		for _, s := range sr.samples {
			peak = max(peak, s.Pending)
		}
	}
	yTicks, top := countTicks(peak, 5)
	height := chartTop + chartH + axisH + 4
	y := func(v int) float64 { return chartTop + chartH - float64(v)/float64(top)*chartH }
	base := y(0)
	single := len(all) == 1

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="pending zoomable" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s" %s>`+"\n", svgWidth, height, svgWidth, height, esc(label), g.zoomAttrs())
	ticks := timeTicks(g.from, g.to, int(g.plotW/90))
	writeGrid(&b, g, ticks, chartTop, base)
	b.WriteString(`<g class="grid">`)
	for _, v := range yTicks {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, num(g.labelW), num(y(v)), num(g.labelW+g.plotW), num(y(v)))
	}
	b.WriteString("</g>\n")
	b.WriteString(`<g class="axis axis-y">`)
	for _, v := range yTicks {
		fmt.Fprintf(&b, `<text x="%s" y="%s">%d</text>`, num(g.labelW-8), num(y(v)+4), v)
	}
	b.WriteString("</g>\n")
	writeTimeAxis(&b, g, ticks, base+17, "axis-bottom")

	for i, sr := range all {
		// The points, for the page's script to redraw the line when zoomed.
		var pts strings.Builder
		for i, s := range sr.samples {
			if i > 0 {
				pts.WriteByte(' ')
			}
			pts.WriteString(secNum(s.At) + "," + num(y(s.Pending)))
		}
		path := stepPath(sr.samples, g, y, base)
		if single {
			fmt.Fprintf(&b, `<path class="area" d="%sV%sZ" fill="%s" data-pts="%s" data-base="%s"/>`+"\n", path, num(base), mix(sr.color, 0.18), pts.String(), num(base))
		}
		// Lines drawn later are thinner, so that equal series show as
		// nested stripes rather than hiding one another.
		width := ""
		if !single {
			width = fmt.Sprintf(` style="stroke-width:%spx"`, num(1.5+1.5*float64(len(all)-1-i)))
		}
		fmt.Fprintf(&b, `<path class="step" d="%s" fill="none" stroke="%s"%s data-pts="%s" data-base="%s" data-series="%s"><title>%s</title></path>`+"\n",
			path, sr.color, width, pts.String(), num(base), esc(sr.name), esc(sr.name))
	}
	fmt.Fprintf(&b, `<line class="frame" x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", num(g.labelW), num(base), num(g.labelW+g.plotW), num(base))

	if !single {
		b.WriteString("</svg>")
		return b.String()
	}
	samples := all[0].samples
	// Tooltips: one transparent band per step.
	if len(samples) <= maxStepTips {
		b.WriteString(`<g class="tips">`)
		for i, s := range samples {
			to := g.end
			if i+1 < len(samples) {
				to = samples[i+1].At
			}
			if g.x(to)-g.x(s.At) < 0.5 && (to < g.from || s.At > g.to) {
				continue
			}
			fmt.Fprintf(&b, `<rect %s y="%d" height="%s"><title>%s – %s: %d %s</title></rect>`,
				spanAttrs(g, s.At, to, 0), chartTop, num(base-chartTop), fmtClock(s.At), fmtClock(to), s.Pending, what)
		}
		b.WriteString("</g>\n")
	}
	// Call out the (first) peak.
	for _, s := range samples {
		if s.Pending == peak && peak > 0 {
			x := g.x(s.At)
			text := fmt.Sprintf("peak %d at %s", peak, fmtDur(s.At))
			anchor := "start"
			if x+float64(len(text))*charW+8 > g.labelW+g.plotW {
				anchor = "end"
			}
			dx := 6.0
			if anchor == "end" {
				dx = -6
			}
			fmt.Fprintf(&b, `<g class="mark peak-mark" transform="translate(%s 0)" data-t="%s"><circle cx="0" cy="%s" r="3" fill="%s"/><text class="peak" x="%s" y="%s" text-anchor="%s">%s</text></g>`+"\n",
				num(x), secNum(s.At), num(y(peak)), all[0].color, num(dx), num(y(peak)-6), anchor, esc(text))
			break
		}
	}
	b.WriteString("</svg>")
	return b.String()
}

// stepPath is the step line of samples; samples that land on the same half
// pixel become one vertical stroke, so the path stays small for long runs.
func stepPath(samples []sim.Sample, g geometry, y func(int) float64, base float64) string {
	var line strings.Builder
	fmt.Fprintf(&line, "M%s %s", num(g.x(g.from)), num(base))
	lastX, lastY := math.NaN(), base
	for _, s := range samples {
		x := math.Round(g.x(s.At)*2) / 2
		if x != lastX {
			fmt.Fprintf(&line, "H%s", num(x))
			lastX = x
		}
		if v := y(s.Pending); v != lastY {
			fmt.Fprintf(&line, "V%s", num(v))
			lastY = v
		}
	}
	fmt.Fprintf(&line, "H%s", num(g.x(g.to)))
	return line.String()
}
