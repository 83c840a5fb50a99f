package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/reprieve/reprieve/pkg/sim"
)

const (
	chartH   = 170 // plot height of the pending chart
	chartTop = 14
	// maxStepTips is how many steps of the pending chart get a tooltip.
	maxStepTips = 1000
	lineColor   = "#4c78a8"
)

// pendingSVG draws the number of pending pods over time as a step chart on
// the timeline's time axis.
func pendingSVG(samples []sim.Sample, g geometry) string {
	peak := 0
	for _, s := range samples {
		peak = max(peak, s.Pending)
	}
	yTicks, top := countTicks(peak, 5)
	height := chartTop + chartH + axisH + 4
	y := func(v int) float64 { return chartTop + chartH - float64(v)/float64(top)*chartH }
	base := y(0)

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="pending" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="Pending pods over time">`+"\n", svgWidth, height, svgWidth, height)
	ticks := timeTicks(g.end, int(g.plotW/90))
	b.WriteString(`<g class="grid">`)
	for _, tk := range ticks {
		fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%s"/>`, num(g.x(tk)), chartTop, num(g.x(tk)), num(base))
	}
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

	// The step line; samples that land on the same half pixel become one
	// vertical stroke, so the path stays small for long runs.
	var line strings.Builder
	fmt.Fprintf(&line, "M%s %s", num(g.x(0)), num(base))
	lastX, lastV := math.NaN(), 0
	for _, s := range samples {
		x := math.Round(g.x(s.At)*2) / 2
		if x != lastX {
			fmt.Fprintf(&line, "H%s", num(x))
			lastX = x
		}
		if s.Pending != lastV {
			fmt.Fprintf(&line, "V%s", num(y(s.Pending)))
			lastV = s.Pending
		}
	}
	fmt.Fprintf(&line, "H%s", num(g.x(g.end)))
	path := line.String()
	fmt.Fprintf(&b, `<path class="area" d="%sV%sZ" fill="%s"/>`+"\n", path, num(base), mix(lineColor, 0.18))
	fmt.Fprintf(&b, `<path class="step" d="%s" fill="none" stroke="%s"/>`+"\n", path, lineColor)
	fmt.Fprintf(&b, `<line class="frame" x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", num(g.labelW), num(base), num(g.labelW+g.plotW), num(base))

	// Tooltips: one transparent band per step.
	if len(samples) <= maxStepTips {
		b.WriteString(`<g class="tips">`)
		for i, s := range samples {
			to := g.end
			if i+1 < len(samples) {
				to = samples[i+1].At
			}
			x0, x1 := g.x(s.At), g.x(to)
			if x1-x0 < 0.5 {
				continue
			}
			fmt.Fprintf(&b, `<rect x="%s" y="%d" width="%s" height="%s"><title>%s – %s: %d pending</title></rect>`,
				num(x0), chartTop, num(x1-x0), num(base-chartTop), fmtClock(s.At), fmtClock(to), s.Pending)
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
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/><text class="peak" x="%s" y="%s" text-anchor="%s">%s</text>`+"\n",
				num(x), num(y(peak)), lineColor, num(x+dx), num(y(peak)-6), anchor, esc(text))
			break
		}
	}
	b.WriteString("</svg>")
	return b.String()
}
