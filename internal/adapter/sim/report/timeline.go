package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/reprieve/reprieve/internal/adapter/sim"
)

// Geometry of the SVG charts, in pixels.
const (
	svgWidth = 1280
	rightPad = 30
	axisH    = 22
	rowH     = 20
	barH     = 15
	lanePad  = 4
	laneGap  = 12 // between the node lanes and the pending lane
	// charW is the advance of one character of the 11px monospace labels,
	// slightly generous so that a label judged to fit always does.
	charW = 6.8
	// nameCharW is the same for the 12px lane names.
	nameCharW = 7.4
)

// Limits beyond which the timeline leaves things out (and says so).
const (
	maxLanes = 200
	maxRows  = 30
	maxBars  = 20000
)

// geometry maps virtual time to x: the window [from, to] of the run's
// activity fills the plot; end is the run's end.
type geometry struct {
	labelW, plotW float64
	from, to, end float64
}

func (g geometry) x(t float64) float64 {
	t = math.Max(g.from, math.Min(t, g.to))
	return g.labelW + (t-g.from)/(g.to-g.from)*g.plotW
}

// span is the window's length in seconds.
func (g geometry) span() float64 { return g.to - g.from }

// zoomAttrs are the attributes by which the page's script redraws a chart
// for another window.
func (g geometry) zoomAttrs() string {
	return fmt.Sprintf(`data-label-w="%s" data-plot-w="%s" data-from="%s" data-to="%s" data-end="%s"`, num(g.labelW), num(g.plotW), secNum(g.from), secNum(g.to), secNum(g.end))
}

type itemKind int

const (
	kindNomination itemKind = iota + 1
	kindPod
	kindWait
)

// item is one bar of a lane.
type item struct {
	kind   itemKind
	pod    *sim.PodHistory
	nom    *sim.Nomination
	x0, x1 float64
	// a and b are the bar's times in seconds.
	a, b float64
	row  int
	// after is the pod's nomination on this lane that ended when it was
	// bound: the bar continues that row when it can.
	after *item
}

// lane is one swim lane: a node, or the pods waiting to be bound.
type lane struct {
	name    string
	pending bool
	lives   [][2]float64 // periods the node existed, in seconds
	added   []float64
	removed []float64
	cordons [][2]float64 // periods the node was unschedulable
	items   []*item
	pods    int // pods bound to the node
	rows    int
	hidden  int // bars left out for want of rows or of the bar budget
}

// timeline is the laid-out node timeline.
type timeline struct {
	g          geometry
	lanes      []*lane // shown node lanes, then the pending lane if any
	totalNodes int
	// ordered is set when the lanes shown are the most preempted nodes.
	ordered bool
	// Bars left out: beyond maxRows in their lane (pending: in the pending
	// lane), or beyond maxBars in all.
	hiddenRows, hiddenPending, hiddenBudget int
}

// layoutTimeline assigns bars to lanes and rows; win is the time window
// drawn, and minLabelW the least width of the lane names' column (charts
// drawn one above the other share it).
func layoutTimeline(res *sim.Result, end float64, win window, minLabelW float64) *timeline {
	lanes := nodeLanes(res, end)
	t := &timeline{totalNodes: len(lanes)}
	if len(lanes) > maxLanes {
		lanes = busiestLanes(res, lanes)
		t.ordered = true
	}
	longest := 8
	for _, l := range lanes {
		longest = max(longest, len([]rune(l.name)))
	}
	labelW := math.Max(minLabelW, math.Round(math.Max(130, math.Min(280, float64(min(longest, 36))*nameCharW+24))))
	t.g = geometry{labelW: labelW, plotW: svgWidth - labelW - rightPad, from: win.from, to: win.to, end: end}
	wait := t.placeBars(res, lanes, end, win)
	if len(wait.items) > 0 || wait.hidden > 0 {
		lanes = append(lanes, wait)
	}
	for _, l := range lanes {
		n := l.pack()
		if l.pending {
			t.hiddenPending += n
		} else {
			t.hiddenRows += n
		}
	}
	t.lanes = lanes
	return t
}

// nodeLanes returns a lane per node in the order the nodes came, with its
// lifetimes and cordons, and lanes for the nodes pods were bound or
// nominated to that the result does not list (without a recorded
// lifetime).
func nodeLanes(res *sim.Result, end float64) []*lane {
	byName := map[string]*lane{}
	var lanes []*lane
	laneFor := func(name string) *lane {
		if l := byName[name]; l != nil {
			return l
		}
		l := &lane{name: name}
		byName[name] = l
		lanes = append(lanes, l)
		return l
	}
	for _, n := range res.Nodes {
		l := laneFor(n.Name)
		to := end
		if n.Removed != nil {
			to = *n.Removed
			l.removed = append(l.removed, to)
		}
		l.lives = append(l.lives, [2]float64{n.Added, to})
		if n.Added > 0 {
			l.added = append(l.added, n.Added)
		}
	}
	// Cordons are known from the nodes' events.
	for _, e := range res.Events {
		name, ok := strings.CutPrefix(e.Object, "node/")
		l := byName[name]
		if !ok || l == nil {
			continue
		}
		at := e.Time.Seconds()
		open := len(l.cordons) > 0 && l.cordons[len(l.cordons)-1][1] < 0
		switch {
		case e.Reason == "NodeNotSchedulable" && !open:
			l.cordons = append(l.cordons, [2]float64{at, -1})
		case (e.Reason == "NodeSchedulable" || e.Reason == "RemovingNode") && open:
			l.cordons[len(l.cordons)-1][1] = at
		}
	}
	for _, l := range lanes {
		if n := len(l.cordons); n > 0 && l.cordons[n-1][1] < 0 {
			l.cordons[n-1][1] = end
		}
	}
	for i := range res.Pods {
		p := &res.Pods[i]
		if p.Bound != nil && p.Node != "" {
			laneFor(p.Node).pods++
		}
		for _, n := range p.Nominations {
			laneFor(n.Node)
		}
	}
	return lanes
}

// busiestLanes keeps maxLanes lanes: the most preempted first, then the
// most nominated, then the busiest; the rest in the order the nodes came.
func busiestLanes(res *sim.Result, lanes []*lane) []*lane {
	victims, noms := map[string]int{}, map[string]int{}
	for i := range res.Pods {
		p := &res.Pods[i]
		if p.Preempted != nil && p.Node != "" {
			victims[p.Node]++
		}
		for _, n := range p.Nominations {
			noms[n.Node]++
		}
	}
	slices.SortStableFunc(lanes, func(a, b *lane) int {
		return cmp.Or(cmp.Compare(victims[b.name], victims[a.name]), cmp.Compare(noms[b.name], noms[a.name]), cmp.Compare(b.pods, a.pods))
	})
	return lanes[:maxLanes]
}

// placeBars puts the nominations and pods inside the window on the lanes
// shown, within the bars' budget, and returns the pending lane with the
// pods' waits. The waits come after the nodes' bars, so that a crowd of
// pending pods does not use up the budget before the nodes' lanes are
// drawn.
func (t *timeline) placeBars(res *sim.Result, lanes []*lane, end float64, win window) *lane {
	shown := map[string]*lane{}
	for _, l := range lanes {
		shown[l.name] = l
	}
	budget := maxBars
	add := func(l *lane, it *item) bool {
		if it.b < win.from || it.a > win.to {
			return false // outside the window
		}
		if budget == 0 {
			l.hidden++
			t.hiddenBudget++
			return false
		}
		budget--
		it.x1 = math.Max(it.x1, it.x0+3)
		it.row = -1
		l.items = append(l.items, it)
		return true
	}
	for i := range res.Pods {
		p := &res.Pods[i]
		var bound *item
		for j := range p.Nominations {
			n := &p.Nominations[j]
			l := shown[n.Node]
			if l == nil {
				continue
			}
			to := end
			if n.To != nil {
				to = *n.To
			}
			it := &item{kind: kindNomination, pod: p, nom: n, a: n.From, b: to, x0: t.g.x(n.From), x1: t.g.x(to)}
			if add(l, it) && n.Outcome == "bound" && n.Node == p.Node {
				bound = it
			}
		}
		if p.Bound != nil {
			if l := shown[p.Node]; l != nil {
				add(l, &item{kind: kindPod, pod: p, a: *p.Bound, b: podEnd(p, end), x0: t.g.x(*p.Bound), x1: t.g.x(podEnd(p, end)), after: bound})
			}
		}
	}
	wait := &lane{name: "pending", pending: true}
	for i := range res.Pods {
		p := &res.Pods[i]
		waitEnd := end
		switch {
		case p.Bound != nil:
			waitEnd = *p.Bound
		case p.Gone != nil:
			waitEnd = *p.Gone
		}
		if waitEnd > p.Created {
			add(wait, &item{kind: kindWait, pod: p, a: p.Created, b: waitEnd, x0: t.g.x(p.Created), x1: t.g.x(waitEnd)})
		}
	}
	return wait
}

// podEnd is when a bound pod stopped occupying its node.
func podEnd(p *sim.PodHistory, end float64) float64 {
	switch {
	case p.Gone != nil:
		return *p.Gone
	case p.Finished != nil:
		return *p.Finished
	}
	return end
}

// pack places the lane's bars in rows, greedily: in order of start, each
// bar takes the first row free at its start (its nomination's row first).
// It returns how many bars found no row within maxRows.
func (l *lane) pack() int {
	slices.SortStableFunc(l.items, func(a, b *item) int { return cmp.Compare(a.x0, b.x0) })
	var rowEnd []float64
	kept := l.items[:0]
	hidden := 0
	for _, it := range l.items {
		row := -1
		if a := it.after; a != nil && a.row >= 0 && rowEnd[a.row] <= it.x0+0.01 {
			row = a.row
		}
		for r := 0; row < 0 && r < len(rowEnd); r++ {
			if rowEnd[r] <= it.x0+0.01 {
				row = r
			}
		}
		if row < 0 {
			if len(rowEnd) == maxRows {
				hidden++
				continue
			}
			row = len(rowEnd)
			rowEnd = append(rowEnd, 0)
		}
		it.row = row
		rowEnd[row] = it.x1
		kept = append(kept, it)
	}
	clear(l.items[len(kept):])
	l.items = kept
	l.rows = max(1, len(rowEnd))
	l.hidden += hidden
	return hidden
}

func (l *lane) height() float64 {
	return math.Max(float64(l.rows*rowH+2*lanePad), float64(24+12*len(l.subLabels())))
}

// subLabels are the lines under the lane's name.
func (l *lane) subLabels() []string {
	var out []string
	if l.pending {
		out = append(out, plural(len(l.items)+l.hidden, "pod")+" waited")
	} else {
		out = append(out, plural(l.pods, "pod"))
		for _, a := range l.added {
			out = append(out, "added "+fmtDur(a))
		}
		for _, c := range l.cordons {
			out = append(out, "cordoned "+fmtDur(c[0]))
		}
		for _, r := range l.removed {
			out = append(out, "removed "+fmtDur(r))
		}
	}
	if l.hidden > 0 {
		out = append(out, plural(l.hidden, "bar")+" not drawn")
	}
	return out
}

// absent returns the periods within [0, end] the node did not exist.
func (l *lane) absent(end float64) [][2]float64 {
	if len(l.lives) == 0 {
		return nil
	}
	lives := slices.Clone(l.lives)
	slices.SortFunc(lives, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
	var out [][2]float64
	at := 0.0
	for _, v := range lives {
		if v[0] > at {
			out = append(out, [2]float64{at, v[0]})
		}
		at = math.Max(at, v[1])
	}
	if at < end {
		out = append(out, [2]float64{at, end})
	}
	return out
}
