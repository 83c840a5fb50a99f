package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/reprieve/reprieve/internal/adapter/sim"
)

// svgContext is what drawing needs besides the layout.
type svgContext struct {
	colors     map[int32]swatch
	classes    map[int32][]string
	preemptors map[string][]string // victim → related objects of its Preempted events
	// id prefixes the chart's ids (patterns, clip), unique in the page.
	id string
}

// svg draws the timeline.
func (t *timeline) svg(c *svgContext) string {
	g := t.g
	height := axisH
	for _, l := range t.lanes {
		if l.pending {
			height += laneGap
		}
		height += int(l.height())
	}
	height += axisH
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="timeline zoomable" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="Per-node timeline" %s>`+"\n", svgWidth, height, svgWidth, height, g.zoomAttrs())
	b.WriteString("<defs>\n")
	for _, p := range sortedSwatches(c.colors) {
		fmt.Fprintf(&b, `<pattern id="%sgrace%d" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fff"/><rect width="3" height="6" fill="%s"/></pattern>`+"\n", c.id, p.index, p.Light)
	}
	fmt.Fprintf(&b, `<pattern id="%sabsent" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#f1f3f5"/><rect width="2" height="8" fill="#dde1e6"/></pattern>`+"\n", c.id)
	fmt.Fprintf(&b, `<clipPath id="%sclip"><rect x="%s" y="0" width="%s" height="%d"/></clipPath>`+"\n", c.id, num(g.labelW), num(g.plotW+1), height)
	b.WriteString("</defs>\n")
	clip := fmt.Sprintf(`clip-path="url(#%sclip)"`, c.id)

	ticks := timeTicks(g.from, g.to, int(g.plotW/90))
	// Lane backgrounds first, then the grid over them, then the bars.
	y := float64(axisH)
	tops := make([]float64, len(t.lanes))
	fmt.Fprintf(&b, `<g class="backdrop">`)
	for i, l := range t.lanes {
		if l.pending {
			y += laneGap
		}
		tops[i] = y
		h := l.height()
		fill := "#ffffff"
		if l.pending {
			fill = "#f7f7fb"
		} else if i%2 == 1 {
			fill = "#fafbfc"
		}
		fmt.Fprintf(&b, `<rect class="lane-bg" x="0" y="%s" width="%d" height="%s" fill="%s"/>`+"\n", num(y), svgWidth, num(h), fill)
		fmt.Fprintf(&b, `<g %s>`, clip)
		for _, a := range l.absent(g.end) {
			fmt.Fprintf(&b, `<rect %s y="%s" height="%s" fill="url(#%sabsent)"><title>%s did not exist from %s to %s</title></rect>`+"\n",
				spanAttrs(g, a[0], a[1], 0), num(y), num(h), c.id, esc(l.name), fmtClock(a[0]), fmtClock(a[1]))
		}
		for _, cd := range l.cordons {
			fmt.Fprintf(&b, `<g class="cordon"><title>%s cordoned (unschedulable) from %s to %s</title><rect %s y="%s" height="%s" fill="%s"/><rect %s y="%s" height="3" fill="%s"/></g>`+"\n",
				esc(l.name), fmtClock(cd[0]), fmtClock(cd[1]), spanAttrs(g, cd[0], cd[1], 0), num(y), num(h), mix(colorCordon, 0.1), spanAttrs(g, cd[0], cd[1], 0), num(y), colorCordon)
		}
		b.WriteString("</g>\n")
		y += h
	}
	b.WriteString("</g>\n")
	bottom := y
	writeGrid(&b, g, ticks, axisH, bottom)
	fmt.Fprintf(&b, `<line class="frame" x1="%s" y1="%d" x2="%s" y2="%s"/>`+"\n", num(g.labelW), axisH, num(g.labelW), num(bottom))
	writeTimeAxis(&b, g, ticks, axisH-7, "axis-top")
	writeTimeAxis(&b, g, ticks, bottom+15, "axis-bottom")

	for i, l := range t.lanes {
		top := tops[i]
		fmt.Fprintf(&b, `<g class="lane" data-node="%s">`+"\n", esc(l.name))
		if i > 0 && !t.lanes[i-1].pending {
			fmt.Fprintf(&b, `<line class="lane-sep" x1="0" y1="%s" x2="%d" y2="%s"/>`+"\n", num(top), svgWidth, num(top))
		}
		t.writeLaneLabel(&b, l, top)
		fmt.Fprintf(&b, `<g class="bars" %s>`+"\n", clip)
		for _, it := range l.items {
			by := top + lanePad + float64(it.row*rowH) + (rowH-barH)/2
			switch it.kind {
			case kindPod:
				writePod(&b, c, g, it, by)
			case kindNomination:
				writeNomination(&b, g, it, by)
			case kindWait:
				writeWait(&b, c, g, it, by)
			}
		}
		for _, a := range l.added {
			writeNodeMark(&b, g, a, top, l.height(), colorAdded, fmt.Sprintf("%s added at %s", l.name, fmtClock(a)))
		}
		for _, r := range l.removed {
			writeNodeMark(&b, g, r, top, l.height(), colorRemoved, fmt.Sprintf("%s removed at %s", l.name, fmtClock(r)))
		}
		b.WriteString("</g>\n</g>\n")
	}
	b.WriteString("</svg>")
	return b.String()
}

// spanAttrs places a rectangle over the times [a, b], less gap pixels at
// its right: its x and width, and the times the page's script redraws it
// from.
func spanAttrs(g geometry, a, b, gap float64) string {
	x0, x1 := g.x(a), g.x(b)
	s := fmt.Sprintf(`x="%s" width="%s" data-a="%s" data-b="%s"`, num(x0), num(math.Max(x1-x0-gap, 1)), secNum(a), secNum(b))
	if gap != 0 {
		s += fmt.Sprintf(` data-gap="%s"`, num(gap))
	}
	return s
}

// secNum formats seconds for a data attribute: to the microsecond.
func secNum(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}

// writeGrid draws the vertical grid lines at the ticks.
func writeGrid(b *strings.Builder, g geometry, ticks []float64, top, bottom float64) {
	fmt.Fprintf(b, `<g class="grid" data-y1="%s" data-y2="%s">`, num(top), num(bottom))
	for _, tk := range ticks {
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, num(g.x(tk)), num(top), num(g.x(tk)), num(bottom))
	}
	b.WriteString("</g>\n")
}

func sortedSwatches(m map[int32]swatch) []swatch {
	out := make([]swatch, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b swatch) int { return cmp.Compare(a.index, b.index) })
	return out
}

func writeTimeAxis(b *strings.Builder, g geometry, ticks []float64, y float64, class string) {
	fmt.Fprintf(b, `<g class="axis %s" data-y="%s">`, class, num(y))
	for _, tk := range ticks {
		fmt.Fprintf(b, `<text x="%s" y="%s">%s</text>`, num(g.x(tk)), num(y), fmtDur(tk))
	}
	b.WriteString("</g>\n")
}

func (t *timeline) writeLaneLabel(b *strings.Builder, l *lane, top float64) {
	maxName := int((t.g.labelW - 16) / nameCharW)
	name := truncate(l.name, maxName)
	class := "lane-name"
	if l.pending {
		class += " pending-name"
	}
	fmt.Fprintf(b, `<text class="%s" x="8" y="%s"><title>%s</title>%s</text>`+"\n", class, num(top+17), esc(l.name), esc(name))
	for i, s := range l.subLabels() {
		class := "lane-sub"
		if strings.HasSuffix(s, " not drawn") {
			class += " hidden-count"
		}
		fmt.Fprintf(b, `<text class="%s" x="8" y="%s">%s</text>`+"\n", class, num(top+31+float64(12*i)), esc(truncate(s, int((t.g.labelW-16)/6.2))))
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// shortName is a pod's name without its namespace.
func shortName(pod string) string {
	if i := strings.IndexByte(pod, '/'); i >= 0 {
		return pod[i+1:]
	}
	return pod
}

// fitLabel finds room for the first candidate text that fits inside [x0,
// x1] without covering any of the marks, else for the last candidate
// shortened in the middle to no less than minLabel characters. It returns
// where the text starts and the text, or "" when nothing fits.
func fitLabel(cands []string, x0, x1 float64, marks []float64) (float64, string) {
	regions := [][2]float64{{x0 + 4, x1 - 4}}
	for _, m := range marks {
		var next [][2]float64
		for _, r := range regions {
			if m <= r[0]-7 || m >= r[1]+7 {
				next = append(next, r)
				continue
			}
			next = append(next, [2]float64{r[0], m - 7}, [2]float64{m + 7, r[1]})
		}
		regions = next
	}
	for _, c := range cands {
		w := float64(len([]rune(c))) * charW
		for _, r := range regions {
			if r[1]-r[0] >= w {
				return r[0], c
			}
		}
	}
	widest := [2]float64{}
	for _, r := range regions {
		if r[1]-r[0] > widest[1]-widest[0] {
			widest = r
		}
	}
	if n := int((widest[1] - widest[0]) / charW); n >= minLabel && len(cands) > 0 {
		return widest[0], ellipsize(cands[len(cands)-1], n)
	}
	return 0, ""
}

// minLabel is the fewest characters a shortened label keeps.
const minLabel = 8

// ellipsize shortens s to n runes by cutting its middle, keeping the end
// (where generated pod names differ) a little longer than the start.
func ellipsize(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	tail := n / 2
	head := n - 1 - tail
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// writeLabel writes a bar's label at x, or an empty one (that the page's
// script may fill when zoomed in) when none fits; a and b are the bar's
// times, cands the labels to try, longest first.
func writeLabel(b *strings.Builder, x, barY, a, bt float64, text string, cands []string, class, fill string) {
	attrs := fmt.Sprintf(`class="%s" x="%s" y="%s" data-a="%s" data-b="%s" data-labels="%s"`, class, num(x), num(barY+barH/2+3.8), secNum(a), secNum(bt), esc(strings.Join(cands, "|")))
	if fill != "" {
		attrs += ` fill="` + fill + `"`
	}
	if text == "" {
		fmt.Fprintf(b, `<text %s display="none"></text>`, attrs)
		return
	}
	fmt.Fprintf(b, `<text %s>%s</text>`, attrs, esc(text))
}

func writePod(b *strings.Builder, c *svgContext, g geometry, it *item, y float64) {
	p := it.pod
	sw := c.colors[p.Priority]
	// The running part ends when the pod starts terminating (or finishes);
	// the termination period is striped.
	stop := podEnd(p, g.end)
	if p.Terminating != nil && *p.Terminating < stop {
		stop = *p.Terminating
	}
	stop = math.Max(stop, it.a)
	xs := math.Max(g.x(stop), it.x0)
	fmt.Fprintf(b, `<g class="pod" data-pod="%s"><title>%s</title>`, esc(p.Pod), esc(podTooltip(c, p, g.end)))
	if xs > it.x0 {
		fmt.Fprintf(b, `<rect class="run" %s y="%s" height="%d" fill="%s" stroke="%s"/>`,
			spanAttrs(g, it.a, stop, 1), num(y), barH, sw.Fill, sw.Base)
	}
	if it.x1-xs > 0.5 {
		fmt.Fprintf(b, `<rect class="grace" %s y="%s" height="%d" fill="url(#%sgrace%d)" stroke="%s"/>`,
			spanAttrs(g, stop, it.b, 1), num(y), barH, c.id, sw.index, sw.Base)
	}
	var marks []float64
	if p.Preempted != nil {
		marks = append(marks, g.x(*p.Preempted))
	}
	cands := []string{p.Pod, shortName(p.Pod)}
	x, text := fitLabel(cands, it.x0, it.x1, marks)
	writeLabel(b, x, y, it.a, it.b, text, cands, "bar-label", "")
	if p.Preempted != nil {
		d := fmt.Sprintf("M-4 %sl8 8m0 -8l-8 8", num(y+barH/2-4))
		fmt.Fprintf(b, `<g class="mark" transform="translate(%s 0)" data-t="%s"><path class="preempt-halo" d="%s"/><path class="preempt" d="%s"/></g>`, num(marks[0]), secNum(*p.Preempted), d, d)
	}
	b.WriteString("</g>\n")
}

func podTooltip(c *svgContext, p *sim.PodHistory, end float64) string {
	lines := []string{p.Pod, priorityText(p.Priority, c.classes)}
	if p.Replacement {
		lines = append(lines, "replacement for a preempted pod")
	}
	lines = append(lines, "node "+p.Node)
	if p.Bound != nil {
		lines = append(lines, fmt.Sprintf("created %s, bound %s (waited %s)", fmtClock(p.Created), fmtClock(*p.Bound), fmtDur(*p.Bound-p.Created)))
	}
	if p.Preempted != nil {
		s := "preempted at " + fmtClock(*p.Preempted)
		if by := c.preemptors[p.Pod]; len(by) > 0 {
			s += " by " + strings.Join(by, ", ")
		}
		lines = append(lines, s)
	}
	if p.Terminating != nil {
		s := "terminating from " + fmtClock(*p.Terminating)
		if p.Gone != nil {
			s += fmt.Sprintf(", gone at %s (after %s)", fmtClock(*p.Gone), fmtDur(*p.Gone-*p.Terminating))
		} else {
			s += ", still terminating at the end"
		}
		lines = append(lines, s)
	} else if p.Gone != nil {
		lines = append(lines, "gone at "+fmtClock(*p.Gone))
	}
	if p.Finished != nil {
		lines = append(lines, "finished at "+fmtClock(*p.Finished))
	}
	if p.Gone == nil && p.Finished == nil && p.Terminating == nil {
		lines = append(lines, "running at the end ("+fmtClock(end)+")")
	}
	return strings.Join(lines, "\n")
}

func priorityText(p int32, classes map[int32][]string) string {
	s := fmt.Sprintf("priority %d", p)
	if names := classes[p]; len(names) > 0 {
		s += " (" + strings.Join(names, ", ") + ")"
	}
	return s
}

func outcomeColor(outcome string) string {
	switch outcome {
	case "bound":
		return colorBound
	case "lost":
		return colorLost
	}
	return colorOpen
}

func writeNomination(b *strings.Builder, g geometry, it *item, y float64) {
	n, p := it.nom, it.pod
	col := outcomeColor(n.Outcome)
	to := "the end"
	if n.To != nil {
		to = fmtClock(*n.To)
	}
	tip := fmt.Sprintf("%s nominated to %s\nfrom %s to %s\noutcome: %s", p.Pod, n.Node, fmtClock(n.From), to, outcomeText(n.Outcome))
	fmt.Fprintf(b, `<g class="nom nom-%s" data-pod="%s"><title>%s</title>`, esc(n.Outcome), esc(p.Pod), esc(tip))
	x0 := it.x0 + 0.75
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%d" data-a="%s" data-b="%s" data-gap="2.5" data-dx="0.75" fill="%s" stroke="%s"/>`,
		num(x0), num(y+0.75), num(math.Max(it.x1-it.x0-2.5, 1)), barH-1, secNum(it.a), secNum(it.b), mix(col, 0.07), col)
	cands := []string{"nominated: " + p.Pod, "nom: " + p.Pod, "nom: " + shortName(p.Pod), shortName(p.Pod)}
	if n.Outcome == "lost" {
		cands = []string{"nomination lost: " + p.Pod, "lost: " + p.Pod, "lost: " + shortName(p.Pod), "lost"}
	}
	x, text := fitLabel(cands, it.x0, it.x1, nil)
	if text == "" && n.Outcome == "lost" && it.x1-it.x0 >= 20 {
		x, text = it.x0+3, "✕"
	}
	writeLabel(b, x, y, it.a, it.b, text, cands, "nom-label", col)
	b.WriteString("</g>\n")
}

// outcomeText says what a nomination's outcome means.
func outcomeText(outcome string) string {
	switch outcome {
	case "bound":
		return "bound (the pod got the node)"
	case "lost":
		return "lost (cleared, or another pod took the room)"
	}
	return "open at the end"
}

func writeWait(b *strings.Builder, c *svgContext, g geometry, it *item, y float64) {
	p := it.pod
	sw := c.colors[p.Priority]
	var tip string
	switch {
	case p.Bound != nil:
		tip = fmt.Sprintf("%s\n%s\npending from %s, bound to %s at %s (waited %s)", p.Pod, priorityText(p.Priority, c.classes), fmtClock(p.Created), p.Node, fmtClock(*p.Bound), fmtDur(*p.Bound-p.Created))
	case p.Gone != nil:
		tip = fmt.Sprintf("%s\n%s\npending from %s, deleted at %s", p.Pod, priorityText(p.Priority, c.classes), fmtClock(p.Created), fmtClock(*p.Gone))
	default:
		tip = fmt.Sprintf("%s\n%s\npending from %s, still pending at the end (%s)", p.Pod, priorityText(p.Priority, c.classes), fmtClock(p.Created), fmtDur(g.end-p.Created))
	}
	if p.Replacement {
		tip += "\nreplacement for a preempted pod"
	}
	fmt.Fprintf(b, `<g class="wait" data-pod="%s"><title>%s</title>`, esc(p.Pod), esc(tip))
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%d" data-a="%s" data-b="%s" data-gap="2" data-dx="0.5" fill="%s" stroke="%s"/>`,
		num(it.x0+0.5), num(y+0.5), num(math.Max(it.x1-it.x0-2, 1)), barH-1, secNum(it.a), secNum(it.b), mix(sw.Base, 0.12), sw.Base)
	cands := []string{p.Pod, shortName(p.Pod)}
	x, text := fitLabel(cands, it.x0, it.x1, nil)
	writeLabel(b, x, y, it.a, it.b, text, cands, "bar-label", "")
	b.WriteString("</g>\n")
}

func writeNodeMark(b *strings.Builder, g geometry, t, top, h float64, color, tip string) {
	fmt.Fprintf(b, `<g class="node-mark" transform="translate(%s 0)" data-t="%s"><title>%s</title><line x1="0" y1="%s" x2="0" y2="%s" stroke="%s"/><path d="M-5 %sh10l-5 7z" fill="%s"/></g>`+"\n",
		num(g.x(t)), secNum(t), esc(tip), num(top), num(top+h), color, num(top), color)
}
